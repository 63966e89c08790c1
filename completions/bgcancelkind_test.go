package completions

import (
	"context"
	"testing"
)

// TestBackgroundStreamCancelIsNotACut: a background stream its owner cancelled (POST
// /v1/responses/{id}/cancel) had its attempt marked "cut", the kind of a request the
// server's shutdown cut, since the run's context carries the cancel as its cause; a cancel
// is the caller's, as a client gone is: its attempt says client_gone again.
func TestBackgroundStreamCancelIsNotACut(t *testing.T) {
	obs := &recordingObserver{}
	h := newHarness(t, func(o *Options) { o.Observer = obs })
	h.a.on("m", step{text: "one two three four", stallAt: 2, stall: true})
	o, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"Go on.","background":true,"stream":true}`)
	if err != nil {
		t.Fatal(err)
	}
	live := &syncRecorder{}
	go func() { _ = h.g.StreamBackgroundResponse(context.Background(), "alice", o.ID, -1, live) }()
	waitFor(t, "six events", func() bool { return len(live.events(t)) == 6 })
	if _, err := h.g.CancelResponse(context.Background(), "alice", o.ID); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, h.g, "alice", o.ID, "cancelled")
	waitFor(t, "the stream observed", func() bool {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		return len(obs.got) == 1
	})
	rec := obs.take(t)
	if n := len(rec.Attempts); n == 0 || rec.Attempts[n-1].Outcome != OutcomeCancelled || rec.Attempts[n-1].Kind != "client_gone" {
		t.Fatalf("the cancelled background stream's attempts: %+v; want the last cancelled, client_gone", rec.Attempts)
	}
}

// TestBackgroundCancelIsNotACut: a non-streamed background response its owner cancelled
// while its upstream call ran has that attempt recorded client_gone (the caller's doing),
// not cut (the kind of a request the server's shutdown cut), and no CutBy, as a stream's.
func TestBackgroundCancelIsNotACut(t *testing.T) {
	obs := &recordingObserver{}
	h := newHarness(t, func(o *Options) { o.Observer = obs })
	h.a.on("m", step{hang: true})
	o, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"Go on.","background":true}`)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the upstream call", func() bool {
		h.a.mu.Lock()
		defer h.a.mu.Unlock()
		return h.a.calls["m"] == 1
	})
	if _, err := h.g.CancelResponse(context.Background(), "alice", o.ID); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, h.g, "alice", o.ID, "cancelled")
	waitFor(t, "the request observed", func() bool {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		return len(obs.got) == 1
	})
	rec := obs.take(t)
	if n := len(rec.Attempts); n == 0 || rec.Attempts[n-1].Outcome != OutcomeCancelled || rec.Attempts[n-1].Kind != "client_gone" || rec.CutBy != nil {
		t.Fatalf("the cancelled background response's attempts: %+v (CutBy %v); want the last cancelled, client_gone", rec.Attempts, rec.CutBy)
	}
}
