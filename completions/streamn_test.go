package completions

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// chanProvider streams what the test feeds each of its streams, in the order the test
// feeds it: each Stream call is announced on opened. openErr, when set, fails the k-th
// call (1-based) at once.
type chanProvider struct {
	calls   atomic.Int32
	opened  chan *chanStream
	openErr func(k int) error
}

func newChanProvider() *chanProvider { return &chanProvider{opened: make(chan *chanStream, 32)} }

func (p *chanProvider) Name() string { return "c" }
func (p *chanProvider) Complete(context.Context, *providers.Request) (*providers.Response, error) {
	return nil, errors.New("streamed only")
}
func (p *chanProvider) Stream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	k := int(p.calls.Add(1))
	if p.openErr != nil {
		if err := p.openErr(k); err != nil {
			return nil, err
		}
	}
	s := &chanStream{ctx: ctx, ch: make(chan chanItem, 32), k: k}
	p.opened <- s
	return s, nil
}

type chanItem struct {
	c   providers.Chunk
	err error
}

type chanStream struct {
	ctx    context.Context
	ch     chan chanItem
	k      int
	closed atomic.Bool
}

func (s *chanStream) text(t string)  { s.ch <- chanItem{c: providers.Chunk{Text: t}} }
func (s *chanStream) fail(err error) { s.ch <- chanItem{err: err} }
func (s *chanStream) end(out int)    { s.endWith(out, "stop") }
func (s *chanStream) endWith(out int, finish string) {
	s.ch <- chanItem{c: providers.Chunk{FinishReason: finish, Usage: &providers.Usage{PromptTokens: 5, CompletionTokens: out}}}
	s.ch <- chanItem{err: io.EOF}
}

func (s *chanStream) Recv() (providers.Chunk, error) {
	select {
	case it := <-s.ch:
		return it.c, it.err
	case <-s.ctx.Done():
		return providers.Chunk{}, &providers.Error{Provider: "c", Kind: providers.KindConnection, Err: s.ctx.Err()}
	}
}

func (s *chanStream) Close() error { s.closed.Store(true); return nil }

func chanHarness(t *testing.T) (*harness, *chanProvider) {
	t.Helper()
	p := newChanProvider()
	h := newHarness(t, func(o *Options) { o.Providers = fakeRegistry{"c": p} })
	return h, p
}

func ephemeralReq() *Request {
	r := userReq("hi", "c/m")
	r.ephemeral = true
	r.Stream = true
	return r
}

// startN runs StreamN in the background while the test feeds each of the n streams
// their first fragment, "s<k> " (k: the call's number), so that they all start.
func startN(t *testing.T, g *Gateway, p *chanProvider, ctx context.Context, n, feed int) (*MultiStream, []error, error, map[int]*chanStream) {
	t.Helper()
	type res struct {
		m      *MultiStream
		failed []error
		err    error
	}
	done := make(chan res, 1)
	go func() {
		m, failed, err := g.StreamN(ctx, Scope{}, ephemeralReq(), n)
		done <- res{m, failed, err}
	}()
	byCall := map[int]*chanStream{}
	for range feed {
		s := <-p.opened
		byCall[s.k] = s
		s.text("s" + string(rune('0'+s.k)) + " ")
	}
	r := <-done
	return r.m, r.failed, r.err, byCall
}

