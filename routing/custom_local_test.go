package routing_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/switchyard-ai/switchyard/inference"
	"github.com/switchyard-ai/switchyard/routing"
)

// trainToyRouter fits a real n-gram + softmax router on prompts where Python questions are
// best answered by acme/coder and cooking questions by acme/chef.
func trainToyRouter(t testing.TB) *inference.Model {
	t.Helper()
	var ex []inference.Example
	code := []string{"write a python function to reverse a list", "fix this python bug in my loop",
		"how do I sort a dict by value in python", "python code to parse json", "debug my python script that crashes",
		"implement binary search in python", "python class for a stack", "read a csv file with python pandas",
		"python regex to match emails", "unit tests for my python function"}
	cook := []string{"how long should I boil an egg", "recipe for banana bread", "what spices go with lamb",
		"how to make a sourdough starter", "best way to roast vegetables", "substitute for butter in cookies",
		"how to cook rice on the stove", "easy pasta sauce recipe", "how to marinate chicken", "what wine goes with salmon"}
	for i := range code {
		ex = append(ex, inference.Example{Text: code[i], Labels: []string{"acme/coder"}},
			inference.Example{Text: cook[i], Labels: []string{"acme/chef"}})
	}
	m, _, err := inference.Fit(context.Background(), ex, inference.FitOptions{Seed: 1, L2: []float64{1e-3}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCustomRouterTrainedWithInference routes through preference_id with a router trained
// by inference.Fit and served by LocalModels.
func TestCustomRouterTrainedWithInference(t *testing.T) {
	local := &routing.LocalModels{}
	local.Add("alice", "toy", trainToyRouter(t))
	s, _ := newSelector(t, routing.Options{CustomModels: local})
	cands := func() []routing.Candidate { return names("acme/chef", "openai/gpt-4o", "acme/coder") }
	for prompt, want := range map[string]string{
		"please write python code that merges two lists": "acme/coder",
		"what is a good recipe for tomato soup":          "acme/chef",
	} {
		resp := mustSelect(t, s, "alice", &routing.Request{Messages: userMsg(prompt), LLMProviders: cands(), PreferenceID: "toy"})
		if resp.LLMLabel != want {
			t.Errorf("%q routed to %s, want %s (%+v)", prompt, resp.LLMLabel, want, resp.Providers)
		}
		if resp.Providers[2].Name != "openai/gpt-4o" || resp.Providers[2].ScoreSource != routing.SourceLearned {
			t.Errorf("candidate unknown to the router should come last, by the learned default router: %+v", resp.Providers)
		}
	}
	// Another owner cannot use alice's router.
	_, err := s.Select(context.Background(), "bob", &routing.Request{Messages: userMsg("x"), LLMProviders: cands(), PreferenceID: "toy"})
	if !errors.Is(err, routing.ErrNotFound) {
		t.Errorf("bob using alice's router: %v", err)
	}
	local.Remove("alice", "toy")
	_, err = s.Select(context.Background(), "alice", &routing.Request{Messages: userMsg("x"), LLMProviders: cands(), PreferenceID: "toy"})
	if !errors.Is(err, routing.ErrNotFound) {
		t.Errorf("removed router: %v", err)
	}
}

func ExampleLocalModels() {
	// Train with inference.Fit, then route with the trained model through preference_id.
	var ex []inference.Example
	for i := 0; i < 10; i++ {
		ex = append(ex,
			inference.Example{Text: fmt.Sprintf("write go code for task %d", i), Labels: []string{"acme/coder"}},
			inference.Example{Text: fmt.Sprintf("tell me a bedtime story number %d", i), Labels: []string{"acme/writer"}})
	}
	model, _, err := inference.Fit(context.Background(), ex, inference.FitOptions{L2: []float64{1e-3}})
	if err != nil {
		panic(err)
	}
	local := &routing.LocalModels{}
	local.Add("me", "my-router", model)
	st := memstoreNew()
	sel := routing.NewSelector(routing.Options{Store: st, CustomModels: local})
	resp, err := sel.Select(context.Background(), "me", &routing.Request{
		Messages:     []routing.Message{{Role: "user", Content: "write go code that sorts a slice"}},
		Models:       []routing.Candidate{{Provider: "acme", Model: "writer"}, {Provider: "acme", Model: "coder"}},
		PreferenceID: "my-router",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.LLMLabel)
	// Output: acme/coder
}
