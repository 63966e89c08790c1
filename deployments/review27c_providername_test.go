package deployments

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestReview27cProviderNameOfAnotherConfig: a provider configured otherwise
// (--providers-config) under the name a stored deployment's provider entry would take
// ("openai-prod" for model_name prod with its own api_key) is neither replaced by the
// deployment's (sending the --model-groups members that call it to the deployment's
// endpoint with its key) nor removed when the deployment is deleted; the deployment is a
// FieldError naming model_name (review 27c).
func TestReview27cProviderNameOfAnotherConfig(t *testing.T) {
	ctx := context.Background()
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	fc := &providers.FileConfig{Providers: []providers.ProviderConfig{{Name: "openai-prod", Format: providers.FormatOpenAI, BaseURL: "https://config.example/v1", APIKey: "sk-config"}}}
	if err := reg.Configure(fc, nil, providers.Options{}); err != nil {
		t.Fatal(err)
	}
	own, err := reg.Lookup("openai-prod")
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]completions.ModelGroup{"internal": {Models: []string{"openai-prod/gpt-4o"}}}
	svc, _ := review27cService(t, memstore.New(), reg, groups)

	_, err = svc.Add(ctx, Input{ModelName: "prod", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "sk-stored", "api_base": "https://stored.example/v1"}})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "model_name" {
		t.Errorf("Add of a deployment whose provider takes the name of another's: %v, want a FieldError naming model_name", err)
	}
	if p, err := reg.Lookup("openai-prod"); err != nil || p != own {
		t.Fatalf("the configured provider openai-prod was replaced (%v): its members now call another endpoint", err)
	}
	if err == nil {
		list, _ := svc.List(ctx)
		for _, d := range list {
			if _, err := svc.Delete(ctx, d.ID); err != nil {
				t.Fatal(err)
			}
		}
		if p, err := reg.Lookup("openai-prod"); err != nil || p != own {
			t.Fatalf("after the delete the configured provider openai-prod is %v, %v", p, err)
		}
	}
}