// TestStreamNInterleavesChoices: n streams run at once and their fragments come as they
// arrive, each tagged with the index of its choice; each choice ends on its own, with its
// response; the usage is theirs.
func TestStreamNInterleavesChoices(t *testing.T) {
	h, p := chanHarness(t)
	m, failed, err, streams := startN(t, h.g, p, context.Background(), 2, 2)
	if err != nil || len(failed) != 0 {
		t.Fatalf("StreamN: %v %v", failed, err)
	}
	defer m.Close()
	if got := m.Choices(); len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Fatalf("choices %v", got)
	}
	choiceOf := map[int]int{} // call number → choice index
	for range 2 {
		ev, err := m.Recv()
		if err != nil || ev.Chunk == nil {
			t.Fatalf("first fragments: %+v %v", ev, err)
		}
		k := int(ev.Chunk.Text[1] - '0')
		choiceOf[k] = ev.Choice
	}
	if len(choiceOf) != 2 || choiceOf[1] == choiceOf[2] {
		t.Fatalf("choices of the calls: %v", choiceOf)
	}
	// The second stream speaks first, then the first: the fragments come in that order.
	for _, k := range []int{2, 1, 2} {
		streams[k].text("more ")
		ev, err := m.Recv()
		if err != nil || ev.Chunk == nil || ev.Choice != choiceOf[k] || ev.Chunk.Text != "more " {
			t.Fatalf("fragment of call %d: %+v %v", k, ev, err)
		}
	}
	streams[1].end(3)
	if ev, err := m.Recv(); err != nil || !ev.Done || ev.Choice != choiceOf[1] {
		t.Fatalf("end of call 1: %+v %v", ev, err)
	}
	if r := m.Response(choiceOf[1]); r == nil || r.Text() != "s1 more " || r.Usage.CompletionTokens != 3 {
		t.Fatalf("response of call 1: %+v", r)
	}
	streams[2].end(4)
	if ev, err := m.Recv(); err != nil || !ev.Done || ev.Choice != choiceOf[2] {
		t.Fatalf("end of call 2: %+v %v", ev, err)
	}
	if _, err := m.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after every choice ended: %v", err)
	}
	if r := m.Response(choiceOf[2]); r == nil || r.Text() != "s2 more more " {
		t.Fatalf("response of call 2: %+v", r)
	}
	complete := 0
	for _, e := range h.ledger.all() {
		if e.Complete {
			complete++
		}
	}
	if complete != 2 {
		t.Errorf("%d complete ledger entries, want one per choice", complete)
	}
}

// TestStreamNChoiceFailsBeforeStart: a choice whose stream fails before its first
// fragment is reported as failed; the others stream with their original indices. All
// failing is the first failure, as n 1 would give it.
func TestStreamNChoiceFailsBeforeStart(t *testing.T) {
	h, p := chanHarness(t)
	bad := func(k int) error {
		if k == 2 {
			return &providers.Error{Provider: "c", Model: "m", Kind: providers.KindBadRequest, StatusCode: 400, Message: "no"}
		}
		return nil
	}
	p.openErr = bad
	m, failed, err, _ := startN(t, h.g, p, context.Background(), 3, 2)
	if err != nil || len(failed) != 1 {
		t.Fatalf("StreamN: %v %v", failed, err)
	}
	var af *AllFailedError
	if !errors.As(failed[0], &af) {
		t.Errorf("the failure: %v", failed[0])
	}
	got := m.Choices()
	if len(got) != 2 {
		t.Fatalf("choices %v", got)
	}
	seen := map[int]bool{}
	for _, c := range got {
		if c < 0 || c > 2 {
			t.Errorf("choice index %d outside 0..2", c)
		}
		seen[c] = true
	}
	for range 2 {
		ev, err := m.Recv()
		if err != nil || !seen[ev.Choice] {
			t.Fatalf("fragment: %+v %v", ev, err)
		}
	}
	m.Close()

	p.openErr = func(int) error {
		return &providers.Error{Provider: "c", Model: "m", Kind: providers.KindBadRequest, StatusCode: 400, Message: "no"}
	}
	m, failed, err, _ = startN(t, h.g, p, context.Background(), 2, 0)
	if m != nil || len(failed) != 2 || !errors.As(err, &af) {
		t.Fatalf("all failing: %v %v %v", m, failed, err)
	}
}

