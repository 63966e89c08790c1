package providers_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

func TestCanonicalModel(t *testing.T) {
	for id, want := range map[string]string{
		"anthropic/claude-3-5-haiku-20241022":                          "claude-3-5-haiku",
		"anthropic/claude-3.5-haiku-latest":                            "claude-3-5-haiku",
		"openrouter/anthropic/claude-3.5-haiku":                        "claude-3-5-haiku",
		"us.anthropic.claude-3-5-haiku-20241022-v1:0":                  "claude-3-5-haiku",
		"bedrock/us-gov-east-1/anthropic.claude-3-haiku-20240307-v1:0": "claude-3-haiku",
		"vertex_ai/claude-3-5-haiku@20241022":                          "claude-3-5-haiku",
		"openai/gpt-4-0613":                                            "gpt-4",
		"openai/gpt-4o-2024-08-06":                                     "gpt-4o",
		"openai/gpt-4o-mini":                                           "gpt-4o-mini",
		"gemini/gemini-1.5-pro-002":                                    "gemini-1-5-pro",
		"mistral/mistral-large-latest":                                 "mistral-large",
		"mistral/mistral-large-2411":                                   "mistral-large-2411",
		"together/meta-llama/Llama-3.3-70B-Instruct-Turbo":             "llama-3-3-70b-instruct-turbo",
		"  GPT-4.1  ": "gpt-4-1",
	} {
		if got := providers.CanonicalModel(id); got != want {
			t.Errorf("CanonicalModel(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestCatalogLookupNormalised(t *testing.T) {
	c := providers.DefaultCatalog()
	for _, tc := range []struct {
		id, key string // key "" means unknown
	}{
		{"anthropic/claude-3-5-haiku-20241022", "vercel_ai_gateway/anthropic/claude-3.5-haiku"},
		{"anthropic/claude-3-5-haiku", "vercel_ai_gateway/anthropic/claude-3.5-haiku"},
		{"anthropic/claude-3.5-haiku-latest", "vercel_ai_gateway/anthropic/claude-3.5-haiku"},
		{"openrouter/anthropic/claude-3.5-haiku", "vercel_ai_gateway/anthropic/claude-3.5-haiku"},
		{"anthropic/claude-haiku-4.5", "claude-haiku-4-5"},
		{"anthropic/claude-haiku-4-5-latest", "claude-haiku-4-5"},
		{"openrouter/anthropic/claude-haiku-4-5", "openrouter/anthropic/claude-haiku-4.5"},
		{"openai/gpt-4o", "gpt-4o"},
		{"openai/gpt-4o-mini", "gpt-4o-mini"},
		{"openai/GPT-4o-Mini", "gpt-4o-mini"},
		{"openai/gpt-4-0613", "gpt-4-0613"}, // exact keys first
		{"openai/gpt-4o-latest", "gpt-4o"},
		{"openai/unknown-model", ""},
		{"nobody/claude-99", ""},
		{"openai/gpt-4o-mini-turbo-x", ""},
	} {
		p, ok := c.Lookup(tc.id)
		switch {
		case tc.key == "" && ok:
			t.Errorf("Lookup(%q) = %q, want unknown", tc.id, p.Key)
		case tc.key != "" && (!ok || p.Key != tc.key || !p.Known):
			t.Errorf("Lookup(%q) = %q (known %v, found %v), want %q", tc.id, p.Key, p.Known, ok, tc.key)
		}
	}
	// A shorter id never matches a longer model's entry, nor the reverse.
	if p, _ := c.Lookup("openai/gpt-4o"); p.Key == "gpt-4o-mini" {
		t.Error("gpt-4o matched gpt-4o-mini")
	}
	if c.Cost("anthropic/claude-3-5-haiku", providers.Usage{PromptTokens: 1000, CompletionTokens: 100}).TotalUSD <= 0 {
		t.Error("normalised id has no cost")
	}
}

// TestREADMEModelsArePriced: every gateway model id the README uses ("provider/model", or a
// {"provider": ..., "model": ...} pair) has a price in the embedded catalogue, however it
// is spelled. (URL paths such as Azure's {base}/openai/v1/… are not ids; ids under other prefixes, such as "google/gemma-2-9b-it", are a router's
// class ids from its training data, not models the gateway calls.)
func TestREADMEModelsArePriced(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const prov = `(openai|anthropic|gemini|mistral|groq|together|fireworks|deepseek|xai|openrouter|azure|vertex_ai)`
	ids := map[string]bool{}
	for _, at := range regexp.MustCompile(`\b`+prov+`/[A-Za-z0-9._:/-]*[A-Za-z0-9]`).FindAllIndex(b, -1) {
		if at[0] > 0 && (b[at[0]-1] == '/' || b[at[0]-1] == '.') {
			continue // a URL's path (Azure's /openai/deployments/…) or a dot directory (~/.gemini/settings.json), not a model id
		}
		ids[string(b[at[0]:at[1]])] = true
	}
	for _, m := range regexp.MustCompile(`"provider":\s*"`+prov+`",\s*"model":\s*"([^"]+)"`).FindAllStringSubmatch(string(b), -1) {
		ids[m[1]+"/"+m[2]] = true
	}
	if len(ids) < 3 {
		t.Fatalf("found only %v in the README", ids)
	}
	c := providers.DefaultCatalog()
	for id := range ids {
		p, ok := c.Lookup(id)
		if !ok {
			p, ok = c.Embeddings().Lookup(id) // the embeddings examples' models
		}
		if _, audio := c.LookupAudio(id); !ok && audio {
			continue // the audio examples' models
		}
		if rt, realtime := c.LookupRealtime(id); !ok && realtime && rt.Known {
			continue // the realtime examples' models
		}
		if !ok && strings.Contains(id, "-moderation-") {
			continue // the moderation examples' models: free, so not in the catalogue
		}
		if !ok && (c.ImageCost(id, providers.ImageUsage{Images: 1}).Known || c.ImageCost(id, providers.ImageUsage{InputTokens: 1, OutputTokens: 1, Images: 1}).Known) {
			continue // the image examples' models, priced per image or per token (gpt-image)
		}
		if !ok || !p.Known {
			t.Errorf("README model %q has no price in the embedded catalogue", id)
		}
	}
}
