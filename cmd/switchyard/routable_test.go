package main

import (
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestRoutableNeedsAConfiguredProvider: optimization jobs are refused at submit for a
// target model whose provider is unknown or has no API key here (ollama needs none).
func TestRoutableNeedsAConfiguredProvider(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-test"}
	w := &wiring{registry: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{})}
	for model, want := range map[string]string{
		"openai/gpt-4o-mini":         "",
		"ollama/llama3.2":            "",
		"anthropic/claude-3-5-haiku": "no API key",
		"nosuch/model":               "nosuch",
		"gpt-4o":                     "provider/model",
	} {
		err := w.routable(model)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v, want routable", model, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: err %v, want one naming %q", model, err, want)
		}
	}
}
