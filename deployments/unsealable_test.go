package deployments

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestUnsealableKeyLeftOut: after LITELLM_SALT_KEY changed, a stored deployment whose
// api_key cannot be unsealed no longer stops the start: Sync succeeds, serves the others,
// leaves that one out of routing (Unserved names it with why), and logs an error naming
// its id; an update of something else is refused naming litellm_params.api_key, and an
// update with a new api_key mends it.
func TestUnsealableKeyLeftOut(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	svc, _ := review27cService(t, st, reg, nil) // salt "salt"
	for _, in := range []Input{
		{ModelName: "sealed", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "sk-sealed"}, ModelInfo: map[string]any{"id": "broken-1"}},
		{ModelName: "from-env", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_base": "https://fine.example/v1"}, ModelInfo: map[string]any{"id": "fine-1"}},
	} {
		if _, err := svc.Add(ctx, in); err != nil {
			t.Fatal(err)
		}
	}

	// The next start, under another salt.
	var logs bytes.Buffer
	reg = providers.FromEnv(func(string) string { return "" }, providers.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	restarted, err := New(Options{Store: st, Gateway: g, Registry: reg, SecretKey: []byte("another salt"),
		LookupEnv: func(string) (string, bool) { return "", false }, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := restarted.Sync(ctx); err != nil {
		t.Fatalf("Sync with a key that cannot be unsealed: %v, want the others served", err)
	}
	if !g.IsModelGroup("from-env") || g.IsModelGroup("sealed") {
		t.Errorf("groups %v: want from-env served, sealed not", g.ModelGroups())
	}
	un := restarted.Unserved()
	if len(un) != 1 || un[0].ID != "broken-1" || !strings.Contains(un[0].Error, "LITELLM_SALT_KEY") {
		t.Errorf("Unserved: %+v, want broken-1 with why", un)
	}
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "id=broken-1") {
		t.Errorf("no error logged naming the id: %s", logs.String())
	}
	// Another deployment may still be added while it is unserved.
	if _, err := restarted.Add(ctx, Input{ModelName: "later", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "sk-later"}}); err != nil {
		t.Fatalf("Add beside the unserved one: %v", err)
	}

	_, err = restarted.Update(ctx, "broken-1", Input{LiteLLMParams: map[string]any{"rpm": 5}})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "litellm_params.api_key" {
		t.Errorf("an update leaving the unsealable api_key: %v, want a FieldError naming litellm_params.api_key", err)
	}
	if _, err := restarted.Update(ctx, "broken-1", Input{LiteLLMParams: map[string]any{"api_key": "sk-new"}}); err != nil {
		t.Fatalf("an update with a new api_key: %v", err)
	}
	if !g.IsModelGroup("sealed") || len(restarted.Unserved()) != 0 {
		t.Errorf("after the new api_key: groups %v, unserved %+v; want it served", g.ModelGroups(), restarted.Unserved())
	}
}
