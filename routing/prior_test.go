package routing_test

import (
	"math"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
)

func TestLookupBenchmark(t *testing.T) {
	for name, want := range map[string]float64{
		"openai/gpt-4o":                                  0.726,
		"openai/gpt-4o-2024-05-13":                       0.726,
		"openai/gpt-4o-mini-2024-07-18":                  0.631,
		"anthropic/claude-3-opus-20240229":               0.685,
		"anthropic/claude-3-5-sonnet-latest":             0.780,
		"gemini/gemini-1.5-pro-002":                      0.690,
		"together/meta-llama/Meta-Llama-3.1-8B-Instruct": 0.483,
		"meta/llama-3.1-8b-instruct":                     0.483,
		"qwen/qwen2.5-7b-instruct":                       0.563,
		"google/gemma-2-9b-it":                           0.521,
		"deepseek/deepseek-chat":                         0.837,
		"llama-3.3-70b-instruct":                         0.689,
		"openrouter/meta-llama/llama-3.1-405b-instruct":  0.733,
		// Matched by providers.CanonicalModel: dots as dashes, -latest and dates dropped.
		"openrouter/anthropic/claude-3.5-sonnet":   0.780,
		"gemini/gemini-1-5-pro-latest":             0.690,
		"openrouter/openai/gpt-4o-mini-2024-07-18": 0.631,
	} {
		b, ok := routing.LookupBenchmark(name)
		if !ok || b.Quality != want || b.Source == "" {
			t.Errorf("%s: %+v %v, want quality %v with a source", name, b, ok, want)
		}
	}
	for _, name := range []string{"nvidia/llama3-chatqa-1.5-8b", "acme/gpt-4o-ish", "openai/gpt-4"} {
		if b, ok := routing.LookupBenchmark(name); ok && b.Quality > 0 {
			t.Errorf("%s should be unknown, got %+v", name, b)
		}
	}
}

// TestLookupBenchmarkCurrentModels: the models users call in 2025-26 have figures, under
// the names providers and gateways give them, and the order of each vendor's line-up is
// the order of its published figures.
func TestLookupBenchmarkCurrentModels(t *testing.T) {
	q := func(name string) routing.Benchmark {
		t.Helper()
		b, ok := routing.LookupBenchmark(name)
		if !ok || b.Quality <= 0 || b.Source == "" {
			t.Fatalf("%s: no figure (%+v)", name, b)
		}
		return b
	}
	for _, name := range []string{
		"openai/gpt-5-2025-08-07", "openrouter/openai/gpt-5-mini", "azure/gpt-4.1-mini", "openai/o3", "openai/o4-mini",
		"anthropic/claude-sonnet-4-5-20250929", "openrouter/anthropic/claude-sonnet-4.5",
		"bedrock/us.anthropic.claude-haiku-4-5-20251001-v1:0", "anthropic/claude-opus-4-1-20250805",
		"gemini/gemini-2.5-pro", "vertex_ai/gemini-2.5-flash", "groq/openai/gpt-oss-120b", "xai/grok-4-0709",
	} {
		if b := q(name); !b.FromGPQA || b.GPQA <= 0 {
			t.Errorf("%s: %+v, want an MMLU-Pro estimate from its GPQA figure", name, b)
		}
	}
	for _, name := range []string{
		"together_ai/meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "qwen/qwen3-235b-a22b-instruct-2507",
		"deepseek/deepseek-v3.1", "fireworks_ai/accounts/fireworks/models/kimi-k2-instruct", "google/gemma-3-27b-it",
		"anthropic/claude-3-5-haiku-20241022", "gemini/gemini-2.0-flash",
	} {
		if b := q(name); b.FromGPQA {
			t.Errorf("%s: %+v, want its published MMLU-Pro figure", name, b)
		}
	}
	for _, line := range [][]string{
		{"gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-4.1-nano"},
		{"claude-sonnet-4-5", "claude-opus-4-1", "claude-sonnet-4", "claude-haiku-4-5", "claude-3-5-haiku", "claude-3-haiku"},
		{"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-2.0-flash-lite"},
	} {
		for i := 1; i < len(line); i++ {
			if a, b := q(line[i-1]), q(line[i]); a.Quality <= b.Quality {
				t.Errorf("%s (%.3f) not above %s (%.3f)", line[i-1], a.Quality, line[i], b.Quality)
			}
		}
	}
}

