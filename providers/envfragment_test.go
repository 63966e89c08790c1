package providers_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestEnvBaseURLFragmentRefused: a preset's base URL variable with a fragment (which the
// request URLs would carry and no client sends) is refused — by CheckEnv at start, and by
// Configure for a config entry of that preset that takes its base URL from the variable —
// naming the variable, without echoing what follows '#'; a query, or a config entry's own
// base_url, stays allowed.
func TestEnvBaseURLFragmentRefused(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	for _, name := range []string{"OPENAI_BASE_URL", "GROQ_BASE_URL", "ANTHROPIC_BASE_URL"} {
		getenv := env(map[string]string{name: "https://proxy.example/v1#sk-secret"})
		err := providers.CheckEnv(getenv)
		var ce *providers.ConfigError
		if !errors.As(err, &ce) || !errors.Is(err, providers.ErrInvalidConfig) || !strings.Contains(ce.Field, name) || !strings.Contains(ce.Message, "fragment") {
			t.Errorf("%s: CheckEnv = %v, want an error naming the variable's fragment", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "sk-secret") {
			t.Errorf("%s: the error echoes the fragment: %v", name, err)
		}
	}
	if err := providers.CheckEnv(env(map[string]string{"OPENAI_BASE_URL": "https://proxy.example/v1?code=x"})); err != nil {
		t.Errorf("a base URL with a query: %v", err)
	}
	if err := providers.CheckEnv(nil); err != nil {
		t.Errorf("no environment: %v", err)
	}

	getenv := env(map[string]string{"OPENAI_BASE_URL": "https://proxy.example/v1#sk-secret"})
	r := providers.FromEnv(nil, providers.Options{})
	err := r.Configure(&providers.FileConfig{Providers: []providers.ProviderConfig{{Name: "openai", APIKey: "k"}}}, getenv, providers.Options{})
	var ce *providers.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(ce.Field, "OPENAI_BASE_URL") {
		t.Errorf("Configure with the variable's base URL: %v, want an error naming OPENAI_BASE_URL", err)
	}
	if err := r.Configure(&providers.FileConfig{Providers: []providers.ProviderConfig{{Name: "openai", APIKey: "k", BaseURL: "https://own.example/v1"}}}, getenv, providers.Options{}); err != nil {
		t.Errorf("Configure with the entry's own base_url: %v", err)
	}
}
