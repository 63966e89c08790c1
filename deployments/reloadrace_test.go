package deployments

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestReloadGroupsRacingModelNew: a deployment stored under a name while a reload of
// --model-groups that adds that name is under way — by this process or another on the
// store, between the reload's check of the stored deployments and its swap — makes the
// reload refuse (ErrNameTaken naming the model_name) and keep the groups in force, rather
// than serve a group and a stored deployment under one name (before, only warned). A
// deployment added after the reload is refused naming model_name.
func TestReloadGroupsRacingModelNew(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	start := map[string]completions.ModelGroup{"smart": {Models: []string{"openai/gpt-4o"}}}
	reload := map[string]completions.ModelGroup{"quick": {Models: []string{"openai/gpt-4o-mini"}}}
	newReg := func() *providers.Registry {
		return providers.FromEnv(func(string) string { return "" }, providers.Options{})
	}
	a, ga := review27cService(t, st, newReg(), start)
	b, _ := review27cService(t, st, newReg(), start)
	add := func(svc *Service, name string) error {
		_, err := svc.Add(ctx, Input{ModelName: name, LiteLLMParams: map[string]any{"model": "openai/gpt-4o-mini"}})
		return err
	}
	for _, tc := range []struct {
		name  string
		adder *Service
		model string
	}{{"same replica", a, "quick"}, {"other replica", b, "quick-b"}} {
		groups := map[string]completions.ModelGroup{tc.model: reload["quick"]}
		var added error
		a.reloadChecked = func() { added = add(tc.adder, tc.model) }
		err := a.ReloadGroups(ctx, groups)
		a.reloadChecked = nil
		if added != nil {
			t.Fatalf("%s: the addition during the reload: %v", tc.name, added)
		}
		if !errors.Is(err, ErrNameTaken) || !strings.Contains(err.Error(), `"`+tc.model+`"`) {
			t.Fatalf("%s: the reload adding a group named as a deployment stored meanwhile: %v, want ErrNameTaken naming it", tc.name, err)
		}
		if _, ok := (*a.groups.Load())[tc.model]; ok {
			t.Fatalf("%s: the refused reload's groups are in force", tc.name)
		}
		if err := a.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if got := ga.ModelGroups(); !slices.Contains(got, "smart") || !slices.Contains(got, tc.model) {
			t.Fatalf("%s: served groups %v, want smart (in force) and the stored %s", tc.name, got, tc.model)
		}
	}
	// With the name free the reload is taken, and an addition after it is refused.
	if err := a.ReloadGroups(ctx, map[string]completions.ModelGroup{"fast": reload["quick"]}); err != nil {
		t.Fatal(err)
	}
	var fe *FieldError
	if err := add(a, "fast"); !errors.As(err, &fe) || fe.Field != "model_name" {
		t.Fatalf("an addition after the reload took the group's name: %v, want a FieldError on model_name", err)
	}
}
