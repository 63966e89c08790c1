package completions

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// weightedOrder draws the first index in proportion to the weights (counted over many
// draws of a seeded generator), puts weight-0 indexes last, and returns every index once.
func TestWeightedOrderFollowsWeights(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	weights := []float64{6, 3, 1, 0}
	const draws = 20000
	first := make([]int, len(weights))
	second := make([]int, len(weights))
	for range draws {
		order := weightedOrder(weights, r.Float64)
		if len(order) != 4 || order[3] != 3 {
			t.Fatalf("order %v: want every index once, the weight-0 one last", order)
		}
		seen := map[int]bool{}
		for _, i := range order {
			seen[i] = true
		}
		if len(seen) != 4 {
			t.Fatalf("order %v repeats an index", order)
		}
		first[order[0]]++
		second[order[1]]++
	}
	for i, w := range []float64{0.6, 0.3, 0.1, 0} {
		got := float64(first[i]) / draws
		if got < w-0.02 || got > w+0.02 {
			t.Errorf("index %d first in %.3f of the draws, want %.2f±0.02 (counts %v)", i, got, w, first)
		}
	}
	// Second place, without replacement: P(1 second) = 0.6·3/4 + 0.1·3/9 ≈ 0.483.
	if got := float64(second[1]) / draws; got < 0.46 || got > 0.51 {
		t.Errorf("index 1 second in %.3f of the draws, want about 0.483 (counts %v)", got, second)
	}
	// Two zero weights are both shuffled last, each first among them about half the time.
	zeroFirst := 0
	for range draws {
		order := weightedOrder([]float64{0, 1, 0}, r.Float64)
		if order[0] != 1 {
			t.Fatalf("order %v: the weighted index goes first", order)
		}
		if order[1] == 0 {
			zeroFirst++
		}
	}
	if got := float64(zeroFirst) / draws; got < 0.47 || got > 0.53 {
		t.Errorf("zero-weight order not uniform: %.3f", got)
	}
}

// A shuffled group with weights sends each member the share of first attempts its weight
// says, through the gateway (counts over many requests, not timings).
func TestShuffleWeightsThroughGateway(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"spread": {Models: []string{"a/m1", "b/m2"}, Shuffle: true, Weights: []float64{4, 1}}}
	})
	h.a.on("m1", step{text: "a"})
	h.b.on("m2", step{text: "b"})
	counts := map[string]int{}
	const n = 1000
	for range n {
		resp, err := h.g.Complete(context.Background(), Scope{}, chatRequest(t, `{"model":"spread","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		counts[resp.Provider]++
	}
	if got := float64(counts["a"]) / n; got < 0.74 || got > 0.86 {
		t.Errorf("a/m1 answered %.3f of the requests, want about 0.8 (counts %v)", got, counts)
	}
}

// A group's fallbacks are tried after its members (a fallback group by its members); a
// request's own fallback_models replace them, as LiteLLM's request fallbacks replace its
// router's.
func TestModelGroupFallbacks(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{
			"main":   {Models: []string{"a/m1"}, Fallbacks: []string{"backup", "a/m3"}},
			"backup": {Models: []string{"b/m2"}},
		}
	})
	busy := step{err: &providers.Error{Kind: providers.KindOverloaded, Message: "busy"}}
	h.a.on("m1", busy)
	h.b.on("m2", step{text: "from backup"})
	resp, err := h.g.Complete(context.Background(), Scope{}, chatRequest(t, `{"model":"main","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || resp.Provider != "b" || len(resp.Attempts) != 2 || resp.Attempts[0].Model != "a/m1" || resp.Attempts[1].Model != "b/m2" {
		t.Fatalf("%+v, %v: want a/m1 then the fallback group's b/m2", resp, err)
	}
	h.a.on("m1", busy)
	h.b.on("m2", busy)
	h.a.on("m3", busy)
	h.b.on("m4", step{text: "from the request's fallback"})
	resp, err = h.g.Complete(context.Background(), Scope{}, chatRequest(t, `{"model":"main","fallback_models":["b/m4"],"max_retries":0,"messages":[{"role":"user","content":"hi"}]}`))
	var order []string
	if resp != nil {
		for _, a := range resp.Attempts {
			order = append(order, a.Model)
		}
	}
	if err != nil || strings.Join(order, ",") != "a/m1,b/m4" || h.b.callCount("m2") != 1 || h.a.callCount("m3") != 0 {
		t.Fatalf("attempts %v, %v: want the group's members, then the request's fallbacks in place of the group's", order, err)
	}
}

func TestModelGroupWeightsAndFallbacksChecked(t *testing.T) {
	for groups, want := range map[string]string{
		`{"g":{"models":["x/y","x/z"],"weights":[1,2]}}`:                                                      "weights need shuffle",
		`{"g":{"models":["x/y","x/z"],"shuffle":true,"weights":[1]}}`:                                         "one per model, got 1 for 2",
		`{"g":{"models":["x/y","x/z"],"shuffle":true,"weights":[1,-1]}}`:                                      "weights[1]",
		`{"g":{"models":["x/y","x/z"],"shuffle":true,"weights":[0,0]}}`:                                       "at least one must be positive",
		`{"g":{"models":["x/y"],"fallbacks":["g"]}}`:                                                          "fallbacks[0]: names the group itself",
		`{"g":{"models":["x/y"],"fallbacks":["x/z","nope"]}}`:                                                 `fallbacks[1]: "nope" is neither`,
		`{"g":{"models":["x/y"],"fallbacks":["h","h"]},"h":{"models":["a/1","a/2","a/3","a/4","a/5","a/6"]}}`: "at most 10 models once groups are expanded",
	} {
		_, err := ParseModelGroups([]byte(groups))
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", groups, err, want)
		}
	}
	// A fallback's provider must exist, as a member's must.
	_, err := New(Options{Providers: fakeRegistry{"openai": newFake("openai")}, ModelGroups: map[string]ModelGroup{"g": {Models: []string{"openai/gpt-4o"}, Fallbacks: []string{"opneai/gpt-4o"}}}})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `unknown provider "opneai"`) {
		t.Errorf("New with a misspelled fallback: %v", err)
	}
}

