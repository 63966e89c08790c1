package deployments

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestReview27cProviderNameOfAnotherConfig: a provider configured otherwise
// (--providers-config) under the name a stored deployment's provider entry would take
// ("openai-prod-…" for model_name prod with its own api_key, named by its id) is neither
// replaced by the
// deployment's (sending the --model-groups members that call it to the deployment's
// endpoint with its key) nor removed when the deployment is deleted; the deployment is a
// FieldError naming model_name (review 27c).
func TestReview27cProviderNameOfAnotherConfig(t *testing.T) {
	ctx := context.Background()
	in := Input{ModelName: "prod", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "sk-stored", "api_base": "https://stored.example/v1"},
		ModelInfo: map[string]any{"id": "prod-1"}}
	// The name its entry takes, from a server where nothing else holds it.
	dry, dryGateway := review27cService(t, memstore.New(), providers.FromEnv(func(string) string { return "" }, providers.Options{}), nil)
	if _, err := dry.Add(ctx, in); err != nil {
		t.Fatal(err)
	}
	name, _, _ := strings.Cut(memberOf(dryGateway, "prod-1"), "/")
	if name == "" {
		t.Fatal("the deployment is not served")
	}

	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	fc := &providers.FileConfig{Providers: []providers.ProviderConfig{{Name: name, Format: providers.FormatOpenAI, BaseURL: "https://config.example/v1", APIKey: "sk-config"}}}
	if err := reg.Configure(fc, nil, providers.Options{}); err != nil {
		t.Fatal(err)
	}
	own, err := reg.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]completions.ModelGroup{"internal": {Models: []string{name + "/gpt-4o"}}}
	svc, _ := review27cService(t, memstore.New(), reg, groups)

	_, err = svc.Add(ctx, in)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "model_name" {
		t.Errorf("Add of a deployment whose provider takes the name of another's: %v, want a FieldError naming model_name", err)
	}
	if p, err := reg.Lookup(name); err != nil || p != own {
		t.Fatalf("the configured provider %s was replaced (%v): its members now call another endpoint", name, err)
	}
	if err == nil {
		list, _ := svc.List(ctx)
		for _, d := range list {
			if _, err := svc.Delete(ctx, d.ID); err != nil {
				t.Fatal(err)
			}
		}
		if p, err := reg.Lookup(name); err != nil || p != own {
			t.Fatalf("after the delete the configured provider %s is %v, %v", name, p, err)
		}
	}
}
