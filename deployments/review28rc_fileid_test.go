package deployments

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestReview28rcUpdateOfShadowedStoredID: /model/update of an id a config file's entry
// gives and a stored deployment (skipped) has too is ErrInConfig, as the update of any
// deployment of the file: it changed the stored one no one is served, and answered as if
// the deployment served by that id had changed. Delete still removes the skipped one.
func TestReview28rcUpdateOfShadowedStoredID(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	svc, _ := review27cService(t, st, reg, nil)
	if _, err := svc.Add(ctx, Input{ModelName: "stored-team", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "sk-stored"},
		ModelInfo: map[string]any{"id": "shared"}}); err != nil {
		t.Fatal(err)
	}
	config := []byte("model_list:\n  - model_name: from-file\n    litellm_params:\n      model: openai/gpt-4o-mini\n      api_key: sk-file\n    model_info:\n      id: shared\n")
	reg = providers.FromEnv(func(string) string { return "" }, providers.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	restarted, err := New(Options{Store: st, Gateway: g, Registry: reg, Config: config, SecretKey: []byte("salt"),
		LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if err := restarted.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := restarted.Update(ctx, "shared", Input{ModelName: "renamed"}); !errors.Is(err, ErrInConfig) {
		t.Errorf("update of the file's id: %v, want ErrInConfig", err)
	}
	if list, _ := restarted.List(ctx); len(list) != 1 || list[0].ModelName != "stored-team" {
		t.Errorf("stored after the update: %+v, want stored-team unchanged", list)
	}
	if _, err := restarted.Delete(ctx, "shared"); err != nil {
		t.Errorf("delete of the skipped stored deployment: %v", err)
	}
	if list, _ := restarted.List(ctx); len(list) != 0 {
		t.Errorf("stored after the delete: %+v, want none", list)
	}
}
