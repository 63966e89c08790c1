package deployments

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// TestReloadGroupsReservedAcrossReplicas: once a reload of --model-groups on one replica
// adds a group, POST /model/new (or a rename by /model/update) of a deployment under that
// name on another replica sharing the store — whose own --model-groups are not reloaded yet
// — is refused naming model_name, and nothing is stored: before, it was stored, and the
// reloaded replica then served the stored deployment in place of its group (a name clash
// the reload's checks could not see, coming after them). Other names are taken; once a
// reload drops the group its name is free again. On every store driver (PostgreSQL's two
// replicas are two connections pools on one database).
func TestReloadGroupsReservedAcrossReplicas(t *testing.T) {
	for _, backend := range drivertest.Backends() {
		t.Run(backend.Name, func(t *testing.T) {
			ctx := context.Background()
			da := backend.Open(t)
			stA, stB := store.New(da), store.New(backend.Replica(t, da))
			newReg := func() *providers.Registry {
				return providers.FromEnv(func(string) string { return "" }, providers.Options{})
			}
			start := map[string]completions.ModelGroup{"smart": {Models: []string{"openai/gpt-4o"}}}
			a, _ := review27cService(t, stA, newReg(), start)
			b, _ := review27cService(t, stB, newReg(), start)
			add := func(svc *Service, name string) (Deployment, error) {
				return svc.Add(ctx, Input{ModelName: name, LiteLLMParams: map[string]any{"model": "openai/gpt-4o-mini"}})
			}

			if err := a.ReloadGroups(ctx, map[string]completions.ModelGroup{"smart": start["smart"], "fast": {Models: []string{"openai/gpt-4o-mini"}}}); err != nil {
				t.Fatal(err)
			}
			var fe *FieldError
			if _, err := add(b, "fast"); !errors.As(err, &fe) || fe.Field != "model_name" || !strings.Contains(fe.Message, `"fast"`) {
				t.Fatalf("/model/new of the group the other replica's reload added: %v, want a FieldError on model_name naming it", err)
			}
			other, err := add(b, "other")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.Update(ctx, other.ID, Input{ModelName: "fast"}); !errors.As(err, &fe) || fe.Field != "model_name" {
				t.Fatalf("/model/update renaming a deployment to the reloaded group: %v, want a FieldError on model_name", err)
			}
			if _, err := b.Update(ctx, other.ID, Input{LiteLLMParams: map[string]any{"rpm": 5}}); err != nil {
				t.Fatalf("an update keeping its own name: %v", err)
			}
			if recs, err := b.List(ctx); err != nil || len(recs) != 1 || recs[0].ModelName != "other" {
				t.Fatalf("stored after the refusals: %+v (%v), want only other", recs, err)
			}

			if err := a.ReloadGroups(ctx, start); err != nil {
				t.Fatal(err)
			}
			if _, err := add(b, "fast"); err != nil {
				t.Fatalf("/model/new of a group name a later reload dropped: %v", err)
			}
		})
	}
}

// TestReloadGroupsRacingReplicaAdd: a reload adding a group on one replica and /model/new of
// a deployment under that name on another, run at once, never both succeed: the reload's
// check of the stored deployments and its record of the names are one transaction, and so
// are the addition's read of that record and its write (on PostgreSQL, SERIALIZABLE ones).
// Run many times; the served state agrees with whichever won.
func TestReloadGroupsRacingReplicaAdd(t *testing.T) {
	for _, backend := range drivertest.Backends() {
		t.Run(backend.Name, func(t *testing.T) {
			ctx := context.Background()
			da := backend.Open(t)
			stA, stB := store.New(da), store.New(backend.Replica(t, da))
			newReg := func() *providers.Registry {
				return providers.FromEnv(func(string) string { return "" }, providers.Options{})
			}
			start := map[string]completions.ModelGroup{"smart": {Models: []string{"openai/gpt-4o"}}}
			a, _ := review27cService(t, stA, newReg(), start)
			b, _ := review27cService(t, stB, newReg(), start)
			reloads, adds := 0, 0
			for i := range 20 {
				name := "race-" + strings.Repeat("x", i%3) + string(rune('a'+i))
				groups := map[string]completions.ModelGroup{"smart": start["smart"], name: {Models: []string{"openai/gpt-4o-mini"}}}
				done := make(chan error, 1)
				go func() {
					_, err := b.Add(ctx, Input{ModelName: name, LiteLLMParams: map[string]any{"model": "openai/gpt-4o-mini"}})
					done <- err
				}()
				reloadErr := a.ReloadGroups(ctx, groups)
				addErr := <-done
				if reloadErr == nil && addErr == nil {
					t.Fatalf("%s: both the reload making it a group and the other replica's /model/new of it succeeded", name)
				}
				if reloadErr != nil && !errors.Is(reloadErr, ErrNameTaken) {
					t.Fatalf("%s: reload: %v", name, reloadErr)
				}
				var fe *FieldError
				if addErr != nil && (!errors.As(addErr, &fe) || fe.Field != "model_name") {
					t.Fatalf("%s: /model/new: %v", name, addErr)
				}
				if reloadErr == nil {
					reloads++
				} else {
					adds++
				}
			}
			if reloads+adds != 20 {
				t.Fatalf("%d reloads and %d additions won of 20", reloads, adds)
			}
		})
	}
}