// A gateway draws its shuffled groups' orders from Options.Rand: two gateways on sources
// of one seed order a weighted and an unweighted group alike request for request, one on
// another seed does not (the draws are the gateway's, not the process's).
func TestShuffleDrawsFromOptionsRand(t *testing.T) {
	orders := func(seed uint64) []string {
		h := newHarness(t, func(o *Options) {
			o.Rand = rand.NewPCG(seed, 7)
			o.Breaker.Failures = -1 // every member stays in the draw
			o.ModelGroups = map[string]ModelGroup{
				"weighted": {Models: []string{"a/m1", "b/m2", "a/m3"}, Shuffle: true, Weights: []float64{1, 1, 1}},
				"even":     {Models: []string{"a/m1", "b/m2", "a/m3"}, Shuffle: true},
			}
		})
		var out []string
		for range 40 {
			for _, group := range []string{"weighted", "even"} {
				for _, m := range []string{"m1", "m2", "m3"} {
					h.a.on(m, step{err: &providers.Error{Kind: providers.KindOverloaded, Message: "busy"}})
					h.b.on(m, step{err: &providers.Error{Kind: providers.KindOverloaded, Message: "busy"}})
				}
				_, err := h.g.Complete(context.Background(), Scope{}, chatRequest(t, `{"model":"`+group+`","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`))
				var failed *AllFailedError
				if !errors.As(err, &failed) {
					t.Fatalf("%s: %v, want every member to fail", group, err)
				}
				var order []string
				for _, a := range failed.Attempts {
					order = append(order, a.Model)
				}
				out = append(out, strings.Join(order, ","))
			}
		}
		return out
	}
	one, same, other := orders(1), orders(1), orders(2)
	if strings.Join(one, ";") != strings.Join(same, ";") {
		t.Errorf("one seed, two gateways: orders differ:\n%v\n%v", one, same)
	}
	if strings.Join(one, ";") == strings.Join(other, ";") {
		t.Errorf("two seeds gave the same %d orders", len(one))
	}
	if len(one) == 0 || strings.Count(one[0], ",") != 2 {
		t.Fatalf("orders %v: want every member tried once", one)
	}
}
