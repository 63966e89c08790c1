package providers_test

import (
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestGenAIName: presets are named by the GenAI semantic conventions' well-known values
// (not Switchyard's names), a custom entry by what it calls (its format, or the host of
// an OpenAI-format base URL), and presets the conventions do not list keep their name.
func TestGenAIName(t *testing.T) {
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	for name, want := range map[string]string{
		"openai": "openai", "anthropic": "anthropic", "gemini": "gcp.gemini", "vertex_ai": "gcp.vertex_ai",
		"bedrock": "aws.bedrock", "azure": "azure.ai.openai", "mistral": "mistral_ai", "groq": "groq",
		"deepseek": "deepseek", "xai": "x_ai", "cohere": "cohere",
		"together": "together", "openrouter": "openrouter", "ollama": "ollama",
		"not-registered": "not-registered",
	} {
		if got := reg.GenAIName(name); got != want {
			t.Errorf("preset %s: %q, want %q", name, got, want)
		}
	}
	for _, tc := range []struct {
		p    providers.Provider
		want string
	}{
		{providers.NewOpenAI(providers.Config{Name: "my-vllm", BaseURL: "http://gpu:8000/v1"}), "openai"},
		{providers.NewOpenAI(providers.Config{Name: "groq-fast", BaseURL: "https://api.groq.com/openai/v1"}), "groq"},
		{providers.NewOpenAI(providers.Config{Name: "pplx", BaseURL: "https://api.perplexity.ai"}), "perplexity"},
		{providers.NewOpenAI(providers.Config{Name: "eu-4o", BaseURL: "https://my-res.openai.azure.com/openai/v1"}), "azure.ai.openai"},
		{providers.NewAzure(providers.AzureConfig{Config: providers.Config{Name: "azure-eu", BaseURL: "https://eu.example.com"}}), "azure.ai.openai"},
		{providers.NewAnthropic(providers.Config{Name: "claude-proxy", BaseURL: "https://proxy.example.com"}), "anthropic"},
		{providers.NewGemini(providers.Config{Name: "gem2"}), "gcp.gemini"},
		{providers.NewBedrock(providers.Config{Name: "bedrock-eu"}), "aws.bedrock"},
	} {
		if got := providers.GenAIName(tc.p.Name(), tc.p); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.p.Name(), got, tc.want)
		}
	}
}
