package completions

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

type recordingObserver struct {
	mu  sync.Mutex
	got []RequestRecord
}

func (o *recordingObserver) ObserveRequest(_ context.Context, r RequestRecord) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, r)
}

func (o *recordingObserver) take(t *testing.T) RequestRecord {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.got) != 1 {
		t.Fatalf("observed %d requests, want 1: %+v", len(o.got), o.got)
	}
	r := o.got[0]
	o.got = nil
	return r
}

func TestObserverSeesEveryRequestOnce(t *testing.T) {
	obs := &recordingObserver{}
	h := newHarness(t, func(o *Options) { o.Observer = obs; o.StreamIdleTimeout = 20 * time.Millisecond })
	ctx := context.Background()
	h.a.on("ok", step{text: "fine answer", usage: providers.Usage{PromptTokens: 10, CompletionTokens: 5}})
	h.a.on("down", step{err: upstreamErr(providers.KindOverloaded, 503, 0)})
	h.a.on("cut", step{text: "one two three four", breakAt: 2, breakErr: &providers.Error{Provider: "a", Kind: providers.KindStreamBroken, Message: "cut"}})
	h.a.on("slow", step{text: "one two three", stall: true, stallAt: 1})

	// Answered after a fallback.
	r := userReq("hi", "a/down")
	r.FallbackModels = []string{"a/ok"}
	r.MaxRetries = intp(0)
	if _, err := h.g.Complete(ctx, Scope{Owner: "o", Tag: "t"}, r); err != nil {
		t.Fatal(err)
	}
	rec := obs.take(t)
	if rec.Outcome != RequestOK || rec.Model != "a/ok" || rec.Stream || len(rec.Attempts) != 2 || rec.Attempts[0].Outcome != OutcomeError ||
		rec.Usage.TotalTokens != 15 || rec.Owner != "o" || rec.Tag != "t" || rec.Latency <= 0 || rec.ConversationID == "" {
		t.Fatalf("fallback: %+v", rec)
	}
	// A non-streamed request with hedging is streamed inside, and observed as it was sent.
	r = userReq("hi", "a/ok")
	r.FaultPolicy.HedgeAfter = ptr(5.0)
	if resp, err := h.g.Complete(ctx, Scope{}, r); err != nil || resp.Text() != "fine answer" {
		t.Fatalf("hedged non-streamed: %v %v", resp, err)
	}
	if rec := obs.take(t); rec.Outcome != RequestOK || rec.Stream || rec.Model != "a/ok" {
		t.Fatalf("hedged non-streamed: %+v", rec)
	}
	// Every model failed.
	r = userReq("hi", "a/down")
	r.MaxRetries = intp(0)
	if _, err := h.g.Complete(ctx, Scope{}, r); err == nil {
		t.Fatal("no error")
	}
	if rec := obs.take(t); rec.Outcome != RequestFailed || rec.Model != "" || len(rec.Attempts) != 1 || rec.Err == nil {
		t.Fatalf("all failed: %+v", rec)
	}
	// A stream delivered in full.
	st, err := h.g.Stream(ctx, Scope{}, userReq("hi", "a/ok"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, st); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if rec := obs.take(t); rec.Outcome != RequestOK || !rec.Stream || rec.TTFT <= 0 || rec.TTFT > rec.Latency {
		t.Fatalf("stream: %+v", rec)
	}
	// A stream broken after its first fragment.
	st, err = h.g.Stream(ctx, Scope{}, userReq("hi", "a/cut"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, st); !errors.Is(err, ErrStreamFailed) {
		t.Fatalf("err = %v", err)
	}
	if rec := obs.take(t); rec.Outcome != RequestStreamFailed || rec.Model != "a/cut" || rec.TTFT <= 0 {
		t.Fatalf("broken stream: %+v", rec)
	}
	// A stream the caller walks away from.
	st, err = h.g.Stream(ctx, Scope{}, userReq("hi", "a/slow"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st.Close()
	if rec := obs.take(t); rec.Outcome != RequestCancelled || !errors.Is(rec.Err, context.Canceled) {
		t.Fatalf("abandoned stream: %+v", rec)
	}
	// A client that disconnects mid-stream (its request's context ends while the stream
	// waits for the next fragment): cancelled, not a stream failure.
	cctx, cancel := context.WithCancel(ctx)
	st, err = h.g.Stream(cctx, Scope{}, userReq("hi", "a/slow"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	cancel()
	_, _ = drain(t, st)
	st.Close()
	rec = obs.take(t)
	if rec.Outcome != RequestCancelled || rec.Requested != "a/slow" {
		t.Fatalf("disconnected mid-stream: outcome %q requested %q (%v)", rec.Outcome, rec.Requested, rec.Err)
	}
	// Its attempt was cancelled by the caller, not failed by the model.
	if a := rec.Attempts[len(rec.Attempts)-1]; a.Outcome != OutcomeCancelled || a.Kind != "client_gone" {
		t.Fatalf("the disconnected stream's attempt: %+v", a)
	}
}
