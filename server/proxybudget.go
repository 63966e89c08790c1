package server

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// proxyBudgetKind is the kind the proxy-wide account has in refusals
// (BudgetExceededError.Kind).
const proxyBudgetKind = "proxy"

// ProxyBudgetID is the proxy-wide account's id in the store (LiteLLM's
// litellm-proxy-budget) and in its budget alerts (completions.BudgetAlert.Budget).
const ProxyBudgetID = "litellm-proxy-budget"

// setUpProxyBudget stores Config.ProxyMaxBudgetUSD's account, or updates its limits when a
// replica or an earlier start stored it (what it spent stays), and keeps it for
// gatewayScope. Without a bound it does nothing: an account stored before is kept with
// its spend, unused.
func (s *Server) setUpProxyBudget() error {
	max := s.cfg.ProxyMaxBudgetUSD
	if max == 0 && s.cfg.ProxyBudgetDuration == "" {
		return nil
	}
	if max == 0 {
		return errors.New("server: ProxyBudgetDuration needs ProxyMaxBudgetUSD (--budget-duration needs --max-budget-usd)")
	}
	if math.IsNaN(max) || math.IsInf(max, 0) || max <= 0 {
		return fmt.Errorf("server: ProxyMaxBudgetUSD: must be more than 0, got %g", max)
	}
	if s.cfg.Store == nil {
		return errors.New("server: ProxyMaxBudgetUSD needs a Store (the account the replicas share)")
	}
	l := completions.BudgetLimits{MaxCostUSD: max, CostAboveOnly: true}
	if s.cfg.ProxyBudgetDuration != "" {
		d, err := parseBudgetDuration(s.cfg.ProxyBudgetDuration)
		if err != nil {
			return fmt.Errorf("server: ProxyBudgetDuration %q: %w", s.cfg.ProxyBudgetDuration, err)
		}
		l.ResetEvery = d
	}
	ctx := context.Background()
	err := s.cfg.Store.UpdateLocked(ctx, accountLocks(ProxyBudgetID), func(tx store.Tx) error {
		err := completions.SetSharedBudgetLimits(ctx, tx, ProxyBudgetID, l)
		if errors.Is(err, store.ErrNotFound) {
			return completions.PutSharedBudget(ctx, tx, ProxyBudgetID, l)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("server: proxy budget: %w", err)
	}
	b, err := completions.LoadSharedBudget(ctx, s.cfg.Store, ProxyBudgetID)
	if err != nil {
		return fmt.Errorf("server: proxy budget: %w", err)
	}
	s.proxyBudget = b
	return nil
}

// proxyRefusal is the proxy-wide account's refusal in LiteLLM's words
// (BudgetExceededError's, which name no entity).
func proxyRefusal(e *completions.BudgetExceededError) string {
	msg := "Budget has been exceeded! Current cost: " + pythonFloat(e.Used.CostUSD) + ", Max budget: " + pythonFloat(e.Limits.MaxCostUSD)
	// Spent means above the bound (BudgetLimits.CostAboveOnly, LiteLLM's rule); a refusal at
	// or under it (requests in flight holding the rest) says why.
	if !(e.Limits.MaxCostUSD > 0 && e.Used.CostUSD > e.Limits.MaxCostUSD) {
		msg += " (the proxy's budget: " + e.Reason.Error() + ")"
	}
	return msg
}