// TestStreamNChoiceFailsMidStream: a choice failing after it started ends the whole
// stream with its failure (a *ChoiceError over the *StreamError), and the other choices'
// upstream streams are closed.
func TestStreamNChoiceFailsMidStream(t *testing.T) {
	h, p := chanHarness(t)
	m, _, err, streams := startN(t, h.g, p, context.Background(), 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for range 2 {
		if _, err := m.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	streams[1].fail(&providers.Error{Provider: "c", Model: "m", Kind: providers.KindBadRequest, StatusCode: 400, Message: "broken"})
	_, err = m.Recv()
	var ce *ChoiceError
	var se *StreamError
	if !errors.As(err, &ce) || !errors.As(err, &se) {
		t.Fatalf("mid-stream failure: %v", err)
	}
	if !streams[2].closed.Load() {
		t.Errorf("the other choice's upstream stream is still open")
	}
	if _, err2 := m.Recv(); !errors.As(err2, &ce) {
		t.Errorf("Recv after the failure: %v", err2)
	}
}

// TestStreamNCancelStopsEveryStream: the caller going away stops all n upstream streams
// and leaves no goroutine behind.
func TestStreamNCancelStopsEveryStream(t *testing.T) {
	h, p := chanHarness(t)
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	m, _, err, streams := startN(t, h.g, p, ctx, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Recv(); err != nil {
		t.Fatal(err)
	}
	cancel()
	for {
		if _, err := m.Recv(); err != nil {
			break
		}
	}
	m.Close()
	for k, s := range streams {
		if !s.closed.Load() {
			t.Errorf("stream of call %d not closed", k)
		}
	}
	waitGoroutines(t, base)

	// Closed by its reader before the end (the client left): the same.
	m, _, err, _ = startN(t, h.g, p, context.Background(), 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	waitGoroutines(t, base)
}

// waitGoroutines fails t when goroutines above base stay around.
func waitGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base+2 {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}

// sseChunks reads an OpenAI stream's data events: the chunks, and whether it ended with
// [DONE]; an error event is returned as a chunk with its raw data in errData.
func sseChunks(t *testing.T, body string) (chunks []OpenAIChunk, done bool, errData string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		if strings.HasPrefix(data, `{"error"`) {
			errData = data
			continue
		}
		var c OpenAIChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %s: %v", data, err)
		}
		chunks = append(chunks, c)
	}
	return chunks, done, errData
}

// TestWriteOpenAIStreamN: n choices as one chat.completion.chunk stream: one id, created
// and object; one choice per chunk with its index; each choice's first chunk says the
// role and its last the finish reason; tool-call deltas keep their own indices; the usage
// chunk sums the choices; then [DONE].
func TestWriteOpenAIStreamN(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "one two three", usage: providers.Usage{PromptTokens: 5, CompletionTokens: 3}},
		step{call: &providers.ToolCall{ID: "call_1", Name: "f", Arguments: `{"q":1}`}, argPieces: []string{`{"q"`, `:1}`}, usage: providers.Usage{PromptTokens: 5, CompletionTokens: 4}})
	r := userReq("hi", "a/m")
	r.ephemeral, r.Stream = true, true
	m, failed, err := h.g.StreamN(context.Background(), Scope{}, r, 2)
	if err != nil || len(failed) != 0 {
		t.Fatalf("StreamN: %v %v", failed, err)
	}
	rec := httptest.NewRecorder()
	if err := WriteOpenAIStreamN(rec, m, true); err != nil {
		t.Fatal(err)
	}
	chunks, done, errData := sseChunks(t, rec.Body.String())
	if !done || errData != "" || len(chunks) == 0 {
		t.Fatalf("done %v, error %s, %d chunks:\n%s", done, errData, len(chunks), rec.Body.String())
	}
	type choice struct {
		text     string
		role     bool
		finish   string
		calls    []OpenAIToolCallDelta
		fragment int
	}
	got := map[int]*choice{}
	last := chunks[len(chunks)-1]
	for i, c := range chunks {
		if c.ID != chunks[0].ID || c.Created != chunks[0].Created || c.Object != "chat.completion.chunk" || !strings.HasPrefix(c.ID, "chatcmpl-") {
			t.Errorf("chunk %d: id %q created %d object %q", i, c.ID, c.Created, c.Object)
		}
		if i == len(chunks)-1 {
			break
		}
		if len(c.Choices) != 1 || c.Usage != nil {
			t.Fatalf("chunk %d: %d choices, usage %v", i, len(c.Choices), c.Usage)
		}
		ch := c.Choices[0]
		g := got[ch.Index]
		if g == nil {
			g = &choice{}
			got[ch.Index] = g
			g.role = ch.Delta.Role == "assistant"
		} else if ch.Delta.Role != "" {
			t.Errorf("choice %d: role again in chunk %d", ch.Index, i)
		}
		if g.finish != "" {
			t.Errorf("choice %d: chunk %d after its finish", ch.Index, i)
		}
		g.text += ch.Delta.Content
		g.calls = append(g.calls, ch.Delta.ToolCalls...)
		if ch.FinishReason != nil {
			g.finish = *ch.FinishReason
		}
	}
	if len(got) != 2 || got[0] == nil || got[1] == nil {
		t.Fatalf("choices %v", got)
	}
	var text, tool *choice
	for _, g := range got {
		if !g.role {
			t.Errorf("a choice's first chunk has no role: %+v", g)
		}
		if len(g.calls) > 0 {
			tool = g
		} else {
			text = g
		}
	}
	if text == nil || tool == nil || text.text != "one two three" || text.finish != "stop" || tool.finish != "tool_calls" {
		t.Fatalf("text %+v, tool %+v", text, tool)
	}
	args := ""
	for _, d := range tool.calls {
		if d.Index != 0 {
			t.Errorf("tool-call delta index %d, want the call's own 0", d.Index)
		}
		args += d.Function.Arguments
	}
	if args != `{"q":1}` || tool.calls[0].ID != "call_1" {
		t.Errorf("tool call: %+v (args %q)", tool.calls, args)
	}
	if len(last.Choices) != 0 || last.Usage == nil || last.Usage.PromptTokens != 10 || last.Usage.CompletionTokens != 7 {
		t.Errorf("usage chunk: %+v %+v", last, last.Usage)
	}
}

