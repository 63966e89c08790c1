package providers_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestConfigBaseURLFragmentRefused: a --providers-config base_url with a fragment (which
// the request URLs would carry and no client sends) is refused at load naming the field,
// without echoing what follows '#'; built-in and custom entries alike.
func TestConfigBaseURLFragmentRefused(t *testing.T) {
	for _, doc := range []string{
		`{"name": "my-vllm", "format": "openai", "base_url": "https://gpu.example/v1#sk-secret"}`,
		`{"name": "openai", "base_url": "https://proxy.example/v1#"}`,
		`{"name": "azure-eu", "format": "azure", "base_url": "https://eu.example#sk-secret", "api_version": "v1"}`,
	} {
		_, err := providers.ParseConfig([]byte(`{"providers": [` + doc + `]}`))
		var ce *providers.ConfigError
		if !errors.As(err, &ce) || ce.Field != "providers[0].base_url" || !strings.Contains(ce.Message, "fragment") {
			t.Errorf("%s: err = %v, want one naming providers[0].base_url's fragment", doc, err)
			continue
		}
		if strings.Contains(err.Error(), "sk-secret") {
			t.Errorf("%s: the error echoes the fragment: %v", doc, err)
		}
	}
	// A query stays allowed (some gateways take a key there).
	if _, err := providers.ParseConfig([]byte(`{"providers": [{"name": "my-vllm", "format": "openai", "base_url": "https://gpu.example/v1?code=x"}]}`)); err != nil {
		t.Errorf("base_url with a query: %v", err)
	}
}
