package completions

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestBreakerOnChange: OnChange hears a breaker open (with its failures and their kind),
// go half-open when a probe is let through, open again when the probe fails, and close
// when one succeeds; a model that keeps answering changes nothing.
func TestBreakerOnChange(t *testing.T) {
	var mu sync.Mutex
	var got []BreakerChange
	h := newHarness(t, func(o *Options) {
		o.Breaker = BreakerOptions{Failures: 3, Cooldown: 50 * time.Millisecond, OnChange: func(c BreakerChange) {
			mu.Lock()
			got = append(got, c)
			mu.Unlock()
		}}
	})
	fail := step{err: upstreamErr(providers.KindOverloaded, 503, 0)}
	ok := step{text: "fine", usage: providers.Usage{PromptTokens: 1}}
	h.a.on("m", fail, fail, fail, fail, ok)
	h.b.on("steady", ok)
	ctx := context.Background()
	ask := func(model string) {
		req := userReq("hi", model)
		req.MaxRetries = intp(2)
		_, _ = h.g.Complete(ctx, Scope{}, req)
	}
	ask("b/steady")
	ask("a/m")                         // three failures: open
	time.Sleep(100 * time.Millisecond) // past the cool-down (±20%)
	req := userReq("hi", "a/m")
	req.MaxRetries = intp(0)
	_, _ = h.g.Complete(ctx, Scope{}, req) // the probe fails: open again
	time.Sleep(100 * time.Millisecond)     // past the cool-down (±20%)
	ask("a/m")                             // the probe answers: closed
	mu.Lock()
	defer mu.Unlock()
	var moves []string
	for _, c := range got {
		if c.Model != "a/m" {
			t.Fatalf("change of %s: %+v", c.Model, c)
		}
		moves = append(moves, c.From+">"+c.To)
	}
	want := []string{"closed>open", "open>half_open", "half_open>open", "open>half_open", "half_open>closed"}
	if !slices.Equal(moves, want) {
		t.Fatalf("changes %v, want %v", moves, want)
	}
	if got[0].Failures != 3 || got[0].Cause != providers.KindOverloaded.String() || got[2].Failures != 1 {
		t.Fatalf("the trips say %+v and %+v", got[0], got[2])
	}
}
