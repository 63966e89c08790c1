package batch_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// fakeOutageExecutor is a test fake of the gateway during an outage, by the line's model:
// "flaky" answers a retryable 503 to its first three sends, then 200; "gone" a retryable
// 503 to every send; "final" a 502 that says not to retry (x-should-retry: false: the
// gateway already retried and fell back); "billed" a retryable 500 whose upstream call was
// billed; "ok" 200. first receives each line's first send.
type fakeOutageExecutor struct {
	mu    sync.Mutex
	sends map[string]int
	first chan string
}

func (e *fakeOutageExecutor) Execute(ctx context.Context, c batch.Call) (batch.Answer, error) {
	var body struct {
		Model string `json:"model"`
	}
	json.Unmarshal(c.Body, &body)
	e.mu.Lock()
	e.sends[c.CustomID]++
	n := e.sends[c.CustomID]
	e.mu.Unlock()
	if n == 1 {
		e.first <- c.CustomID
	}
	unavailable := batch.Answer{StatusCode: 503, RequestID: c.RequestID, Retryable: true, RetryAfter: time.Second,
		Body: json.RawMessage(`{"error":{"message":"the key store does not answer (its database may be restarting); retry shortly","type":"server_error"}}`)}
	ok := batch.Answer{StatusCode: 200, RequestID: c.RequestID,
		Body: json.RawMessage(`{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`)}
	switch {
	case body.Model == "flaky" && n <= 3, body.Model == "gone":
		return unavailable, nil
	case body.Model == "billed":
		return batch.Answer{StatusCode: 500, RequestID: c.RequestID, Retryable: true, Billed: true,
			Body: json.RawMessage(`{"error":{"message":"the write after the answer failed","type":"server_error"}}`)}, nil
	case body.Model == "timeout":
		// The gateway's final 502 after its calls timed out, every model out of service
		// for the while (retryable, as the server marks it).
		return batch.Answer{StatusCode: 502, RequestID: c.RequestID, Retryable: true, TimedOut: true,
			Body: json.RawMessage(`{"error":{"message":"every model failed: timeout","type":"api_error","code":"upstream_error"}}`)}, nil
	case body.Model == "final":
		return batch.Answer{StatusCode: 502, RequestID: c.RequestID, Body: json.RawMessage(`{"error":{"message":"every model failed","type":"api_error","code":"upstream_error"}}`)}, nil
	}
	return ok, nil
}

func (e *fakeOutageExecutor) count(customID string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sends[customID]
}

// newOutageHarness starts a service on a new in-memory store with a fakeOutageExecutor.
func newOutageHarness(t *testing.T, maxWait time.Duration) (*harness, *fakeOutageExecutor) {
	t.Helper()
	return newOutageHarnessWith(t, batch.Options{MaxRetryWait: maxWait})
}