// TestGPQAToMMLUPro: on the models with both figures the estimate from GPQA stays close to
// the published MMLU-Pro figure, and it is increasing.
func TestGPQAToMMLUPro(t *testing.T) {
	var n, sumErr, maxErr float64
	for _, name := range []string{"gpt-4o", "gpt-4o-mini", "claude-3-opus", "claude-3-5-sonnet", "gemini-1.5-pro",
		"llama-3.1-405b-instruct", "llama-3.3-70b-instruct", "qwen2.5-72b-instruct", "deepseek-v3", "llama-4-maverick",
		"qwen3-235b-a22b-instruct-2507", "deepseek-r1-0528", "kimi-k2-instruct", "gemma-3-27b-it", "gemini-2.0-flash"} {
		b, ok := routing.LookupBenchmark(name)
		if !ok || b.GPQA <= 0 || b.FromGPQA {
			t.Fatalf("%s: %+v", name, b)
		}
		e := math.Abs(routing.GPQAToMMLUPro(b.GPQA) - b.Quality)
		n, sumErr, maxErr = n+1, sumErr+e, max(maxErr, e)
	}
	if sumErr/n > 0.03 || maxErr > 0.06 {
		t.Errorf("estimates from GPQA off the published MMLU-Pro by %.3f on average, at most %.3f", sumErr/n, maxErr)
	}
	for g := 0.2; g < 0.95; g += 0.05 {
		if routing.GPQAToMMLUPro(g+0.05) <= routing.GPQAToMMLUPro(g) {
			t.Errorf("not increasing at GPQA %.2f", g)
		}
	}
}

// TestDefaultRouterRanksCurrentModelsByTheirFigures: a model-select naming only models the
// learned router has not measured ranks them by their figures, not in request order, and
// the cost tradeoff takes a cheaper one within the tolerance.
func TestDefaultRouterRanksCurrentModelsByTheirFigures(t *testing.T) {
	s, _ := newSelector(t, routing.Options{})
	cands := []routing.Candidate{
		{Name: "openai/gpt-5-nano", Price: fp(0.225)},
		{Name: "openai/gpt-5-mini", Price: fp(1.125)},
		{Name: "openai/gpt-5", Price: fp(5.625)},
	}
	resp := mustSelect(t, s, "", &routing.Request{Messages: userMsg("Prove that there are infinitely many primes."), LLMProviders: cands})
	if got := strings.Join(labels(resp.Providers), ","); got != "openai/gpt-5,openai/gpt-5-mini,openai/gpt-5-nano" {
		t.Errorf("ranking %s", got)
	}
	for _, p := range resp.Providers {
		if p.ScoreSource != routing.SourceBenchmark {
			t.Errorf("%s: score source %q", p.Name, p.ScoreSource)
		}
	}
	resp = mustSelect(t, s, "", &routing.Request{Messages: userMsg("Prove that there are infinitely many primes."), LLMProviders: cands, Tradeoff: "cost"})
	if resp.LLMLabel != "openai/gpt-5-mini" {
		t.Errorf("cost tradeoff picked %s, want gpt-5-mini (within the tolerance of gpt-5, a fifth of its price)", resp.LLMLabel)
	}
}

// TestLookupBenchmarkRelative: a model newer than the table gets its newest older
// sibling's figure (same line, lower version), and a model selection says so.
func TestLookupBenchmarkRelative(t *testing.T) {
	for name, want := range map[string]string{
		"anthropic/claude-opus-4-6":            "claude-opus-4-1",
		"anthropic/claude-sonnet-4-6":          "claude-sonnet-4-5",
		"openai/gpt-5.1":                       "gpt-5",
		"openai/gpt-5.1-mini":                  "gpt-5-mini",
		"gemini/gemini-3-pro-preview":          "gemini-2.5-pro",
		"anthropic/claude-3-7-sonnet-20250219": "claude-3-5-sonnet-20241022",
		"openai/gpt-5":                         "", // in the table itself
		"openai/gpt-4o-mini":                   "", // no version to compare
		"openai/o5-mini":                       "", // "o5" is not a version number
		"acme/brand-new-model":                 "",
	} {
		rel, b, ok := routing.LookupBenchmarkRelative(name)
		if rel != want || ok != (want != "") || ok && b.Quality <= 0 {
			t.Errorf("%s: %q %+v %v, want %q", name, rel, b, ok, want)
		}
	}
	s, _ := newSelector(t, routing.Options{})
	resp := mustSelect(t, s, "", &routing.Request{Messages: userMsg("Prove that there are infinitely many primes."),
		LLMProviders: names("anthropic/claude-3-haiku", "anthropic/claude-opus-4-6")})
	if resp.LLMLabel != "anthropic/claude-opus-4-6" {
		t.Errorf("picked %s", resp.LLMLabel)
	}
	for _, p := range resp.Providers {
		if p.Name == "anthropic/claude-opus-4-6" && (p.ScoreSource != routing.SourceBenchmarkRelative || p.EstimatedFrom != "claude-opus-4-1") {
			t.Errorf("%+v", p)
		}
	}
}
