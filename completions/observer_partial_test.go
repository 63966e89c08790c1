package completions

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestObserverSeesPartialAnswer: a stream that breaks, or that its caller leaves, after
// fragments were delivered is recorded with what was delivered (RequestRecord.Partial), so
// a trace can show the answer the client saw; a complete answer and a stream that failed
// before its first fragment carry none.
func TestObserverSeesPartialAnswer(t *testing.T) {
	obs := &recordingObserver{}
	h := newHarness(t, func(o *Options) { o.Observer = obs; o.StreamIdleTimeout = 20 * time.Second })
	ctx := context.Background()
	h.a.on("cut", step{text: "one two three four", breakAt: 2, breakErr: &providers.Error{Provider: "a", Kind: providers.KindStreamBroken, Message: "cut"}})
	h.a.on("slow", step{text: "alpha beta gamma", stall: true, stallAt: 1})
	h.a.on("down", step{err: upstreamErr(providers.KindOverloaded, 503, 0)})
	h.a.on("ok", step{text: "whole answer"})

	st, err := h.g.Stream(ctx, Scope{}, userReq("hi", "a/cut"))
	if err != nil {
		t.Fatal(err)
	}
	frags, err := drain(t, st)
	if !errors.Is(err, ErrStreamFailed) {
		t.Fatalf("err = %v", err)
	}
	rec := obs.take(t)
	if rec.Outcome != RequestStreamFailed || rec.Partial == nil || rec.Partial.Text() != strings.Join(frags, "") ||
		rec.Partial.Text() == "" || rec.Partial.Provider != "a" || rec.Partial.Model != "cut" || rec.Partial.FinishReason != "" || rec.Answer != nil {
		t.Fatalf("broken stream: outcome %q partial %+v (delivered %q)", rec.Outcome, rec.Partial, frags)
	}

	// The caller leaves after the first fragment.
	st, err = h.g.Stream(ctx, Scope{}, userReq("hi", "a/slow"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	rec = obs.take(t)
	if rec.Outcome != RequestCancelled || rec.Partial == nil || rec.Partial.Text() != c.Text {
		t.Fatalf("abandoned stream: outcome %q partial %+v, delivered %q", rec.Outcome, rec.Partial, c.Text)
	}

	// Failed before any fragment: nothing partial.
	r := userReq("hi", "a/down")
	r.MaxRetries = intp(0)
	if _, err := h.g.Stream(ctx, Scope{}, r); err == nil {
		t.Fatal("no error")
	}
	if rec := obs.take(t); rec.Partial != nil {
		t.Fatalf("failed before the first fragment: partial %+v", rec.Partial)
	}
	// Complete: the answer, not a partial one.
	st, err = h.g.Stream(ctx, Scope{}, userReq("hi", "a/ok"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, st); err != nil {
		t.Fatal(err)
	}
	if rec := obs.take(t); rec.Partial != nil || rec.Answer == nil {
		t.Fatalf("complete stream: partial %+v answer %v", rec.Partial, rec.Answer)
	}
}
