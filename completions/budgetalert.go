package completions

import (
	"context"
	"time"
)

// Budget thresholds, as BudgetAlert.Threshold and BudgetUsage.Crossed name them.
const (
	// ThresholdSoft is BudgetLimits.SoftCostUSD.
	ThresholdSoft = "soft"
	// ThresholdNear is 85% of BudgetLimits.MaxCostUSD.
	ThresholdNear = "85%"
	// ThresholdMax is BudgetLimits.MaxCostUSD.
	ThresholdMax = "max"
)

// nearFraction is ThresholdNear's share of the max budget.
const nearFraction = 0.85

// BudgetAlert says a Budget's cost reached one of its thresholds: once per threshold and
// budget period, however many processes share the Budget's account.
type BudgetAlert struct {
	// Budget is the shared account's id ("key/<virtual key id>" for a virtual key; "" for
	// a Budget kept in memory).
	Budget string
	// Owner and Tag are the Scope's of the request whose charge reached the threshold.
	Owner, Tag string
	// Threshold is ThresholdSoft, ThresholdNear or ThresholdMax.
	Threshold string
	// SpentUSD is the period's cost after the charge; SoftUSD and MaxUSD the limits (0: none).
	SpentUSD, SoftUSD, MaxUSD float64
	// PeriodStart is when the budget period began (zero without BudgetLimits.ResetEvery).
	PeriodStart time.Time
	// Time is when the charge was made.
	Time time.Time
}

// BudgetAlertFunc is told of every BudgetAlert (Options.BudgetAlert). It runs on the
// request's goroutine and must not block.
type BudgetAlertFunc func(ctx context.Context, a BudgetAlert)

// BudgetCrossings are the thresholds a Budget's cost reached in its period.
type BudgetCrossings struct {
	Soft bool `json:"soft,omitempty"`
	Near bool `json:"near,omitempty"`
	Max  bool `json:"max,omitempty"`
}

// has reports whether threshold th was crossed.
func (c BudgetCrossings) has(th string) bool {
	switch th {
	case ThresholdSoft:
		return c.Soft
	case ThresholdNear:
		return c.Near
	}
	return c.Max
}

// set marks threshold th crossed (or not).
func (c *BudgetCrossings) set(th string, v bool) {
	switch th {
	case ThresholdSoft:
		c.Soft = v
	case ThresholdNear:
		c.Near = v
	default:
		c.Max = v
	}
}

// reached lists the thresholds u's cost has reached under l.
func (l BudgetLimits) reached(u BudgetUsage) []string {
	var out []string
	if l.SoftCostUSD > 0 && u.CostUSD >= l.SoftCostUSD {
		out = append(out, ThresholdSoft)
	}
	if l.MaxCostUSD > 0 && u.CostUSD >= nearFraction*l.MaxCostUSD {
		out = append(out, ThresholdNear)
	}
	if l.MaxCostUSD > 0 && u.CostUSD >= l.MaxCostUSD {
		out = append(out, ThresholdMax)
	}
	return out
}