// TestWriteOpenAIStreamNMidStreamFailure: a choice failing mid-stream ends the whole
// stream as n 1 ends one: an error event and no [DONE].
func TestWriteOpenAIStreamNMidStreamFailure(t *testing.T) {
	h, p := chanHarness(t)
	m, _, err, streams := startN(t, h.g, p, context.Background(), 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	streams[1].fail(&providers.Error{Provider: "c", Model: "m", Kind: providers.KindBadRequest, StatusCode: 400, Message: "broken"})
	rec := httptest.NewRecorder()
	var wg sync.WaitGroup
	wg.Add(1)
	var werr error
	go func() {
		defer wg.Done()
		werr = WriteOpenAIStreamN(rec, m, true)
	}()
	wg.Wait()
	var ce *ChoiceError
	if !errors.As(werr, &ce) {
		t.Errorf("WriteOpenAIStreamN: %v", werr)
	}
	_, done, errData := sseChunks(t, rec.Body.String())
	if done || !strings.Contains(errData, "stream_failed") {
		t.Errorf("done %v, error event %q:\n%s", done, errData, rec.Body.String())
	}
	if !streams[2].closed.Load() {
		t.Errorf("the other choice's upstream stream is still open")
	}
}

// TestChatRequestStreamsChoices: n above 1 is taken with stream; a stored conversation
// still takes one choice.
func TestChatRequestStreamsChoices(t *testing.T) {
	if _, err := chatBody(t, `{"model":"a/m","n":2,"stream":true,"messages":[{"role":"user","content":"hi"}]}`); err != nil {
		t.Errorf("n 2 streamed: %v", err)
	}
	h := newHarness(t, nil)
	var ve *ValidationError
	if _, _, err := h.g.StreamN(context.Background(), Scope{Owner: "k"}, userReq("hi", "a/m"), 2); !errors.As(err, &ve) || ve.Field != "n" {
		t.Errorf("stored conversation: %v", err)
	}
}

// TestTextCompletionChoicesStreamed: the legacy text completions stream n choices of one
// prompt (WriteOpenAITextStreamN); several prompts are still not streamed, naming prompt.
func TestTextCompletionChoicesStreamed(t *testing.T) {
	var r OpenAITextCompletionRequest
	if err := json.Unmarshal([]byte(`{"model":"a/m","prompt":"hi","n":2,"stream":true}`), &r); err != nil {
		t.Fatal(err)
	}
	if reqs, err := r.ToChatRequests(); err != nil || len(reqs) != 1 || reqs[0].Choices() != 2 || !reqs[0].Stream {
		t.Errorf("n 2 streamed: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"model":"a/m","prompt":["hi","ho"],"n":2,"stream":true}`), &r); err != nil {
		t.Fatal(err)
	}
	var ve *ValidationError
	if _, err := r.ToChatRequests(); !errors.As(err, &ve) || ve.Field != "prompt" {
		t.Errorf("two prompts streamed: %v", err)
	}
}

// TestWriteOpenAITextStreamNEstimatedUsage: the summed usage of streamed text completion
// choices says it was estimated when an upstream reported none, as the chat writer's does.
func TestWriteOpenAITextStreamNEstimatedUsage(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "one two three"}, step{text: "four five"})
	r := userReq("hi", "a/m")
	r.ephemeral, r.Stream = true, true
	m, failed, err := h.g.StreamN(context.Background(), Scope{}, r, 2)
	if err != nil || len(failed) != 0 {
		t.Fatalf("StreamN: %v %v", failed, err)
	}
	rec := httptest.NewRecorder()
	treq := &OpenAITextCompletionRequest{Prompt: OpenAIPrompt{"hi"}, StreamOpts: &OpenAIStreamOptions{IncludeUsage: true}}
	if err := WriteOpenAITextStreamN(rec, m, treq); err != nil {
		t.Fatal(err)
	}
	body := rec.Body.String()
	i := strings.LastIndex(body, `"usage":`)
	if i < 0 || !strings.Contains(body[i:], `"estimated":true`) {
		t.Fatalf("the summed usage does not say it was estimated:\n%s", body)
	}
}
