package routing

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

func TestCompletionsRankerOrdersByQuality(t *testing.T) {
	sel := NewSelector(Options{Store: memstore.New()})
	r := CompletionsRanker{Selector: sel}
	msgs := []providers.Message{{Role: "user", Content: "Prove that there are infinitely many primes."}}
	// The default router estimates gpt-4o far above Llama 3.1 8B on a proof (0.78 against
	// 0.55); the given order is the reverse.
	got, err := r.Rank(context.Background(), msgs, []string{"meta-llama/llama-3.1-8b-instruct", "openai/gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[openai/gpt-4o meta-llama/llama-3.1-8b-instruct]" {
		t.Fatalf("ranked %v", got)
	}
	// Every model comes back exactly once, models with slashes in their names included.
	in := []string{"openrouter/meta-llama/llama-3-8b", "openai/gpt-4o", "acme/unknown"}
	got, err = r.Rank(context.Background(), msgs, in)
	if err != nil || len(got) != 3 {
		t.Fatalf("%v %v", got, err)
	}
	seen := map[string]bool{}
	for _, m := range got {
		seen[m] = true
	}
	for _, m := range in {
		if !seen[m] {
			t.Fatalf("%s lost: %v", m, got)
		}
	}
	if got[0] != "openai/gpt-4o" {
		t.Fatalf("known strong model not first: %v", got)
	}
}

// RankTradeoff puts the cheapest model within the router's tolerance of the best first (a
// model group's tradeoff): on this question the learned router puts Claude 3.5 Sonnet
// (0.82) above Mistral Large (0.80), which is within its tolerance at under half the price.
func TestCompletionsRankerTradeoff(t *testing.T) {
	sel := NewSelector(Options{Store: memstore.New(), Catalog: ProvidersCatalog(providers.DefaultCatalog())})
	r := CompletionsRanker{Selector: sel}
	msgs := []providers.Message{{Role: "user", Content: "Solve: 12 * 13 = ?"}}
	models := []string{"mistral/mistral-large-latest", "anthropic/claude-3-5-sonnet-20241022"}
	got, err := r.Rank(context.Background(), msgs, append([]string(nil), models...))
	if err != nil || fmt.Sprint(got) != "[anthropic/claude-3-5-sonnet-20241022 mistral/mistral-large-latest]" {
		t.Fatalf("by quality: %v, %v", got, err)
	}
	got, err = r.RankTradeoff(context.Background(), msgs, append([]string(nil), models...), "cost")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[mistral/mistral-large-latest anthropic/claude-3-5-sonnet-20241022]" {
		t.Fatalf("cost tradeoff ranked %v, want the cheaper model first", got)
	}
	if _, err := r.RankTradeoff(context.Background(), msgs, models, "size"); err == nil {
		t.Error("an unknown tradeoff ranked without error")
	}
	// RankFastest: by the gateway's measured latencies, the faster model within the
	// tolerance goes first; the slower one keeps second place; without figures the quality
	// order holds.
	for _, c := range []struct {
		lat  map[string]float64
		want string
	}{
		{map[string]float64{"mistral/mistral-large-latest": 0.9, "anthropic/claude-3-5-sonnet-20241022": 0.3}, "[anthropic/claude-3-5-sonnet-20241022 mistral/mistral-large-latest]"},
		{map[string]float64{"mistral/mistral-large-latest": 0.2, "anthropic/claude-3-5-sonnet-20241022": 0.3}, "[mistral/mistral-large-latest anthropic/claude-3-5-sonnet-20241022]"},
		{nil, "[anthropic/claude-3-5-sonnet-20241022 mistral/mistral-large-latest]"},
	} {
		got, err := r.RankFastest(context.Background(), msgs, append([]string(nil), models...), c.lat)
		if err != nil || fmt.Sprint(got) != c.want {
			t.Errorf("latencies %v: ranked %v (%v), want %s", c.lat, got, err, c.want)
		}
	}
}

// BenchmarkCompletionsRankerAgentPrompt ranks 5 models for a coding agent's request as a
// routed model group does: a 26 kB system prompt, 10 rounds of tool calls and 4 kB results.
func BenchmarkCompletionsRankerAgentPrompt(b *testing.B) {
	sel := NewSelector(Options{Store: memstore.New(), Catalog: ProvidersCatalog(providers.DefaultCatalog())})
	r := CompletionsRanker{Selector: sel}
	msgs := []providers.Message{{Role: "system", Content: strings.Repeat("You are an interactive CLI tool that helps users with software engineering tasks. ", 320)},
		{Role: "user", Content: "The tests in pkg/foo fail; find out why and fix them."}}
	for i := range 10 {
		msgs = append(msgs, providers.Message{Role: "assistant", Content: fmt.Sprintf("Reading file %d.", i)},
			providers.Message{Role: "tool", Content: strings.Repeat("func TestFoo(t *testing.T) { if got := Foo(); got != 42 { t.Fatal(got) } }\n", 55)})
	}
	models := []string{"openai/gpt-4o", "openai/gpt-4o-mini", "anthropic/claude-3-5-sonnet-20241022", "mistral/mistral-large-latest", "gemini/gemini-1.5-pro"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Rank(context.Background(), msgs, slices.Clone(models)); err != nil {
			b.Fatal(err)
		}
	}
}

// The ranker reads the task, not an agent's system prompt: system turns are left out, the
// first user turn and the last turns are kept, each cut to its beginning.
func TestRankedView(t *testing.T) {
	msgs := []providers.Message{{Role: "system", Content: strings.Repeat("s", 50000)}, {Role: "user", Content: strings.Repeat("task ", 2000)}}
	for i := range 20 {
		msgs = append(msgs, providers.Message{Role: "assistant", Content: fmt.Sprintf("step %d", i)}, providers.Message{Role: "tool", Content: strings.Repeat("r", 5000)})
	}
	v := rankedView(msgs)
	if len(v) != 1+rankedTurns || v[0].Role != "user" || len(v[0].Content) != rankedTaskBytes || v[1].Content != "step 16" {
		t.Fatalf("view of %d turns: first %q… (%d bytes), second %q", len(v), v[0].Content[:10], len(v[0].Content), v[1].Content)
	}
	for _, m := range v[1:] {
		if m.Role == "system" || len(m.Content) > rankedTurnBytes {
			t.Errorf("turn %s of %d bytes", m.Role, len(m.Content))
		}
	}
	// A conversation of system text only is read as it is.
	if v := rankedView([]providers.Message{{Role: "system", Content: "classify this"}}); len(v) != 1 || v[0].Content != "classify this" {
		t.Errorf("system-only view %+v", v)
	}
	// Cuts keep UTF-8 whole.
	if v := rankedView([]providers.Message{{Role: "user", Content: strings.Repeat("é", 3000)}}); !utf8.ValidString(v[0].Content) {
		t.Error("a cut split a character")
	}
}

// A latency tradeoff whose candidates declare no latency ranks by the measured figures the
// selector is given (Options.Latency: the gateway's); declared latencies are used alone.
func TestSelectorMeasuredLatency(t *testing.T) {
	measured := map[string]float64{"mistral/mistral-large-latest": 0.02, "anthropic/claude-3-5-sonnet-20241022": 0.05}
	sel := NewSelector(Options{Store: memstore.New(), Latency: func(m string) (float64, bool) {
		l, ok := measured[m]
		return l, ok
	}})
	r := CompletionsRanker{Selector: sel}
	msgs := []providers.Message{{Role: "user", Content: "Solve: 12 * 13 = ?"}}
	models := []string{"anthropic/claude-3-5-sonnet-20241022", "mistral/mistral-large-latest"}
	got, err := r.RankTradeoff(context.Background(), msgs, slices.Clone(models), "latency")
	if err != nil || fmt.Sprint(got) != "[mistral/mistral-large-latest anthropic/claude-3-5-sonnet-20241022]" {
		t.Errorf("measured: the faster model within the tolerance should lead: %v, %v", got, err)
	}
	measured["mistral/mistral-large-latest"] = 0.09
	if got, _ := r.RankTradeoff(context.Background(), msgs, slices.Clone(models), "latency"); got[0] != "anthropic/claude-3-5-sonnet-20241022" {
		t.Errorf("measured, Claude faster: %v", got)
	}
	// Declared latencies (RankFastest's) are not mixed with measured ones.
	// (Mixed, Mistral's measured 0.09 would beat Claude's declared 0.5.)
	got, _ = r.RankFastest(context.Background(), msgs, slices.Clone(models), map[string]float64{"anthropic/claude-3-5-sonnet-20241022": 0.5})
	if got[0] != "anthropic/claude-3-5-sonnet-20241022" {
		t.Errorf("declared: %v", got)
	}
}
