package completions

import (
	"context"
	"math"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestDeploymentNamesRouteToTheirDeployments: a request naming a deployment's own name
// (Options.DeploymentNames: a LiteLLM config's litellm_params.model "b/gpt-4o" of a
// deployment called as a/gpt-4o) is sent to that deployment, not to provider b, with the
// deployment's model group as its attempt's (its id's) group; a name a wildcard matches
// goes the wildcard's way instead, unless it is the deployment's model_name, which comes
// first, as LiteLLM's proxy tries model_names, then wildcards, then deployments' models.
// The native API (provider/model names) is routed the same way.
func TestDeploymentNamesRouteToTheirDeployments(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"my": {Models: []string{"a/gpt-4o"}}}
		o.ListConfigured, o.Listed = true, []string{"a/o3"}
		o.DeploymentNames = map[string][]NamedDeployment{
			"b/gpt-4o": {{ModelName: "my", Member: "a/gpt-4o"}},
			"team/x":   {{ModelName: "team/x", Member: "a/o3"}},
		}
	})
	ask := func(model string) *Response {
		t.Helper()
		c := OpenAIChatRequest{Model: model, Messages: []OpenAIMessage{{Role: "user", Content: OpenAIContent{Parts: []OpenAIContentPart{{Type: "text", Text: "hi"}}}}}}
		req, err := c.ToRequest()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := h.g.Complete(context.Background(), Scope{}, req)
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		return resp
	}
	resp := ask("b/gpt-4o")
	if resp.Provider != "a" || h.a.callCount("gpt-4o") != 1 || h.b.callCount("gpt-4o") != 0 {
		t.Errorf("b/gpt-4o: answered by %s; a called %d, b %d: want the deployment a/gpt-4o only", resp.Provider, h.a.callCount("gpt-4o"), h.b.callCount("gpt-4o"))
	}
	if n := len(resp.Attempts); n == 0 || resp.Attempts[n-1].ModelGroup != "my" {
		t.Errorf("attempts %+v: want the deployment's group my", resp.Attempts)
	}
	if !h.g.Serves("b/gpt-4o") || h.g.Serves("b/gpt-4o-mini") {
		t.Errorf("Serves b/gpt-4o %v, b/gpt-4o-mini %v: want true, false", h.g.Serves("b/gpt-4o"), h.g.Serves("b/gpt-4o-mini"))
	}
	if got, ok := h.g.ResolveModel("b/gpt-4o"); !ok || got != "b/gpt-4o" {
		t.Errorf("ResolveModel(b/gpt-4o) = %q, %v; want itself, true", got, ok)
	}
	if !h.g.IsDeploymentName("b/gpt-4o") || h.g.IsDeploymentName("a/gpt-4o") || h.g.IsDeploymentName("my") {
		t.Error("IsDeploymentName: want true for b/gpt-4o only")
	}
	if ask("team/x"); h.a.callCount("o3") != 1 {
		t.Errorf("team/x: a/o3 called %d times, want 1", h.a.callCount("o3"))
	}
	// The native API's provider/model names it too: its deployment, not provider b.
	if _, err := h.g.Complete(context.Background(), Scope{}, userReq("hi", "b/gpt-4o")); err != nil || h.a.callCount("gpt-4o") != 2 || h.b.callCount("gpt-4o") != 0 {
		t.Errorf("native b/gpt-4o: %v; a called %d, b %d: want the deployment a/gpt-4o", err, h.a.callCount("gpt-4o"), h.b.callCount("gpt-4o"))
	}

	// A wildcard matching the name takes it; the deployment's model_name stays its own.
	if err := h.g.SetRoutes(Routes{ModelGroups: map[string]ModelGroup{"my": {Models: []string{"a/gpt-4o"}}}, Wildcards: []Wildcard{{Pattern: "*", Model: "b/*"}}}); err != nil {
		t.Fatal(err)
	}
	if ask("b/gpt-4o"); h.b.callCount("gpt-4o") != 1 || h.a.callCount("gpt-4o") != 2 {
		t.Errorf("b/gpt-4o under a wildcard: a called %d, b %d; want b (the wildcard's)", h.a.callCount("gpt-4o"), h.b.callCount("gpt-4o"))
	}
	if ask("team/x"); h.a.callCount("o3") != 2 {
		t.Errorf("team/x under a wildcard: a/o3 called %d times, want 2 (a model_name comes first)", h.a.callCount("o3"))
	}
	// SetRoutes without DeploymentNames keeps them; an empty map drops them.
	if err := h.g.SetRoutes(Routes{ModelGroups: map[string]ModelGroup{"my": {Models: []string{"a/gpt-4o"}}}, Wildcards: []Wildcard{}, DeploymentNames: map[string][]NamedDeployment{}}); err != nil {
		t.Fatal(err)
	}
	if h.g.Serves("b/gpt-4o") || h.g.IsDeploymentName("b/gpt-4o") {
		t.Error("b/gpt-4o served after its deployment name was dropped")
	}
	if err := h.g.SetRoutes(Routes{ModelGroups: map[string]ModelGroup{"my": {Models: []string{"a/gpt-4o"}}}, DeploymentNames: map[string][]NamedDeployment{"x/y": {}}}); err == nil {
		t.Error("a deployment name of no deployment: SetRoutes took it")
	}
}

