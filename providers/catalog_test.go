package providers_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12+1e-9*math.Abs(b) }

func TestCatalogLookup(t *testing.T) {
	c := providers.DefaultCatalog()
	if c != providers.DefaultCatalog() {
		t.Fatal("DefaultCatalog is parsed more than once")
	}
	if c.Len() < 1000 {
		t.Fatalf("embedded catalogue has %d chat models, want the LiteLLM chat set", c.Len())
	}
	tests := []struct {
		model, key string
		in, out    float64
	}{
		{"openai/gpt-4o", "gpt-4o", 2.5e-6, 1e-5},
		{"anthropic/claude-sonnet-4-20250514", "claude-sonnet-4-20250514", 3e-6, 1.5e-5},
		{"gemini/gemini-2.5-flash", "gemini/gemini-2.5-flash", 3e-7, 2.5e-6},
		{"together/meta-llama/Llama-3.3-70B-Instruct-Turbo", "together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo", 8.8e-7, 8.8e-7},
		{"fireworks/accounts/fireworks/models/llama-v3p1-8b-instruct", "fireworks_ai/accounts/fireworks/models/llama-v3p1-8b-instruct", 1e-7, 1e-7},
		{"openrouter/openai/gpt-4o", "openrouter/openai/gpt-4o", 2.5e-6, 1e-5},
		{"groq/llama-3.1-8b-instant", "groq/llama-3.1-8b-instant", 5e-8, 8e-8},
		{"deepseek/deepseek-chat", "deepseek/deepseek-chat", 2.8e-7, 4.2e-7},
		{"ollama/llama3", "ollama/llama3", 0, 0},
		{"my-proxy/gpt-4o", "gpt-4o", 2.5e-6, 1e-5}, // bare-model fallback
		{"gpt-4o", "gpt-4o", 2.5e-6, 1e-5},
	}
	for _, tc := range tests {
		p, ok := c.Lookup(tc.model)
		if !ok {
			t.Errorf("Lookup(%q) not found", tc.model)
			continue
		}
		if p.Key != tc.key || !near(p.InputPerToken, tc.in) || !near(p.OutputPerToken, tc.out) || !p.Known {
			t.Errorf("Lookup(%q) = %+v, want key %s in %g out %g", tc.model, p, tc.key, tc.in, tc.out)
		}
	}
	for _, m := range []string{"openai/no-such-model", "nobody/nothing", "", "text-embedding-3-small", "openai/text-embedding-3-small"} {
		if p, ok := c.Lookup(m); ok {
			t.Errorf("Lookup(%q) = %+v, want not found (unknown or not a chat model)", m, p)
		}
	}
	if !c.SupportsFunctionCalling("openai/gpt-4o") || c.SupportsFunctionCalling("fireworks/accounts/fireworks/models/llama-v3p1-8b-instruct") {
		t.Error("SupportsFunctionCalling does not follow the catalogue")
	}
	if got := c.MaxInputTokens("openai/gpt-4o"); got != 128000 {
		t.Errorf("MaxInputTokens(gpt-4o) = %d, want 128000", got)
	}
	if got := c.MaxInputTokens("nobody/nothing"); got != 0 {
		t.Errorf("MaxInputTokens(unknown) = %d, want 0", got)
	}
}

func TestCatalogCost(t *testing.T) {
	c := providers.DefaultCatalog()

	// gpt-4o: 1000 prompt tokens of which 400 cached, 500 completion tokens.
	got := c.Cost("openai/gpt-4o", providers.Usage{PromptTokens: 1000, CachedTokens: 400, CompletionTokens: 500})
	wantIn := 600*2.5e-6 + 400*1.25e-6
	wantOut := 500 * 1e-5
	if !got.Known || !near(got.InputUSD, wantIn) || !near(got.OutputUSD, wantOut) || !near(got.TotalUSD, wantIn+wantOut) {
		t.Errorf("gpt-4o cost = %+v, want in %g out %g", got, wantIn, wantOut)
	}

	// Anthropic: cache reads and writes have their own rates.
	got = c.Cost("anthropic/claude-sonnet-4-20250514", providers.Usage{PromptTokens: 1300, CachedTokens: 200, CacheCreationTokens: 100, CompletionTokens: 10})
	wantIn = 1000*3e-6 + 200*3e-7 + 100*3.75e-6
	if !near(got.InputUSD, wantIn) || !near(got.OutputUSD, 10*1.5e-5) {
		t.Errorf("claude cost = %+v, want in %g", got, wantIn)
	}

	// Claude 3.5 Sonnet, retired by Anthropic's own list and kept by gateways: priced from an
	// entry that has its cache rates (0.30 per 1M read, 3.75 written), whichever spelling.
	for _, id := range []string{"anthropic/claude-3-5-sonnet-20241022", "anthropic/claude-3-5-sonnet-latest", "anthropic/claude-3.5-sonnet"} {
		got = c.Cost(id, providers.Usage{PromptTokens: 10000, CachedTokens: 8000, CompletionTokens: 500})
		wantIn = 2000*3e-6 + 8000*3e-7
		if !got.Known || !near(got.InputUSD, wantIn) || !near(got.OutputUSD, 500*1.5e-5) {
			t.Errorf("%s cost = %+v, want in %g", id, got, wantIn)
		}
	}

	// Reasoning tokens at their own rate (dashscope/qwen-turbo: 2e-7 output, 5e-7 reasoning).
	got = c.Cost("dashscope/qwen-turbo", providers.Usage{PromptTokens: 100, CompletionTokens: 300, ReasoningTokens: 200})
	if !near(got.OutputUSD, 100*2e-7+200*5e-7) || !near(got.InputUSD, 100*5e-8) {
		t.Errorf("qwen-turbo cost = %+v", got)
	}

	// Unknown model: zero and not known, never a guess.
	got = c.Cost("openai/made-up-model", providers.Usage{PromptTokens: 100, CompletionTokens: 100})
	if got != (providers.Cost{}) {
		t.Errorf("unknown model cost = %+v, want zero with Known=false", got)
	}

	// Free local model: known, zero.
	got = c.Cost("ollama/llama3", providers.Usage{PromptTokens: 100, CompletionTokens: 100})
	if !got.Known || got.TotalUSD != 0 {
		t.Errorf("ollama cost = %+v, want known zero", got)
	}
}

