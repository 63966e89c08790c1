package deployments

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// review27cService is a Service over st with a gateway of no model groups.
func review27cService(t *testing.T, st *store.Store, reg *providers.Registry, groups map[string]completions.ModelGroup) (*Service, *completions.Gateway) {
	t.Helper()
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), ModelGroups: groups})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(Options{Store: st, Gateway: g, Registry: reg, Groups: groups, SecretKey: []byte("salt"),
		LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	return svc, g
}

// TestReview27cProviderThatCannotRegister: a deployment whose provider entry parses but
// cannot be built (a vertex_credentials file that does not exist) is a FieldError naming
// the field, and nothing is stored: the store and the gateway stay as they were, and the
// next deployment is added and served (review 27c).
func TestReview27cProviderThatCannotRegister(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	svc, g := review27cService(t, st, reg, nil)
	missing := filepath.Join(t.TempDir(), "no-such-credentials.json")
	_, err := svc.Add(ctx, Input{ModelName: "gem", LiteLLMParams: map[string]any{"model": "vertex_ai/gemini-2.0-flash",
		"vertex_project": "p", "vertex_location": "us-central1", "vertex_credentials": missing}})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "litellm_params.vertex_credentials" {
		t.Fatalf("Add with a credentials file that does not exist: %v, want a FieldError naming litellm_params.vertex_credentials", err)
	}
	if list, err := svc.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("stored after the refusal: %v %v, want nothing", list, err)
	}
	if _, err := svc.Add(ctx, Input{ModelName: "team", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "sk-x"}}); err != nil {
		t.Fatalf("the next deployment: %v", err)
	}
	if !g.IsModelGroup("team") {
		t.Errorf("the next deployment is not served: groups %v", g.ModelGroups())
	}
	if err := svc.Sync(ctx); err != nil {
		t.Errorf("Sync after the refusal (as at the next start): %v", err)
	}
}

// TestReview27cUpdateThatCannotRegister: an update whose provider cannot be built is
// refused and the deployment keeps serving as it was (review 27c).
func TestReview27cUpdateThatCannotRegister(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	svc, g := review27cService(t, st, reg, nil)
	d, err := svc.Add(ctx, Input{ModelName: "gem", LiteLLMParams: map[string]any{"model": "vertex_ai/gemini-2.0-flash", "vertex_project": "p", "vertex_location": "us-central1"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Update(ctx, d.ID, Input{LiteLLMParams: map[string]any{"vertex_credentials": filepath.Join(t.TempDir(), "gone.json")}})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("Update with a credentials file that does not exist: %v, want ErrInvalid", err)
	}
	list, err := svc.List(ctx)
	if err != nil || len(list) != 1 || list[0].LiteLLMParams["vertex_credentials"] != nil {
		t.Fatalf("stored after the refused update: %+v %v, want the deployment as it was", list, err)
	}
	if !g.IsModelGroup("gem") {
		t.Errorf("the deployment stopped serving")
	}
	if err := svc.Sync(ctx); err != nil {
		t.Errorf("Sync after the refusal: %v", err)
	}
}
