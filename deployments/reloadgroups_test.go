package deployments

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestReloadGroupsSwapsTheGroupsConfiguredOtherwise: --model-groups read anew on SIGHUP
// is served with the stored deployments, and from then on /model/new judges names by the
// new groups (a group gone may be taken, one added may not: before, Add judged by the
// groups of start). A group named as a stored deployment is, or groups the gateway
// refuses, leave the groups in force; a later Sync (another replica's /model/new, polled)
// keeps the reloaded groups rather than putting back those of start.
func TestReloadGroupsSwapsTheGroupsConfiguredOtherwise(t *testing.T) {
	ctx := context.Background()
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	start := map[string]completions.ModelGroup{"smart": {Models: []string{"openai/gpt-4o"}}}
	svc, g := review27cService(t, memstore.New(), reg, start)
	add := func(name string) error {
		_, err := svc.Add(ctx, Input{ModelName: name, LiteLLMParams: map[string]any{"model": "openai/gpt-4o-mini"}})
		return err
	}
	if err := add("team"); err != nil {
		t.Fatal(err)
	}
	if err := add("smart"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Add of a --model-groups name before the reload: %v, want refused", err)
	}
	if err := svc.ReloadGroups(ctx, map[string]completions.ModelGroup{"quick": {Models: []string{"openai/gpt-4o-mini"}}}); err != nil {
		t.Fatal(err)
	}
	if got := g.ModelGroups(); !slices.Equal(got, []string{"quick", "team"}) {
		t.Fatalf("groups after the reload: %v, want quick and team", got)
	}
	if err := add("smart"); err != nil {
		t.Fatalf("Add of a name the reload dropped: %v", err)
	}
	if err := add("quick"); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "--model-groups") {
		t.Fatalf("Add of a name the reload added: %v, want refused", err)
	}
	inForce := g.ModelGroups()
	for _, bad := range []map[string]completions.ModelGroup{
		{"team": {Models: []string{"openai/gpt-4o"}}},
		{"quick": {Models: []string{"nope/gpt-4o"}}},
	} {
		if err := svc.ReloadGroups(ctx, bad); err == nil {
			t.Fatalf("groups %v were taken", bad)
		}
		if got := g.ModelGroups(); !slices.Equal(got, inForce) {
			t.Fatalf("groups after refused ones: %v, want %v", got, inForce)
		}
	}
	if err := svc.ReloadGroups(ctx, map[string]completions.ModelGroup{"team": {Models: []string{"openai/gpt-4o"}}}); !errors.Is(err, ErrNameTaken) {
		t.Fatalf("a group named as a stored deployment: %v, want ErrNameTaken", err)
	}
	list, err := svc.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Delete(ctx, list[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := g.ModelGroups(); !slices.Equal(got, []string{"quick", "smart"}) {
		t.Fatalf("groups after a later application: %v, want quick and smart", got)
	}
}

// TestSetOtherProvidersAfterAReload: the providers configured otherwise were those of
// start, so after --providers-config was read anew a /model/new whose provider entry took
// the name of an entry the file added replaced it (its members calling the deployment's
// endpoint), and one taking a name the file dropped was refused. SetOtherProviders names
// them anew; a name a stored deployment's entry has is refused, changing nothing.
func TestSetOtherProvidersAfterAReload(t *testing.T) {
	ctx := context.Background()
	in := Input{ModelName: "prod", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "sk-stored", "api_base": "https://stored.example/v1"},
		ModelInfo: map[string]any{"id": "prod-1"}}
	dry, dryGateway := review27cService(t, memstore.New(), providers.FromEnv(func(string) string { return "" }, providers.Options{}), nil)
	if _, err := dry.Add(ctx, in); err != nil {
		t.Fatal(err)
	}
	name, _, _ := strings.Cut(memberOf(dryGateway, "prod-1"), "/")
	if name == "" {
		t.Fatal("the deployment is not served")
	}

	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	svc, _ := review27cService(t, memstore.New(), reg, nil)
	fc := &providers.FileConfig{Providers: []providers.ProviderConfig{{Name: name, Format: providers.FormatOpenAI, BaseURL: "https://config.example/v1", APIKey: "sk-config"}}}
	if err := svc.SetOtherProviders([]string{name, "openai"}); err != nil {
		t.Fatal(err)
	}
	if err := reg.Configure(fc, nil, providers.Options{}); err != nil {
		t.Fatal(err)
	}
	own, _ := reg.Lookup(name)
	var fe *FieldError
	if _, err := svc.Add(ctx, in); !errors.As(err, &fe) || fe.Field != "model_name" {
		t.Fatalf("Add taking the name of an entry a reload added: %v, want a FieldError naming model_name", err)
	}
	if p, _ := reg.Lookup(name); p != own {
		t.Fatal("the reloaded file's entry was replaced by a deployment's")
	}
	// The file drops it: the name is free again.
	reg.Remove(name)
	if err := svc.SetOtherProviders(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Add(ctx, in); err != nil {
		t.Fatalf("Add taking a name the file dropped: %v", err)
	}
	if err := svc.SetOtherProviders([]string{name}); !errors.Is(err, ErrNameTaken) {
		t.Fatalf("a file entry named as a stored deployment's: %v, want ErrNameTaken", err)
	}
	if _, err := svc.Add(ctx, Input{ModelName: "prod", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "sk-stored", "api_base": "https://stored.example/v1"},
		ModelInfo: map[string]any{"id": "prod-2"}}); err != nil {
		t.Fatalf("after a refused SetOtherProviders the names in force changed: %v", err)
	}
}

