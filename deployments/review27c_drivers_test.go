package deployments

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// TestReview27cDeploymentsOnEveryDriver runs store.Deployments on every driver: two
// concurrent adds of one id store it once (the other ErrDuplicate), the api_key is sealed
// (never in clear in the store, a fresh nonce per seal), another replica on the same
// database serves the deployment after its Sync and drops it after the delete (review 27c).
func TestReview27cDeploymentsOnEveryDriver(t *testing.T) {
	for _, b := range drivertest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			d := b.Open(t)
			st := store.New(d)
			stB := store.New(b.Replica(t, d))
			regA := providers.FromEnv(func(string) string { return "" }, providers.Options{})
			regB := providers.FromEnv(func(string) string { return "" }, providers.Options{})
			a, _ := review27cService(t, st, regA, nil)
			replica, gB := review27cService(t, stB, regB, nil)

			const secret = "sk-review27c-secret"
			in := Input{ModelName: "team", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": secret, "api_base": "https://up.example/v1"}, ModelInfo: map[string]any{"id": "dup"}}
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				wg.Add(1)
				go func() { defer wg.Done(); _, errs[i] = a.Add(ctx, in) }()
			}
			wg.Wait()
			ok := 0
			for _, err := range errs {
				switch {
				case err == nil:
					ok++
				case !errors.Is(err, ErrDuplicate):
					t.Errorf("a concurrent add of the same id: %v, want ErrDuplicate", err)
				}
			}
			if ok != 1 {
				t.Fatalf("%d concurrent adds of one id succeeded, want 1", ok)
			}
			if _, err := a.Add(ctx, Input{ModelName: "other", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": secret}}); err != nil {
				t.Fatal(err)
			}
			entries, err := st.List(ctx, store.Deployments, store.ListOptions{})
			if err != nil || len(entries) != 2 {
				t.Fatalf("stored: %d %v, want 2", len(entries), err)
			}
			var sealed []string
			for _, e := range entries {
				if strings.Contains(string(e.Value), secret) {
					t.Errorf("the api_key is in clear in the store: %s", e.Value)
				}
				var r record
				if r, err = get(ctx, st, e.Key); err != nil || r.SealedKey == "" {
					t.Fatalf("%s: %+v %v, want a sealed key", e.Key, r, err)
				}
				sealed = append(sealed, r.SealedKey)
			}
			if sealed[0] == sealed[1] {
				t.Errorf("one key sealed twice gives the same value: the nonce is not fresh")
			}

			if err := replica.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if !gB.IsModelGroup("team") || !gB.IsModelGroup("other") {
				t.Fatalf("the replica serves %v after its Sync, want team and other", gB.ModelGroups())
			}
			var stored int
			for _, dep := range gB.Deployments() {
				if dep.Stored {
					stored++
				}
			}
			if stored != 2 {
				t.Errorf("the replica marks %d deployments stored, want 2", stored)
			}
			if _, err := a.Delete(ctx, "dup"); err != nil {
				t.Fatal(err)
			}
			if err := replica.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if gB.IsModelGroup("team") || !gB.IsModelGroup("other") {
				t.Errorf("the replica serves %v after the delete, want other alone", gB.ModelGroups())
			}
		})
	}
}