// newOutageHarnessWith is newOutageHarness with more of o (its Executor, Logger and
// Concurrency are the harness's).
func newOutageHarnessWith(t *testing.T, o batch.Options) (*harness, *fakeOutageExecutor) {
	t.Helper()
	exec := &fakeOutageExecutor{sends: map[string]int{}, first: make(chan string, 100)}
	st := memstore.New()
	t.Cleanup(func() { st.Close() })
	files, err := batch.NewFiles(st, batch.FilesOptions{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	o.Executor, o.Logger, o.Concurrency = exec, quiet(), 4
	svc, err := batch.New(st, files, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(context.Background()) })
	return &harness{st: st, files: files, svc: svc}, exec
}

// TestBatchRetriesServerErrors: a line answered 503 during an outage (the store
// restarting under the replica) was kept as its final answer, in the error file, though a
// retry a second later would have been answered; only a 429 was sent again. A retryable
// server error is now sent again with a backoff, at most 6 times: a line whose outage
// passes is answered, one whose outage lasts keeps its last 503 (status and body, in the
// error file) after 7 sends, and an answer that says not to retry is kept at once, as is a
// server error after a billed upstream call (sending it again would pay for it again).
func TestBatchRetriesServerErrors(t *testing.T) {
	h, exec := newOutageHarness(t, time.Millisecond) // waits cut short: the count of sends is what is tested
	b := h.create(t, "alice", h.upload(t, "alice", jsonl("flaky", "gone", "final", "ok", "billed")).ID)
	b = h.wait(t, "alice", b.ID, ended)
	if b.Status != batch.StatusCompleted || b.RequestCounts != (batch.RequestCounts{Total: 5, Completed: 2, Failed: 3}) {
		t.Fatalf("ended %s %+v", b.Status, b.RequestCounts)
	}
	for id, want := range map[string]int{"r0": 4, "r1": 7, "r2": 1, "r3": 1, "r4": 1} {
		if got := exec.count(id); got != want {
			t.Errorf("line %s sent %d times, want %d", id, got, want)
		}
	}
	if got := customIDs(h.lines(t, "alice", b.OutputFileID)); got != "r0,r3" {
		t.Fatalf("output file lines %s, want r0,r3", got)
	}
	errs := h.lines(t, "alice", b.ErrorFileID)
	if got := customIDs(errs); got != "r1,r2,r4" {
		t.Fatalf("error file lines %s, want r1,r2,r4", got)
	}
	if r := errs[0].Response; r == nil || r.StatusCode != 503 || !strings.Contains(string(r.Body), "key store does not answer") || errs[0].Error != nil {
		t.Fatalf("the line whose outage lasted: %+v, want its last 503 answer", errs[0])
	}
	if r := errs[1].Response; r == nil || r.StatusCode != 502 {
		t.Fatalf("the line answered not to retry: %+v, want its 502", errs[1])
	}
}

// TestBatchCancelEndsServerErrorRetry: a batch cancelled while a line waits to be sent
// again after a server error ends cancelled at once, the line not sent again (before, the
// 503 was the line's answer and the batch completed).
func TestBatchCancelEndsServerErrorRetry(t *testing.T) {
	h, exec := newOutageHarness(t, time.Hour)
	b := h.create(t, "alice", h.upload(t, "alice", jsonl("gone")).ID)
	<-exec.first
	if _, err := h.svc.Cancel(context.Background(), "alice", b.ID); err != nil {
		t.Fatal(err)
	}
	b = h.wait(t, "alice", b.ID, ended)
	if b.Status != batch.StatusCancelled || exec.count("r0") != 1 {
		t.Fatalf("ended %s %+v after %d sends, want cancelled after 1", b.Status, b.RequestCounts, exec.count("r0"))
	}
}

// TestBatchTimedOutLineSentTwice: a line whose upstream calls always time out (the
// gateway's retryable 502 after them) was sent 7 times, as any retryable server error,
// each send waiting out the timeouts and perhaps billed by a provider that answered late.
// It is now sent at most MaxTimeoutRetries+1 times: twice by default, as set, once when
// negative; a line failing otherwise still gets its 7.
func TestBatchTimedOutLineSentTwice(t *testing.T) {
	for _, c := range []struct {
		retries, want int
	}{{0, 2}, {2, 3}, {-1, 1}, {100, 7}} {
		h, exec := newOutageHarnessWith(t, batch.Options{MaxRetryWait: time.Millisecond, MaxTimeoutRetries: c.retries})
		b := h.create(t, "alice", h.upload(t, "alice", jsonl("timeout", "gone")).ID)
		b = h.wait(t, "alice", b.ID, ended)
		if b.Status != batch.StatusCompleted || b.RequestCounts != (batch.RequestCounts{Total: 2, Failed: 2}) {
			t.Fatalf("MaxTimeoutRetries %d: ended %s %+v", c.retries, b.Status, b.RequestCounts)
		}
		if got := exec.count("r0"); got != c.want {
			t.Errorf("MaxTimeoutRetries %d: the line timing out was sent %d times, want %d", c.retries, got, c.want)
		}
		if got := exec.count("r1"); got != 7 {
			t.Errorf("MaxTimeoutRetries %d: the line answered 503 was sent %d times, want 7", c.retries, got)
		}
		errs := h.lines(t, "alice", b.ErrorFileID)
		if r := errs[0].Response; r == nil || r.StatusCode != 502 || !strings.Contains(string(r.Body), "timeout") {
			t.Errorf("MaxTimeoutRetries %d: the line timing out kept %+v, want its last 502", c.retries, errs[0])
		}
	}
}
