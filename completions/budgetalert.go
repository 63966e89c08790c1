package completions

import (
	"context"
	"errors"
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

// errNothingToMark aborts a store transaction of markMaxReached that changes nothing.
var errNothingToMark = errors.New("completions: no threshold to mark")

// refusalAlerts marks the max threshold crossed in b's account and in its parents' where
// the spend is at or past the max budget with no charge having crossed it (the budget was
// lowered to or below what was spent), and returns those alerts: a refused request reports
// the budget reached once, as LiteLLM alerts on the refusal. A failure marks nothing.
func (b *Budget) refusalAlerts(ctx context.Context) []BudgetAlert {
	var out []BudgetAlert
	out = append(out, b.markMaxReached(ctx)...)
	for _, p := range b.parents {
		out = append(out, p.b.markMaxReached(ctx)...)
	}
	return out
}

// markMaxReached is refusalAlerts of x's own account, judged by its stored limits.
func (x *Budget) markMaxReached(ctx context.Context) []BudgetAlert {
	now := x.clock()
	var alerts []BudgetAlert
	mark := func(l BudgetLimits, u *BudgetUsage) bool {
		alerts = nil // a store transaction may run this again
		l.roll(u, now)
		if l.MaxCostUSD <= 0 || u.CostUSD < l.MaxCostUSD || u.Crossed.has(ThresholdMax) {
			return false
		}
		u.Crossed.set(ThresholdMax, true)
		alerts = []BudgetAlert{{Budget: x.id, Threshold: ThresholdMax, SpentUSD: u.CostUSD,
			SoftUSD: l.SoftCostUSD, MaxUSD: l.MaxCostUSD, PeriodStart: u.PeriodStart, Time: now}}
		return true
	}
	if x.st != nil {
		err := x.updateRec(context.WithoutCancel(ctx), func(rec *sharedBudget) error {
			if !mark(rec.Limits, &rec.Used) {
				return errNothingToMark
			}
			return nil
		})
		if err != nil {
			return nil
		}
		return alerts
	}
	o := x.own()
	o.mu.Lock()
	defer o.mu.Unlock()
	mark(x.limits, &o.used)
	return alerts
}

// alertRefusal sends the alerts of a request of scope refused by its budget b with err
// (refusalAlerts), when the gateway has a BudgetAlert hook and err is a budget refusal.
func (g *Gateway) alertRefusal(ctx context.Context, scope Scope, b *Budget, err error) {
	f := g.opts.BudgetAlert
	if f == nil || b == nil || !errors.Is(err, ErrBudgetExceeded) {
		return
	}
	for _, a := range b.refusalAlerts(ctx) {
		a.Owner, a.Tag = scope.Owner, scope.Tag
		f(ctx, a)
	}
}
