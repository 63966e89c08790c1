package deployments

import (
	"context"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestReview28rcLongModelNameStored: a stored deployment whose model_name is long (its
// provider entry's slug cut to 56 characters) is added and served: the id's hash put after
// the slug keeps the entry's name within a provider name's 64 characters.
func TestReview28rcLongModelNameStored(t *testing.T) {
	ctx := context.Background()
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	svc, g := review27cService(t, memstore.New(), reg, nil)
	name := strings.Repeat("a", 60)
	if _, err := svc.Add(ctx, Input{ModelName: name, LiteLLMParams: map[string]any{"model": "openai/gpt-4o",
		"api_key": "sk-1", "api_base": "http://127.0.0.1:1/v1"}, ModelInfo: map[string]any{"id": "long"}}); err != nil {
		t.Fatalf("adding a deployment of a %d-character model_name: %v", len(name), err)
	}
	m := memberOf(g, "long")
	if m == "" {
		t.Fatal("the deployment is not served")
	}
	if prov, _, _ := strings.Cut(m, "/"); len(prov) > 64 {
		t.Errorf("provider entry %q is %d characters, more than 64", prov, len(prov))
	}
}