func TestCatalogOverride(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "prices.json")
	doc := `{
	  "my-model": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "output_cost_per_reasoning_token": 4e-6,
	               "cache_read_input_token_cost": 1e-7, "max_input_tokens": 32000, "supports_function_calling": true, "mode": "chat"},
	  "gpt-4o": {"input_cost_per_token": "0.000001", "output_cost_per_token": 0.000003, "mode": "chat"},
	  "some-embedder": {"input_cost_per_token": 1e-8, "mode": "embedding"},
	  "half-priced": {"input_cost_per_token": 1e-6},
	  "last_updated": "2026-07-24"
	}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := providers.LoadCatalog(path)
	if err != nil {
		t.Fatal(err)
	}
	got := c.Cost("custom/my-model", providers.Usage{PromptTokens: 1000, CachedTokens: 500, CompletionTokens: 300, ReasoningTokens: 100})
	wantIn, wantOut := 500*1e-6+500*1e-7, 200*2e-6+100*4e-6
	if !got.Known || !near(got.InputUSD, wantIn) || !near(got.OutputUSD, wantOut) {
		t.Errorf("override cost = %+v, want in %g out %g", got, wantIn, wantOut)
	}
	if p, _ := c.Lookup("openai/gpt-4o"); !near(p.InputPerToken, 1e-6) || !near(p.OutputPerToken, 3e-6) {
		t.Errorf("override did not replace gpt-4o: %+v", p)
	}
	if p, _ := providers.DefaultCatalog().Lookup("openai/gpt-4o"); !near(p.InputPerToken, 2.5e-6) {
		t.Errorf("override changed the default catalogue: %+v", p)
	}
	if _, ok := c.Lookup("some-embedder"); ok {
		t.Error("embedding model kept in a chat catalogue")
	}
	if cost := c.Cost("half-priced", providers.Usage{PromptTokens: 10}); cost.Known {
		t.Errorf("model without an output rate priced as known: %+v", cost)
	}
	if !c.SupportsFunctionCalling("x/my-model") || c.MaxInputTokens("x/my-model") != 32000 {
		t.Error("override capabilities not read")
	}

	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{not json"), 0o600)
	if _, err := providers.LoadCatalog(bad); !errors.Is(err, providers.ErrInvalidCatalog) {
		t.Errorf("bad override: err = %v, want ErrInvalidCatalog", err)
	}
	if _, err := providers.LoadCatalog(filepath.Join(dir, "missing.json")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing override: err = %v", err)
	}
}

// TestLongPromptTiers: a prompt longer than a model's long-context threshold is priced,
// input and output, at that tier's rates (Gemini 2.5 Pro and Claude Sonnet 4.5 above
// 200,000 tokens, GPT-5.4 above 272,000); a shorter one, or a model without tiers, at the
// base rates.
func TestLongPromptTiers(t *testing.T) {
	cat := providers.DefaultCatalog()
	for _, c := range []struct {
		model string
		u     providers.Usage
		in    float64
		out   float64
	}{
		{"gemini/gemini-2.5-pro", providers.Usage{PromptTokens: 100_000, CompletionTokens: 1000}, 100_000 * 1.25e-6, 1000 * 1e-5},
		{"gemini/gemini-2.5-pro", providers.Usage{PromptTokens: 200_000, CompletionTokens: 1000}, 200_000 * 1.25e-6, 1000 * 1e-5},
		{"gemini/gemini-2.5-pro", providers.Usage{PromptTokens: 300_000, CompletionTokens: 1000}, 300_000 * 2.5e-6, 1000 * 1.5e-5},
		{"anthropic/claude-sonnet-4-5", providers.Usage{PromptTokens: 250_000, CachedTokens: 100_000, CacheCreationTokens: 50_000, CompletionTokens: 1000},
			100_000*6e-6 + 100_000*6e-7 + 50_000*7.5e-6, 1000 * 2.25e-5},
		{"openai/gpt-5.4", providers.Usage{PromptTokens: 272_001, CompletionTokens: 10}, 272_001 * 5e-6, 10 * 2.25e-5},
		{"openai/gpt-5.4", providers.Usage{PromptTokens: 272_000, CompletionTokens: 10}, 272_000 * 2.5e-6, 10 * 1.5e-5},
		{"openai/gpt-4o", providers.Usage{PromptTokens: 300_000, CompletionTokens: 10}, 300_000 * 2.5e-6, 10 * 1e-5},
	} {
		got := cat.Cost(c.model, c.u)
		if !got.Known || !near(got.InputUSD, c.in) || !near(got.OutputUSD, c.out) || !near(got.TotalUSD, c.in+c.out) {
			t.Errorf("%s %+v: %+v, want input %.6f output %.6f", c.model, c.u, got, c.in, c.out)
		}
	}
	p, _ := cat.Lookup("gemini/gemini-2.5-pro")
	if len(p.Tiers) != 1 || p.Tiers[0].Above != 200_000 {
		t.Errorf("tiers %+v", p.Tiers)
	}
}