// TestAllowsAnswerAndCostAs: an answer's model is allowed when the key allows it or a
// model the answer is another version of (gpt-4o-2024-08-06 of gpt-4o, directly or as a
// group's member), not another model (gpt-4o-mini) nor the version of another provider
// (b/gpt-4o-2024-08-06 for a key of a/gpt-4o); a group is priced at its most expensive
// member for the usage priced (members without a price passed over), whichever the router
// would pick, so that a cost checked against a budget is never under the call's.
func TestAllowsAnswerAndCostAs(t *testing.T) {
	rates := tablePricesFake{"a/cheap": {1e-6, 1e-6}, "a/dear-in": {10e-6, 0}, "a/dear-out": {0, 10e-6}, "a/x": {2e-6, 2e-6}}
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"g": {Models: []string{"a/plain", "a/own"}},
			"mixed": {Models: []string{"a/cheap", "a/free", "a/dear-in", "a/dear-out"}}, "unpriced": {Models: []string{"a/free"}}}
		o.Prices = rates
	})
	for allowed, cases := range map[string]map[string]bool{
		// Another provider's version of it is another deployment, not the key's model.
		"a/gpt-4o": {"gpt-4o-2024-08-06": true, "a/gpt-4o-2024-08-06": true, "gpt-4o-mini-2024-07-18": false, "a/gpt-4o": true, "b/gpt-4o-2024-08-06": false, "b/gpt-4o": false},
		"g":        {"plain-2024-08-06": true, "own": true, "other": false, "a/plain-2024-08-06": true, "b/plain-2024-08-06": false},
	} {
		scope := Scope{Budget: NewBudget(BudgetLimits{AllowedModels: []string{allowed}})}
		for model, want := range cases {
			if got := h.g.AllowsAnswer(scope, model); got != want {
				t.Errorf("key of %s: AllowsAnswer(%s) = %v, want %v", allowed, model, got, want)
			}
		}
	}
	if !h.g.AllowsAnswer(Scope{}, "anything") {
		t.Error("no budget: AllowsAnswer false")
	}
	prompt, answer := providers.Usage{PromptTokens: 1000}, providers.Usage{CompletionTokens: 1000}
	for _, c := range []struct {
		name  string
		u     providers.Usage
		want  float64
		known bool
	}{
		{"mixed", prompt, 0.01, true},    // a/dear-in's
		{"mixed", answer, 0.01, true},    // a/dear-out's
		{"a/cheap", prompt, 0.001, true}, // a model, not a group: its own
		{"a/x", answer, 0.002, true},
		{"unpriced", prompt, 0, false},
	} {
		got := h.g.CostAs(c.name, c.u)
		if got.Known != c.known || math.Abs(got.TotalUSD-c.want) > 1e-12 {
			t.Errorf("CostAs(%s, %+v) = %+v, want %v (known %v)", c.name, c.u, got, c.want, c.known)
		}
	}
}

// tablePricesFake prices each model named at its per-token input and output rates; any
// other is unpriced.
type tablePricesFake map[string][2]float64

func (f tablePricesFake) Cost(model string, u providers.Usage) providers.Cost {
	r, ok := f[model]
	if !ok {
		return providers.Cost{}
	}
	in, out := float64(u.PromptTokens)*r[0], float64(u.CompletionTokens)*r[1]
	return providers.Cost{InputUSD: in, OutputUSD: out, TotalUSD: in + out, Known: true}
}
