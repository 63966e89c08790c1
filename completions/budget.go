package completions

import (
	"fmt"
	"slices"
	"sync"
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
// Budget is shared by every request made with the same scoped key.
type Budget struct {
	limits BudgetLimits

	mu   sync.Mutex
	used BudgetUsage
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

// Used returns what has been consumed so far.
func (b *Budget) Used() BudgetUsage {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// allows reports whether model may be called.
func (b *Budget) allows(model string) bool {
	return len(b.limits.AllowedModels) == 0 || slices.Contains(b.limits.AllowedModels, model)
}

// checkModels fails with ErrModelNotAllowed when any model is outside the allow-list.
func (b *Budget) checkModels(models []string) error {
	for _, m := range models {
		if !b.allows(m) {
			return fmt.Errorf("%w: %s", ErrModelNotAllowed, m)
		}
	}
	return nil
}

// reserveCall takes one call from the budget, or fails with ErrBudgetExceeded when the
// calls or tokens are used up. It returns the tokens still available (0 = unlimited).
func (b *Budget) reserveCall() (tokensLeft int64, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.limits.MaxCalls > 0 && b.used.Calls >= b.limits.MaxCalls {
		return 0, fmt.Errorf("%w: %d of %d calls used", ErrBudgetExceeded, b.used.Calls, b.limits.MaxCalls)
	}
	if b.limits.MaxTokens > 0 && b.used.Tokens >= b.limits.MaxTokens {
		return 0, fmt.Errorf("%w: %d of %d tokens used", ErrBudgetExceeded, b.used.Tokens, b.limits.MaxTokens)
	}
	b.used.Calls++
	if b.limits.MaxTokens > 0 {
		return b.limits.MaxTokens - b.used.Tokens, nil
	}
	return 0, nil
}

// charge records the tokens and cost of an answered (or partly answered) attempt.
func (b *Budget) charge(tokens int64, cost float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used.Tokens += tokens
	b.used.CostUSD += cost
}
