package completions

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/switchyard-ai/switchyard/store"
)

// BudgetLimits bound what a scoped key (for example one issued to an optimization job) may
// spend through the gateway. Zero values mean "no limit".
type BudgetLimits struct {
	// AllowedModels lists the "provider/model" strings the key may call; empty allows all.
	AllowedModels []string `json:"allowed_models,omitempty"`
	// MaxTokens caps the total (prompt + completion) tokens of all answered requests. It is
	// checked before each request, whose maxTokens is then capped to what is left, so the
	// total can pass the cap by at most one request's prompt.
	MaxTokens int64 `json:"max_tokens,omitempty"`
	// MaxCalls caps the number of completion requests (not upstream retries); a request
	// counts once it passed validation, whether or not an upstream answered it.
	MaxCalls int64 `json:"max_calls,omitempty"`
}

// BudgetUsage is what a Budget has consumed so far.
type BudgetUsage struct {
	Calls   int64   `json:"calls"`
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
}

// Budget is a concurrency-safe spending account attached to a request through Scope. One
// Budget is shared by every request made with the same scoped key. A Budget from
// NewBudget keeps its usage in memory (one process); one from CreateSharedBudget or
// LoadSharedBudget keeps it in the store, so every process on the same store (gateway
// replicas behind a load balancer) meters one account.
type Budget struct {
	limits BudgetLimits

	mu   sync.Mutex
	used BudgetUsage

	// st and id locate the shared account (nil st: in memory).
	st *store.Store
	id string
}

// sharedBudget is a shared Budget's record in store.Budgets.
type sharedBudget struct {
	Limits BudgetLimits `json:"limits"`
	Used   BudgetUsage  `json:"used"`
}

// CreateSharedBudget stores a new account id with limits l and nothing used, and returns
// the Budget on it. Each reserved call and each charge is then one store transaction, so
// processes sharing the store never both take the last call.
func CreateSharedBudget(ctx context.Context, st *store.Store, id string, l BudgetLimits) (*Budget, error) {
	l.AllowedModels = slices.Clone(l.AllowedModels)
	if err := store.PutJSON(ctx, st, store.Budgets, id, sharedBudget{Limits: l}); err != nil {
		return nil, fmt.Errorf("completions: create budget %s: %w", id, err)
	}
	return &Budget{limits: l, st: st, id: id}, nil
}

// LoadSharedBudget returns the Budget on the stored account id (from CreateSharedBudget in
// any process), or an error matching store.ErrNotFound once it was deleted.
func LoadSharedBudget(ctx context.Context, st *store.Store, id string) (*Budget, error) {
	rec, err := store.GetJSON[sharedBudget](ctx, st, store.Budgets, id)
	if err != nil {
		return nil, fmt.Errorf("completions: budget %s: %w", id, err)
	}
	return &Budget{limits: rec.Limits, st: st, id: id}, nil
}

// DeleteSharedBudget removes the stored account id; deleting a missing one is not an error.
func DeleteSharedBudget(ctx context.Context, st *store.Store, id string) error {
	return st.Delete(ctx, store.Budgets, id)
}

// update applies fn to the shared account in one transaction.
func (b *Budget) update(ctx context.Context, fn func(u *BudgetUsage) error) error {
	return b.st.Update(ctx, func(tx store.Tx) error {
		rec, err := store.GetJSON[sharedBudget](ctx, tx, store.Budgets, b.id)
		if err != nil {
			return fmt.Errorf("completions: budget %s: %w", b.id, err)
		}
		if err := fn(&rec.Used); err != nil {
			return err
		}
		return store.PutJSON(ctx, tx, store.Budgets, b.id, rec)
	})
}

// NewBudget returns a Budget with the given limits and nothing used.
func NewBudget(l BudgetLimits) *Budget {
	l.AllowedModels = slices.Clone(l.AllowedModels)
	return &Budget{limits: l}
}

// Limits returns the Budget's limits.
func (b *Budget) Limits() BudgetLimits {
	l := b.limits
	l.AllowedModels = slices.Clone(l.AllowedModels)
	return l
}

// Used returns what has been consumed so far. A shared Budget reads its account (ctx
// bounds the read); if that fails it returns what this process last saw.
func (b *Budget) Used(ctx context.Context) BudgetUsage {
	if b.st != nil {
		if rec, err := store.GetJSON[sharedBudget](ctx, b.st, store.Budgets, b.id); err == nil {
			b.mu.Lock()
			b.used = rec.Used
			b.mu.Unlock()
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// allows reports whether model may be called.
func (b *Budget) allows(model string) bool {
	return len(b.limits.AllowedModels) == 0 || slices.Contains(b.limits.AllowedModels, model)
}

// reserveCall takes one call from the budget, or fails with ErrBudgetExceeded when the
// calls or tokens are used up. It returns the tokens still available (0 = unlimited).
func (b *Budget) reserveCall(ctx context.Context) (tokensLeft int64, err error) {
	if b.st != nil {
		err := b.update(ctx, func(u *BudgetUsage) error {
			tokensLeft, err = b.limits.take(u)
			return err
		})
		return tokensLeft, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limits.take(&b.used)
}

// take counts one call against u, or fails when the calls or tokens are used up.
func (l BudgetLimits) take(u *BudgetUsage) (int64, error) {
	if l.MaxCalls > 0 && u.Calls >= l.MaxCalls {
		return 0, fmt.Errorf("%w: %d of %d calls used", ErrBudgetExceeded, u.Calls, l.MaxCalls)
	}
	if l.MaxTokens > 0 && u.Tokens >= l.MaxTokens {
		return 0, fmt.Errorf("%w: %d of %d tokens used", ErrBudgetExceeded, u.Tokens, l.MaxTokens)
	}
	u.Calls++
	if l.MaxTokens > 0 {
		return l.MaxTokens - u.Tokens, nil
	}
	return 0, nil
}

// charge records the tokens and cost of an answered (or partly answered) attempt. A
// shared Budget's charge is written even when ctx was cancelled after the answer (the
// tokens were spent).
func (b *Budget) charge(ctx context.Context, tokens int64, cost float64) error {
	if b.st != nil {
		return b.update(context.WithoutCancel(ctx), func(u *BudgetUsage) error {
			u.Tokens += tokens
			u.CostUSD += cost
			return nil
		})
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used.Tokens += tokens
	b.used.CostUSD += cost
	return nil
}
