package batch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// scriptedExecutor is a fake Executor (a test double for the server): a line whose body's
// model is "ok" is answered 200 with a chat completion (7 + 3 tokens, $0.013), "bad" 400,
// "busy" a retryable 429 the first time, "wait" blocks until release is closed (or its
// context ends), "revoked" fails with ErrKeyRevoked. It counts the answers it gave per
// custom_id and remembers the calls.
type scriptedExecutor struct {
	mu       sync.Mutex
	answered map[string]int
	calls    []batch.Call
	busy     map[string]bool
	release  chan struct{}
	started  chan string // each "wait" line, as it starts
	// onAnswer, when set, runs after each answer (tests move the clock with it).
	onAnswer func(customID string)
	// limit, when above 0, is how many lines of model "ok" it answers: the next calls block
	// until their context ends (a process that stops answering), each sent on blocked as
	// it starts.
	limit    int
	admitted int
	blocked  chan string
}

func newScripted() *scriptedExecutor {
	return &scriptedExecutor{answered: map[string]int{}, busy: map[string]bool{}, release: make(chan struct{}), started: make(chan string, 100), blocked: make(chan string, 100)}
}

func (e *scriptedExecutor) Execute(ctx context.Context, c batch.Call) (batch.Answer, error) {
	var body struct {
		Model string `json:"model"`
	}
	json.Unmarshal(c.Body, &body)
	e.mu.Lock()
	e.calls = append(e.calls, c)
	stall := e.limit > 0 && e.admitted >= e.limit
	if !stall && body.Model == "ok" {
		e.admitted++
	}
	e.mu.Unlock()
	if stall {
		e.blocked <- c.CustomID
		<-ctx.Done()
		return batch.Answer{}, ctx.Err()
	}
	ans := batch.Answer{StatusCode: 200, RequestID: c.RequestID,
		Body: json.RawMessage(`{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}],` +
			`"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10,"prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"reasoning_tokens":1}},` +
			`"switchyard":{"costs":{"total_tokens_cost":0.013}}}`)}
	switch body.Model {
	case "bad":
		ans = batch.Answer{StatusCode: 400, Body: json.RawMessage(`{"error":{"message":"bad model","type":"invalid_request_error","param":"model","code":null}}`)}
	case "busy":
		e.mu.Lock()
		first := !e.busy[c.CustomID]
		e.busy[c.CustomID] = true
		e.mu.Unlock()
		if first {
			return batch.Answer{StatusCode: 429, Retryable: true, RetryAfter: time.Millisecond, Body: json.RawMessage(`{"error":{"message":"slow down"}}`)}, nil
		}
	case "wait":
		e.started <- c.CustomID
		select {
		case <-e.release:
		case <-ctx.Done():
			return batch.Answer{}, ctx.Err()
		}
	case "revoked":
		return batch.Answer{}, fmt.Errorf("authenticate: %w", batch.ErrKeyRevoked)
	}
	e.mu.Lock()
	e.answered[c.CustomID]++
	f := e.onAnswer
	e.mu.Unlock()
	if f != nil {
		f(c.CustomID)
	}
	return ans, nil
}

func (e *scriptedExecutor) answers(customID string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.answered[customID]
}

