package completions

import (
	"context"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// A group's fallback naming a shuffled group spreads the fallback traffic over that
// group's members as the group itself does (by its weights), as a LiteLLM fallback to a
// model group picks a deployment by the router's strategy, instead of sending every
// fallback to the member listed first.
func TestReview25aFallbackGroupIsShuffled(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{
			"main":     {Models: []string{"a/m1"}, Fallbacks: []string{"weighted"}},
			"weighted": {Models: []string{"b/m2", "a/m3"}, Shuffle: true, Weights: []float64{0, 1}},
			"other":    {Models: []string{"a/m1"}, Fallbacks: []string{"even"}},
			"even":     {Models: []string{"b/m2", "a/m3"}, Shuffle: true},
		}
	})
	h.a.on("m1", step{err: &providers.Error{Kind: providers.KindOverloaded, Message: "busy"}})
	firstFallback := func(model string) string {
		t.Helper()
		resp, err := h.g.Complete(context.Background(), Scope{}, chatRequest(t, `{"model":"`+model+`","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil || len(resp.Attempts) != 2 {
			t.Fatalf("%s: %+v, %v: want the member, then one fallback", model, resp, err)
		}
		return resp.Attempts[1].Model
	}
	// Weight 0 comes last, whatever the draw.
	for range 20 {
		if got := firstFallback("main"); got != "a/m3" {
			t.Fatalf("first fallback %s: want a/m3, the only member of weight > 0", got)
		}
	}
	// Without weights each member comes first some of the time (missing one of them in 200
	// requests has a chance of 2^-199).
	seen := map[string]int{}
	for range 200 {
		seen[firstFallback("other")]++
	}
	if seen["b/m2"] == 0 || seen["a/m3"] == 0 {
		t.Errorf("first fallbacks %v: a shuffled fallback group always tried in the same order", seen)
	}
}
