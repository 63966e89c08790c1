package completions

// Review 10b: CompleteN with hedging, cancelled (package completions).

import (
	"context"
	"runtime"
	"testing"
	"time"
)

func TestReview10bCompleteNHedgedCancelNoLeak(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("slow", step{hang: true})
	h.b.on("slow", step{hang: true})
	base := runtime.NumGoroutine()
	for range 5 {
		r := userReq("hi", "a/slow")
		r.FallbackModels = []string{"b/slow"}
		r.ephemeral = true
		r.FaultPolicy.HedgeAfter = ptr(0.01)
		ctx, cancel := context.WithTimeout(context.Background(), 80*time.Millisecond)
		_, _, err := h.g.CompleteN(ctx, Scope{}, r, 4)
		cancel()
		if err == nil {
			t.Fatal("want an error")
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > base+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base+2 {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines left (base %d)\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}