// TestReloadListsAndRoutesWhatTheNewFileNames: the names /v1/models lists beside the
// groups (a model_name with '/', a wildcard's "provider/*") were those of start until a
// restart, and a file no longer having any wildcard kept routing by the old ones (a nil
// Routes.Wildcards keeps those in force); both now follow the file read anew.
func TestReloadListsAndRoutesWhatTheNewFileNames(t *testing.T) {
	ctx := context.Background()
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	first := []byte("model_list:\n" +
		"  - model_name: openai/gpt-4o\n    litellm_params:\n      model: openai/gpt-4o\n" +
		"  - model_name: \"*\"\n    litellm_params:\n      model: \"anthropic/*\"\n")
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), ListConfigured: true,
		Listed: []string{"openai/gpt-4o", "anthropic/*"}, Wildcards: []completions.Wildcard{{Pattern: "*", Model: "anthropic/*"}}})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(Options{Store: memstore.New(), Gateway: g, Registry: reg, Config: first, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if full, _ := g.ResolveModel("my-finetune"); full != "anthropic/my-finetune" {
		t.Fatalf("my-finetune resolves to %q before the reload, want the wildcard's anthropic/my-finetune", full)
	}
	if err := svc.Reload(ctx, []byte("model_list:\n  - model_name: openai/gpt-4o-mini\n    litellm_params:\n      model: openai/gpt-4o-mini\n")); err != nil {
		t.Fatal(err)
	}
	if got := g.ListedModels(); !slices.Equal(got, []string{"openai/gpt-4o-mini"}) {
		t.Fatalf("listed after the reload: %v, want the new file's name", got)
	}
	if full, _ := g.ResolveModel("my-finetune"); full != "my-finetune" {
		t.Fatalf("my-finetune resolves to %q after the reload: the wildcard the new file no longer has still routes", full)
	}
}

// TestStoredDeploymentNamedAsAGroupIsWarnedAbout: a replica whose --model-groups did not
// yet have a name (another replica reloaded a file adding it) stores a deployment under
// it; the replicas that have the group served the stored deployment in its place without a
// word. They still serve it (its calls go where it says), and now say so at warn, naming
// the model_name.
func TestStoredDeploymentNamedAsAGroupIsWarnedAbout(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	stale, _ := review27cService(t, st, reg, nil)
	if _, err := stale.Add(ctx, Input{ModelName: "quick", LiteLLMParams: map[string]any{"model": "openai/gpt-4o-mini"}}); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	groups := map[string]completions.ModelGroup{"quick": {Models: []string{"openai/gpt-4o"}}}
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), ModelGroups: groups})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(Options{Store: st, Gateway: g, Registry: reg, Groups: groups, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "model_name=quick") {
		t.Fatalf("no warning naming the stored deployment that replaces group quick:\n%s", logs.String())
	}
}