// jsonl makes a batch input: one chat request per model, custom ids r0, r1, ….
func jsonl(models ...string) []byte {
	var b bytes.Buffer
	for i, m := range models {
		fmt.Fprintf(&b, `{"custom_id":"r%d","method":"POST","url":"/v1/chat/completions","body":{"model":%q,"messages":[{"role":"user","content":"hi %d"}]}}`+"\n", i, m, i)
	}
	return b.Bytes()
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

type harness struct {
	st    *store.Store
	files *batch.Files
	svc   *batch.Service
	exec  *scriptedExecutor
}

// newHarness starts a service on st (a new in-memory store when nil) with exec.
func newHarness(t *testing.T, st *store.Store, exec *scriptedExecutor, o batch.Options) *harness {
	t.Helper()
	if st == nil {
		st = memstore.New()
		t.Cleanup(func() { st.Close() })
	}
	files, err := batch.NewFiles(st, batch.FilesOptions{Clock: o.Clock, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	o.Executor, o.Logger = exec, quiet()
	svc, err := batch.New(st, files, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(context.Background()) })
	return &harness{st: st, files: files, svc: svc, exec: exec}
}

func (h *harness) upload(t *testing.T, owner string, content []byte) batch.File {
	t.Helper()
	f, err := h.files.Upload(context.Background(), owner, batch.Upload{Filename: "in.jsonl", Purpose: batch.PurposeBatch, Content: bytes.NewReader(content)})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (h *harness) create(t *testing.T, owner string, fileID string) batch.Batch {
	t.Helper()
	b, err := h.svc.Create(context.Background(), owner, "cred-"+owner, batch.CreateRequest{InputFileID: fileID, Endpoint: "/v1/chat/completions", CompletionWindow: "24h"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wait polls the batch until done says so (10 s at most: a bound on a hang, not a timing).
func (h *harness) wait(t *testing.T, owner, id string, done func(batch.Batch) bool) batch.Batch {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := h.svc.Get(context.Background(), owner, id)
		if err != nil {
			t.Fatal(err)
		}
		if done(b) {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("batch %s still %s: %+v", id, b.Status, b.RequestCounts)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func ended(b batch.Batch) bool {
	switch b.Status {
	case batch.StatusCompleted, batch.StatusFailed, batch.StatusExpired, batch.StatusCancelled:
		return true
	}
	return false
}

// lines reads file id of owner as output lines.
func (h *harness) lines(t *testing.T, owner string, id *string) []batch.OutputLine {
	t.Helper()
	if id == nil {
		return nil
	}
	f, rc, err := h.files.Open(context.Background(), owner, *id)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if f.Purpose != batch.PurposeBatchOutput {
		t.Fatalf("purpose %q", f.Purpose)
	}
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != f.Bytes {
		t.Fatalf("read %d bytes of a %d-byte file", len(b), f.Bytes)
	}
	var out []batch.OutputLine
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ol batch.OutputLine
		if err := json.Unmarshal([]byte(l), &ol); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, ol)
	}
	return out
}

func customIDs(ls []batch.OutputLine) string {
	var ids []string
	for _, l := range ls {
		ids = append(ids, l.CustomID)
	}
	return strings.Join(ids, ",")
}

// TestBatchAnswersEveryLine: every line is sent once, as the batch's key, to the batch's
// endpoint; 2xx answers go to the output file and the others to the error file, in input
// order, in OpenAI's line shape; a streamed line is refused with a 400 naming stream; a
// retryable 429 is sent again; counts, usage and cost add up; the input file is held while
// the batch runs.
func TestBatchAnswersEveryLine(t *testing.T) {
	exec := newScripted()
	h := newHarness(t, nil, exec, batch.Options{Concurrency: 3})
	in := jsonl("ok", "bad", "ok", "busy", "ok")
	in = append(in, []byte(`{"custom_id":"s","method":"POST","url":"/v1/chat/completions","body":{"model":"ok","stream":true}}`+"\n\n")...)
	f := h.upload(t, "alice", in)
	b := h.create(t, "alice", f.ID)
	if b.Status != batch.StatusValidating || b.RequestCounts.Total != 6 || b.Object != "batch" || !strings.HasPrefix(b.ID, "batch_") ||
		b.CompletionWindow != "24h" || b.ExpiresAt == nil || *b.ExpiresAt-b.CreatedAt != 86400 {
		t.Fatalf("created %+v", b)
	}
	b = h.wait(t, "alice", b.ID, ended)
	if b.Status != batch.StatusCompleted || b.RequestCounts != (batch.RequestCounts{Total: 6, Completed: 4, Failed: 2}) {
		t.Fatalf("ended %s %+v", b.Status, b.RequestCounts)
	}
	if b.InProgressAt == nil || b.FinalizingAt == nil || b.CompletedAt == nil || b.FailedAt != nil {
		t.Fatalf("times %+v", b)
	}
	wantUsage := batch.Usage{InputTokens: 28, OutputTokens: 12, TotalTokens: 40,
		InputTokensDetails: batch.InputTokenDetails{CachedTokens: 8}, OutputTokensDetails: batch.OutputTokenDetails{ReasoningTokens: 4}}
	if b.Usage != wantUsage || b.Switchyard == nil || fmt.Sprintf("%.3f", b.Switchyard.CostUSD) != "0.052" {
		t.Fatalf("usage %+v cost %+v", b.Usage, b.Switchyard)
	}
	out := h.lines(t, "alice", b.OutputFileID)
	if got := customIDs(out); got != "r0,r2,r3,r4" {
		t.Fatalf("output lines %s", got)
	}
	for _, l := range out {
		if l.Response == nil || l.Response.StatusCode != 200 || l.Error != nil || !strings.HasPrefix(l.ID, "batch_req_") ||
			l.Response.RequestID != l.ID || !strings.Contains(string(l.Response.Body), `"chat.completion"`) {
			t.Fatalf("output line %+v", l)
		}
	}
	errs := h.lines(t, "alice", b.ErrorFileID)
	if got := customIDs(errs); got != "r1,s" {
		t.Fatalf("error lines %s", got)
	}
	if errs[0].Response.StatusCode != 400 || errs[1].Response.StatusCode != 400 || !strings.Contains(string(errs[1].Response.Body), `"param":"stream"`) {
		t.Fatalf("error lines %s / %s", errs[0].Response.Body, errs[1].Response.Body)
	}
	for _, id := range []string{"r0", "r1", "r2", "r4"} {
		if n := exec.answers(id); n != 1 {
			t.Fatalf("%s answered %d times", id, n)
		}
	}
	if exec.answers("s") != 0 {
		t.Fatal("a streamed line was sent")
	}
	for _, c := range exec.calls {
		if c.Owner != "alice" || c.Credential != "cred-alice" || c.URL != "/v1/chat/completions" || c.BatchID != b.ID {
			t.Fatalf("call %+v", c)
		}
	}
	// The input is released: it can be deleted now.
	if err := h.files.Delete(context.Background(), "alice", f.ID); err != nil {
		t.Fatal(err)
	}
	// Another owner sees none of it.
	if _, err := h.svc.Get(context.Background(), "bob", b.ID); !errors.Is(err, batch.ErrNotFound) {
		t.Fatalf("bob reads alice's batch: %v", err)
	}
	if _, _, err := h.files.Open(context.Background(), "bob", *b.OutputFileID); !errors.Is(err, batch.ErrNotFound) {
		t.Fatalf("bob reads alice's output: %v", err)
	}
}

// TestBatchCancel: a running batch becomes cancelling, sends no more lines, lets the lines
// in flight finish and keeps their answers, then ends cancelled; a cancelled or unstarted
// batch; an ended batch cannot be cancelled.
func TestBatchCancel(t *testing.T) {
	exec := newScripted()
	h := newHarness(t, nil, exec, batch.Options{Concurrency: 2})
	f := h.upload(t, "alice", jsonl("wait", "wait", "ok", "ok", "ok"))
	b := h.create(t, "alice", f.ID)
	<-exec.started
	<-exec.started
	c, err := h.svc.Cancel(context.Background(), "alice", b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != batch.StatusCancelling || c.CancellingAt == nil {
		t.Fatalf("cancel answered %s", c.Status)
	}
	if err := h.files.Delete(context.Background(), "alice", f.ID); !errors.Is(err, batch.ErrConflict) {
		t.Fatalf("deleting a running batch's input: %v", err)
	}
	close(exec.release)
	b = h.wait(t, "alice", b.ID, ended)
	if b.Status != batch.StatusCancelled || b.CancelledAt == nil || b.RequestCounts != (batch.RequestCounts{Total: 5, Completed: 2}) {
		t.Fatalf("ended %s %+v", b.Status, b.RequestCounts)
	}
	if got := customIDs(h.lines(t, "alice", b.OutputFileID)); got != "r0,r1" {
		t.Fatalf("output %s", got)
	}
	if b.ErrorFileID != nil {
		t.Fatalf("a cancelled batch's unsent lines went to an error file %s", *b.ErrorFileID)
	}
	for _, id := range []string{"r2", "r3", "r4"} {
		if exec.answers(id) != 0 {
			t.Fatalf("%s was sent after the cancel", id)
		}
	}
	if _, err := h.svc.Cancel(context.Background(), "alice", b.ID); !errors.Is(err, batch.ErrConflict) {
		t.Fatalf("cancel a cancelled batch: %v", err)
	}
	if _, err := h.svc.Cancel(context.Background(), "bob", b.ID); !errors.Is(err, batch.ErrNotFound) {
		t.Fatalf("bob cancels alice's batch: %v", err)
	}
}

// TestBatchCancelBeforeStart: a batch no worker took ends cancelled at once.
func TestBatchCancelBeforeStart(t *testing.T) {
	exec := newScripted()
	h := newHarness(t, nil, exec, batch.Options{Concurrency: 1, Workers: 1})
	f1 := h.upload(t, "alice", jsonl("wait"))
	first := h.create(t, "alice", f1.ID) // takes the only worker
	<-exec.started
	f2 := h.upload(t, "alice", jsonl("ok"))
	queued := h.create(t, "alice", f2.ID)
	c, err := h.svc.Cancel(context.Background(), "alice", queued.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != batch.StatusCancelled || c.CancelledAt == nil || c.OutputFileID != nil {
		t.Fatalf("cancelled before it started: %+v", c)
	}
	close(exec.release)
	h.wait(t, "alice", first.ID, ended)
	if exec.answers("r0") != 1 { // only the first batch's line
		t.Fatalf("answers %v", exec.answered)
	}
	if err := h.files.Delete(context.Background(), "alice", f2.ID); err != nil {
		t.Fatalf("the cancelled batch still holds its input: %v", err)
	}
}

// TestBatchExpires: a batch whose completion window ends while it runs expires with what it
// has: the answered lines in the output file, the others in the error file as
// batch_expired.
func TestBatchExpires(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	exec := newScripted()
	exec.onAnswer = func(id string) {
		if id == "r1" {
			mu.Lock()
			now = now.Add(25 * time.Hour)
			mu.Unlock()
		}
	}
	h := newHarness(t, nil, exec, batch.Options{Concurrency: 1, Clock: clock})
	f := h.upload(t, "alice", jsonl("ok", "ok", "ok", "ok"))
	b := h.create(t, "alice", f.ID)
	b = h.wait(t, "alice", b.ID, ended)
	if b.Status != batch.StatusExpired || b.ExpiredAt == nil || b.RequestCounts != (batch.RequestCounts{Total: 4, Completed: 2, Failed: 2}) {
		t.Fatalf("ended %s %+v", b.Status, b.RequestCounts)
	}
	if got := customIDs(h.lines(t, "alice", b.OutputFileID)); got != "r0,r1" {
		t.Fatalf("output %s", got)
	}
	errs := h.lines(t, "alice", b.ErrorFileID)
	if got := customIDs(errs); got != "r2,r3" {
		t.Fatalf("errors %s", got)
	}
	if errs[0].Response != nil || errs[0].Error == nil || errs[0].Error.Code != "batch_expired" {
		t.Fatalf("expired line %+v", errs[0])
	}
}

// TestBatchKeyRevoked: when the key that created the batch stops authenticating, the run
// stops and the batch fails, its error naming the key, with every line not yet answered in
// the error file (code api_key_revoked) and the answered ones kept.
func TestBatchKeyRevoked(t *testing.T) {
	exec := newScripted()
	h := newHarness(t, nil, exec, batch.Options{Concurrency: 1})
	f := h.upload(t, "alice", jsonl("ok", "ok", "revoked", "ok", "ok"))
	b := h.create(t, "alice", f.ID)
	b = h.wait(t, "alice", b.ID, ended)
	if b.Status != batch.StatusFailed || b.FailedAt == nil || b.Errors == nil || b.Errors.Data[0].Code != "api_key_revoked" ||
		b.RequestCounts != (batch.RequestCounts{Total: 5, Completed: 2, Failed: 3}) {
		t.Fatalf("ended %s %+v %+v", b.Status, b.RequestCounts, b.Errors)
	}
	errs := h.lines(t, "alice", b.ErrorFileID)
	if got := customIDs(errs); got != "r2,r3,r4" {
		t.Fatalf("errors %s", got)
	}
	if errs[0].Error == nil || errs[0].Error.Code != "api_key_revoked" || !strings.Contains(errs[0].Error.Message, "API key") {
		t.Fatalf("line %+v", errs[0])
	}
	if exec.answers("r3") != 0 || exec.answers("r4") != 0 {
		t.Fatal("lines were sent after the key was revoked")
	}
}

// TestBatchCreateChecks: every field of a create request is checked, naming it; a line
// whose url is not the endpoint is named; another owner's file is refused.
func TestBatchCreateChecks(t *testing.T) {
	h := newHarness(t, nil, newScripted(), batch.Options{})
	f := h.upload(t, "alice", jsonl("ok"))
	mixed := append(jsonl("ok"), []byte(`{"custom_id":"e","method":"POST","url":"/v1/embeddings","body":{"model":"m","input":"x"}}`+"\n")...)
	fm := h.upload(t, "alice", mixed)
	long := strings.Repeat("k", 65)
	many := map[string]string{}
	for i := range 17 {
		many[fmt.Sprint(i)] = "v"
	}
	for _, c := range []struct {
		req         batch.CreateRequest
		param, text string
	}{
		{batch.CreateRequest{Endpoint: "/v1/chat/completions", CompletionWindow: "24h"}, "input_file_id", "required"},
		{batch.CreateRequest{InputFileID: f.ID, Endpoint: "/v1/images/generations", CompletionWindow: "24h"}, "endpoint", "/v1/moderations"},
		{batch.CreateRequest{InputFileID: f.ID, Endpoint: "/v1/chat/completions", CompletionWindow: "1h"}, "completion_window", `"24h"`},
		{batch.CreateRequest{InputFileID: f.ID, Endpoint: "/v1/chat/completions", CompletionWindow: "24h", Metadata: many}, "metadata", "16 pairs"},
		{batch.CreateRequest{InputFileID: f.ID, Endpoint: "/v1/chat/completions", CompletionWindow: "24h", Metadata: map[string]string{long: "v"}}, "metadata", "64 characters"},
		{batch.CreateRequest{InputFileID: f.ID, Endpoint: "/v1/chat/completions", CompletionWindow: "24h", Metadata: map[string]string{"k": strings.Repeat("v", 513)}}, "metadata", "512"},
		{batch.CreateRequest{InputFileID: f.ID, Endpoint: "/v1/chat/completions", CompletionWindow: "24h", OutputExpiresAfter: &batch.ExpiresAfter{Anchor: "created_at", Seconds: 60}}, "output_expires_after", "3600"},
		{batch.CreateRequest{InputFileID: f.ID, Endpoint: "/v1/chat/completions", CompletionWindow: "24h", OutputExpiresAfter: &batch.ExpiresAfter{Anchor: "now", Seconds: 3600}}, "output_expires_after", "anchor"},
		{batch.CreateRequest{InputFileID: "file-nope", Endpoint: "/v1/chat/completions", CompletionWindow: "24h"}, "input_file_id", "no file"},
		{batch.CreateRequest{InputFileID: fm.ID, Endpoint: "/v1/chat/completions", CompletionWindow: "24h"}, "input_file_id", `line 2: the request's url is "/v1/embeddings"`},
	} {
		_, err := h.svc.Create(context.Background(), "alice", "c", c.req)
		var ve *batch.ValidationError
		if !errors.As(err, &ve) || ve.Param != c.param || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%+v: %v (param %v), want %s naming %q", c.req, err, ve, c.param, c.text)
		}
	}
	if _, err := h.svc.Create(context.Background(), "bob", "c", batch.CreateRequest{InputFileID: f.ID, Endpoint: "/v1/chat/completions", CompletionWindow: "24h"}); err == nil || !strings.Contains(err.Error(), "no file") {
		t.Fatalf("bob made a batch of alice's file: %v", err)
	}
}

// TestBatchList: newest first, limit and after page through, has_more says when more is
// left, another owner's are not listed.
func TestBatchList(t *testing.T) {
	h := newHarness(t, nil, newScripted(), batch.Options{})
	f := h.upload(t, "alice", jsonl("ok"))
	var ids []string
	for range 5 {
		ids = append([]string{h.create(t, "alice", f.ID).ID}, ids...)
	}
	h.create(t, "bob", h.upload(t, "bob", jsonl("ok")).ID)
	var got []string
	after := ""
	for {
		page, err := h.svc.List(context.Background(), "alice", after, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Data {
			got = append(got, b.ID)
		}
		if !page.HasMore {
			break
		}
		after = page.LastID
	}
	if strings.Join(got, ",") != strings.Join(ids, ",") {
		t.Fatalf("listed %v, want %v", got, ids)
	}
	if _, err := h.svc.List(context.Background(), "alice", "", 101); err == nil {
		t.Fatal("limit 101 accepted")
	}
}

var _ = http.StatusOK

// TestJobStats: batches reach the jobs metrics as jobs: an ended one with its state and run
// time.
func TestJobStats(t *testing.T) {
	h := newHarness(t, nil, newScripted(), batch.Options{})
	f := h.upload(t, "alice", jsonl("ok", "ok"))
	b := h.wait(t, "alice", h.create(t, "alice", f.ID).ID, ended)
	stats, err := h.svc.JobStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 1 || stats[0].ID != b.ID || stats[0].State != "completed" || stats[0].Finished.IsZero() {
		t.Fatalf("job stats %+v", stats)
	}
}
