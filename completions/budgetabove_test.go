package completions

import (
	"errors"
	"testing"
	"time"
)

// TestBudgetCostAboveOnly: a budget spent exactly to MaxCostUSD refuses the next request
// (LiteLLM's keys and teams: spend >= max_budget), unless CostAboveOnly, which refuses only
// once the spend is above it (LiteLLM's proxy budget: global_proxy_spend > max_budget).
func TestBudgetCostAboveOnly(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := BudgetUsage{CostUSD: 0.02}
	var ce *CostExceededError
	if _, err := (BudgetLimits{MaxCostUSD: 0.02}).take(&at, now); !errors.As(err, &ce) {
		t.Fatalf("at the bound, default rule: %v, want a *CostExceededError", err)
	}
	at = BudgetUsage{CostUSD: 0.02}
	if _, err := (BudgetLimits{MaxCostUSD: 0.02, CostAboveOnly: true}).take(&at, now); err != nil {
		t.Fatalf("at the bound, CostAboveOnly: %v, want it admitted", err)
	}
	above := BudgetUsage{CostUSD: 0.0201}
	if _, err := (BudgetLimits{MaxCostUSD: 0.02, CostAboveOnly: true}).take(&above, now); !errors.As(err, &ce) {
		t.Fatalf("above the bound, CostAboveOnly: %v, want a *CostExceededError", err)
	}
}
