package completions

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// reversingRanker is a test Ranker: it puts the models in reverse order and records the
// tradeoff it was asked for.
type reversingRanker struct {
	mu        sync.Mutex
	calls     int
	tradeoffs []string
}

func (r *reversingRanker) Rank(ctx context.Context, msgs []providers.Message, models []string) ([]string, error) {
	return r.RankTradeoff(ctx, msgs, models, "")
}

func (r *reversingRanker) RankTradeoff(_ context.Context, _ []providers.Message, models []string, tradeoff string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	r.tradeoffs = append(r.tradeoffs, tradeoff)
	slices.Reverse(models)
	return models, nil
}

func chatRequest(t *testing.T, body string) *Request {
	t.Helper()
	var o OpenAIChatRequest
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		t.Fatal(err)
	}
	r, err := o.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestModelGroups: a group's name answers with its models — in order, or routed by the
// ranker (with its tradeoff) — falling back through the rest; in fallback_models too; only
// on the stateless surfaces.
func TestModelGroups(t *testing.T) {
	ranker := &reversingRanker{}
	h := newHarness(t, func(o *Options) {
		o.Ranker = ranker
		o.ModelGroups = map[string]ModelGroup{
			"ordered": {Models: []string{"a/m1", "b/m2"}},
			"routed":  {Models: []string{"a/m1", "b/m2"}, Route: true},
			"cheap":   {Models: []string{"a/m1", "b/m2"}, Route: true, Tradeoff: "cost"},
			"spread":  {Models: []string{"a/m3", "b/m4"}, Shuffle: true},
		}
	})
	h.a.on("m1", step{err: &providers.Error{Kind: providers.KindOverloaded, Message: "busy"}})
	h.b.on("m2", step{text: "from b"})
	h.a.on("m3", step{text: "from a/m3"})
	ctx := context.Background()

	resp, err := h.g.Complete(ctx, Scope{}, chatRequest(t, `{"model":"ordered","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || resp.Provider != "b" || len(resp.Attempts) != 2 || resp.Attempts[0].Model != "a/m1" || ranker.calls != 0 {
		t.Fatalf("ordered: %+v, %v, ranker calls %d: want a/m1 then b/m2, unranked", resp, err, ranker.calls)
	}
	resp, err = h.g.Complete(ctx, Scope{}, chatRequest(t, `{"model":"routed","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || resp.Provider != "b" || len(resp.Attempts) != 1 || ranker.calls != 1 || ranker.tradeoffs[0] != "" || resp.ModelGroup != "routed" {
		t.Fatalf("routed: %+v, %v, ranker %+v: want b/m2 first (the ranker's order)", resp, err, ranker)
	}
	if _, err = h.g.Complete(ctx, Scope{}, chatRequest(t, `{"model":"cheap","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`)); err != nil || ranker.tradeoffs[1] != "cost" {
		t.Fatalf("cheap: %v, tradeoffs %v", err, ranker.tradeoffs)
	}
	// Among fallbacks a group adds its models, each model tried once.
	resp, err = h.g.Complete(ctx, Scope{}, chatRequest(t, `{"model":"a/m1","fallback_models":["ordered"],"max_retries":0,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || resp.Provider != "b" || len(resp.Attempts) != 2 || resp.Attempts[0].Model != "a/m1" {
		t.Fatalf("a group among fallbacks: %+v, %v", resp, err)
	}
	// Each model once however the lists name it: a group and an explicit name, twice the
	// same name.
	for _, body := range []string{
		`{"model":"ordered","fallback_models":["a/m1"],"max_retries":0,"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"a/m1","fallback_models":["a/m1","ordered"],"max_retries":0,"messages":[{"role":"user","content":"hi"}]}`,
	} {
		resp, err := h.g.Complete(ctx, Scope{}, chatRequest(t, body))
		if err != nil || len(resp.Attempts) != 2 || resp.Attempts[0].Model != "a/m1" || resp.Attempts[1].Model != "b/m2" {
			t.Errorf("%s: %+v, %v: want a/m1 once, then b/m2", body, resp, err)
		}
	}
	// A group's name is matched as written.
	var ve *ValidationError
	if _, err := h.g.Complete(ctx, Scope{}, chatRequest(t, `{"model":" ordered","messages":[{"role":"user","content":"hi"}]}`)); !errors.As(err, &ve) {
		t.Errorf("a padded group name: %v, want a validation error", err)
	}
	// A scoped key is held to the models a group may call: every member named, or the
	// group's name (its members as configured when the request comes).
	members := &Budget{limits: BudgetLimits{AllowedModels: []string{"a/m1", "b/m2"}}}
	if _, err := h.g.Complete(ctx, Scope{Budget: members}, chatRequest(t, `{"model":"ordered","messages":[{"role":"user","content":"hi"}]}`)); err != nil {
		t.Errorf("a key allowed every member: %v", err)
	}
	oneMember := &Budget{limits: BudgetLimits{AllowedModels: []string{"a/m1"}}}
	if _, err := h.g.Complete(ctx, Scope{Budget: oneMember}, chatRequest(t, `{"model":"ordered","messages":[{"role":"user","content":"hi"}]}`)); !errors.Is(err, ErrModelNotAllowed) {
		t.Errorf("a key allowed one member of two: %v, want ErrModelNotAllowed", err)
	}
	nameOnly := &Budget{limits: BudgetLimits{AllowedModels: []string{"ordered"}}}
	if _, err := h.g.Complete(ctx, Scope{Budget: nameOnly}, chatRequest(t, `{"model":"ordered","messages":[{"role":"user","content":"hi"}]}`)); err != nil {
		t.Errorf("a key allowed the group's name: %v", err)
	}
	if _, err := h.g.Complete(ctx, Scope{Budget: nameOnly}, chatRequest(t, `{"model":"a/m3","messages":[{"role":"user","content":"hi"}]}`)); !errors.Is(err, ErrModelNotAllowed) {
		t.Errorf("a key allowed the group's name, another model: %v, want ErrModelNotAllowed", err)
	}
	// A shuffled group spreads requests over its members: over 60 requests each is first
	// at least once (the chance that one never is: 2⁻⁵⁹), and the ranker is not asked.
	h.b.on("m4", step{text: "from b/m4"})
	calls := ranker.calls
	first := map[string]int{}
	for range 60 {
		resp, err := h.g.Complete(ctx, Scope{}, chatRequest(t, `{"model":"spread","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		first[resp.Provider+"/"+resp.Model]++
	}
	if first["a/m3"] == 0 || first["b/m4"] == 0 || ranker.calls != calls {
		t.Errorf("first answers %v, ranker calls %d: want both members first sometimes, no ranking", first, ranker.calls-calls)
	}
	// The native API keeps the spec's provider/model rule, and says why.
	if _, err := h.g.Complete(ctx, Scope{}, userReq("hi", "ordered")); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "model group") {
		t.Errorf("a group on the native API: %v, want ErrInvalid naming model groups", err)
	}
	if got, ok := h.g.ResolveModel("routed"); !ok || got != "routed" {
		t.Errorf("ResolveModel(routed) = %q, %v", got, ok)
	}
	if got := h.g.ModelGroups(); !slices.Equal(got, []string{"cheap", "ordered", "routed", "spread"}) {
		t.Errorf("ModelGroups() = %v", got)
	}
}

func TestModelGroupsChecked(t *testing.T) {
	for groups, want := range map[string]string{
		`{"a/b":{"models":["x/y"]}}`:                                   "no '/'",
		`{"g":{"models":[]}}`:                                          "1 to 10 models",
		`{"g":{"models":["gpt-4o"]}}`:                                  "provider/model",
		`{"g":{"models":["x/y"],"tradeoff":"cost"}}`:                   "needs route",
		`{"g":{"models":["x/y"],"route":true,"tradeoff":"size"}}`:      "must be cost or latency",
		`{"g":{"models":["x/y"],"fastest":true,"tradeoff":"latency"}}`: "needs route",
		`{"g":{"models":["x/y"],"route":true,"shuffle":true}}`:         "give one",
		`{"g":{"models":["x/y"],"route":true,"fastest":true}}`:         "give one",
		`{"g":{"models":["x/y"],"shuffle":true,"fastest":true}}`:       "give one",
		`{"g":{"models":["x/y"]}} {"h":{"models":["x/y"]}}`:            "data after the object",
		`{"g":{"models":["x/y"]}}}{"h":{"models":["x/y"]}}`:            "data after the object",
		`{"g":{"models":["x/y"],"rout":true}}`:                         "unknown field",
		"{\n  \"g\": {\"models\": [\"x/y\"],}\n}":                      "line 2",
	} {
		_, err := ParseModelGroups([]byte(groups))
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", groups, err, want)
		}
	}
	g, err := ParseModelGroups([]byte(`{"smart":{"models":["openai/gpt-4o","anthropic/claude-sonnet-4-5"],"route":true,"tradeoff":"cost"}}`))
	if err != nil || !g["smart"].Route || len(g["smart"].Models) != 2 {
		t.Fatalf("%+v, %v", g, err)
	}
	if _, err := New(Options{Providers: fakeRegistry{}, ModelGroups: map[string]ModelGroup{"g": {}}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("New with an empty group: %v", err)
	}
	// A member's provider must exist: a typo would fail every request.
	_, err = New(Options{Providers: fakeRegistry{"openai": newFake("openai")}, ModelGroups: map[string]ModelGroup{"g": {Models: []string{"opneai/gpt-4o", "openai/gpt-4o"}}}})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `unknown provider "opneai"`) {
		t.Errorf("New with a misspelled provider: %v", err)
	}
}

// The README's model groups example is a file serve accepts.
func TestREADMEModelGroupsExample(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "**Model groups.**")
	j := strings.Index(s[max(i, 0):], "```json\n")
	if i < 0 || j < 0 {
		t.Fatal("README has no model groups example")
	}
	doc := s[i+j+len("```json\n"):]
	doc = doc[:strings.Index(doc, "```")]
	groups, err := ParseModelGroups([]byte(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	if _, err := New(Options{Providers: reg, ModelGroups: groups}); err != nil {
		t.Fatal(err)
	}
}
