package completions

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// attemptKey marks the context fakeAttemptTracer gave an attempt with its id.
type attemptKey struct{}

// fakeAttemptTracer is a fake Options.TraceAttempt: ids 1, 2, … and the context marked
// with the id.
type fakeAttemptTracer struct{ n atomic.Uint32 }

func (f *fakeAttemptTracer) trace(ctx context.Context) (context.Context, [8]byte) {
	id := [8]byte{7: byte(f.n.Add(1))}
	return context.WithValue(ctx, attemptKey{}, id), id
}

// ctxSeen is a provider that notes the attempt id of the context each call was made in.
type ctxSeen struct {
	providers.Provider
	mu   *sync.Mutex
	seen map[[8]byte]string // attempt id → "provider/model" called with it
}

func (c ctxSeen) note(ctx context.Context, model string) {
	id, _ := ctx.Value(attemptKey{}).([8]byte)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen[id] = c.Name() + "/" + model
}

func (c ctxSeen) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	c.note(ctx, req.Model)
	return c.Provider.Complete(ctx, req)
}

func (c ctxSeen) Stream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	c.note(ctx, req.Model)
	return c.Provider.Stream(ctx, req)
}

func (c ctxSeen) SupportsPrefill() bool { return true }

// TestEachAttemptCallsInItsTracedContext: every upstream call — a fallback after a
// failure, a hedge, a stream's continuation — is made in the context Options.TraceAttempt
// gave its attempt, and the attempt is recorded with that span id, so that the call's
// HTTP span nests under the attempt's span; a hedge that lost the race too, so its call's
// span has its parent.
func TestEachAttemptCallsInItsTracedContext(t *testing.T) {
	obs := &recordingObserver{}
	tracer := &fakeAttemptTracer{}
	h := newHarness(t, func(o *Options) { o.Observer = obs; o.TraceAttempt = tracer.trace })
	seen := map[[8]byte]string{}
	mu := &sync.Mutex{}
	h.g.opts.Providers = fakeRegistry{"a": ctxSeen{h.a, mu, seen}, "b": ctxSeen{h.b, mu, seen}}
	check := func(name string, want int) {
		t.Helper()
		rec := obs.take(t)
		called := 0
		for i, a := range rec.Attempts {
			if a.Started.IsZero() {
				continue // no call
			}
			called++
			mu.Lock()
			got := seen[a.SpanID]
			mu.Unlock()
			if a.SpanID == ([8]byte{}) || got != a.Model {
				t.Errorf("%s: attempt %d (%s) recorded span id %v, whose context called %q", name, i+1, a.Model, a.SpanID, got)
			}
		}
		if called != want {
			t.Errorf("%s: %d attempts made a call, want %d: %+v", name, called, want, rec.Attempts)
		}
	}

	h.a.on("down", step{err: &providers.Error{Provider: "a", Model: "down", Kind: providers.KindBadRequest, Message: "no"}})
	h.b.on("ok", step{text: "fine"})
	req := userReq("hi", "a/down")
	req.FallbackModels = []string{"b/ok"}
	if _, err := h.g.Complete(context.Background(), Scope{}, req); err != nil {
		t.Fatal(err)
	}
	check("fallback", 2)

	h.a.on("slow", step{hang: true})
	req = userReq("hi", "a/slow")
	req.FallbackModels = []string{"b/ok"}
	req.FaultPolicy.HedgeAfter = ptr(0.001)
	st, err := h.g.Stream(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, st); err != nil {
		t.Fatal(err)
	}
	check("hedged", 2) // the winner, and the hang it beat (cancelled, its call traced all the same)

	cut := &providers.Error{Kind: providers.KindStreamBroken, Message: "connection reset by peer"}
	h.a.on("cut", step{text: "one two three four", breakAt: 2, breakErr: cut})
	h.b.on("cont", step{text: "three four"})
	st, err = h.g.Stream(context.Background(), Scope{}, userReq("Count", "a/cut", "b/cont"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, st); err != nil && !errors.Is(err, ErrStreamFailed) {
		t.Fatal(err)
	}
	check("continued", 2)
}

// TestHedgedCallsCutByTheCallerAreRecorded: a hedged request whose caller leaves while
// both of its calls are under way records both attempts (cancelled, client_gone) with the
// span ids their calls were made under, so their HTTP spans have their parents; before, a
// caller gone recorded neither.
func TestHedgedCallsCutByTheCallerAreRecorded(t *testing.T) {
	obs := &recordingObserver{}
	tracer := &fakeAttemptTracer{}
	h := newHarness(t, func(o *Options) { o.Observer = obs; o.TraceAttempt = tracer.trace })
	seen := map[[8]byte]string{}
	mu := &sync.Mutex{}
	h.g.opts.Providers = fakeRegistry{"a": ctxSeen{h.a, mu, seen}, "b": ctxSeen{h.b, mu, seen}}
	h.a.on("slow", step{hang: true})
	h.b.on("slow", step{hang: true})
	req := userReq("hi", "a/slow")
	req.FallbackModels = []string{"b/slow"}
	req.FaultPolicy.HedgeAfter = ptr(0.001)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		st, err := h.g.Stream(ctx, Scope{}, req)
		if err == nil {
			_, err = drain(t, st)
		}
		errc <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls made, want both", n)
		}
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want the caller's context.Canceled", err)
	}
	rec := obs.take(t)
	if len(rec.Attempts) != 2 {
		t.Fatalf("attempts %+v, want both calls", rec.Attempts)
	}
	for _, a := range rec.Attempts {
		mu.Lock()
		got := seen[a.SpanID]
		mu.Unlock()
		if a.Outcome != OutcomeCancelled || a.Kind != "client_gone" || a.Started.IsZero() || got != a.Model {
			t.Errorf("attempt %+v (its span's call %q), want cancelled client_gone with its call's span id", a, got)
		}
	}
}
