package completions

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestCollectedStreamRecordsNoPartial: a non-streamed request read whole from an internal
// stream (hedging) that breaks mid-answer answers its caller an error: nothing was
// delivered, so its record has no Partial answer (a trace would show an answer the client
// never saw).
func TestCollectedStreamRecordsNoPartial(t *testing.T) {
	obs := &recordingObserver{}
	h := newHarness(t, func(o *Options) { o.Observer = obs; o.StreamIdleTimeout = 20 * time.Second })
	h.a.on("cut", step{text: "one two three four", breakAt: 2, breakErr: &providers.Error{Provider: "a", Kind: providers.KindStreamBroken, Message: "cut"}})
	r := userReq("hi", "a/cut")
	r.MaxRetries = intp(0)
	r.FaultPolicy.HedgeAfter = ptr(600.0)
	if _, err := h.g.Complete(context.Background(), Scope{}, r); err == nil {
		t.Fatal("no error")
	}
	rec := obs.take(t)
	if rec.Stream || rec.Outcome == RequestOK {
		t.Fatalf("record: stream %v outcome %q", rec.Stream, rec.Outcome)
	}
	if rec.Partial != nil {
		t.Errorf("a non-streamed request that failed records a partial answer %q", rec.Partial.Text())
	}
}
