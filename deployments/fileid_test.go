package deployments

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestStoredIDOfConfigSkipped: a stored deployment whose id a config file's entry gives
// too (model_info.id; the file changed after the deployment was added) is skipped as
// LiteLLM skips it: the gateway's deployments (what /model/info shows) have that id once,
// the file's; the stored one's model_name is not served; a warning names the id.
// shadowedStoredID stores a deployment with id "shared" (model_name stored-team), then
// starts again, logging to logger, with a config file whose own deployment (from-file) has
// that id: the restarted Service, synced, and its gateway.
func shadowedStoredID(t *testing.T, logger *slog.Logger) (*Service, *completions.Gateway) {
	t.Helper()
	ctx := context.Background()
	st := memstore.New()
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	svc, _ := review27cService(t, st, reg, nil)
	if _, err := svc.Add(ctx, Input{ModelName: "stored-team", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "sk-stored"},
		ModelInfo: map[string]any{"id": "shared"}}); err != nil {
		t.Fatal(err)
	}

	// The next start, with a config file that gives the id to its own deployment.
	config := []byte("model_list:\n  - model_name: from-file\n    litellm_params:\n      model: openai/gpt-4o-mini\n      api_key: sk-file\n    model_info:\n      id: shared\n")
	reg = providers.FromEnv(func(string) string { return "" }, providers.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	restarted, err := New(Options{Store: st, Gateway: g, Registry: reg, Config: config, SecretKey: []byte("salt"),
		LookupEnv: func(string) (string, bool) { return "", false }, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := restarted.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	return restarted, g
}

func TestStoredIDOfConfigSkipped(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	restarted, g := shadowedStoredID(t, slog.New(slog.NewTextHandler(&logs, nil)))
	var withID []completions.Deployment
	for _, d := range g.Deployments() {
		if d.ID == "shared" {
			withID = append(withID, d)
		}
	}
	if len(withID) != 1 || withID[0].Stored || withID[0].ModelName != "from-file" {
		t.Errorf("deployments with id shared: %+v, want the config file's only", withID)
	}
	if g.IsModelGroup("stored-team") {
		t.Error("the skipped stored deployment's model_name is served")
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "id=shared") {
		t.Errorf("no warning naming the id: %s", logs.String())
	}
	// A deployment added after it is served beside the file's.
	if _, err := restarted.Add(ctx, Input{ModelName: "other", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "sk-other"}}); err != nil {
		t.Fatal(err)
	}
	if !g.IsModelGroup("other") || !g.IsModelGroup("from-file") {
		t.Errorf("groups after an add: %v", g.ModelGroups())
	}
}
