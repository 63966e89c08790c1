package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchyard-ai/switchyard/store"
)

// BudgetAccountExists returns a function reporting whether owner's virtual key ("key") or
// team ("team") id is still in st: serve passes it to the metrics under LiteLLM's names
// (telemetry.LiteLLMOptions.AccountExists), which drop the budget gauges of one deleted.
// Another kind is reported as existing; a store failure is returned as an error.
func BudgetAccountExists(st *store.Store) func(ctx context.Context, kind, owner, id string) (bool, error) {
	return func(ctx context.Context, kind, owner, id string) (bool, error) {
		return budgetAccountExists(ctx, st, kind, owner, id)
	}
}

// budgetAccountExists is BudgetAccountExists's function.
func budgetAccountExists(ctx context.Context, st *store.Store, kind, owner, id string) (bool, error) {
	c := store.VirtualKeys
	switch kind {
	case "key":
	case "team":
		c = store.Teams
	default:
		return true, nil
	}
	_, err := st.Get(ctx, c, owner+"/"+id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("server: reading %s %s: %w", kind, id, err)
	}
	return true, nil
}
