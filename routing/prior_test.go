package routing_test

import (
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
		"deepseek/deepseek-chat":                         0.759,
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
