package telemetry

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-ai/switchyard/completions"
)

// budgetGauges are LiteLLM's budget gauges of virtual keys and teams:
// litellm_remaining_api_key_budget_metric, litellm_api_key_max_budget_metric,
// litellm_api_key_budget_remaining_hours_metric and the team's three. Each key's and
// team's account is kept as the latest charge left it (RequestRecord.Accounts: no store
// read) — records of requests charged at once may arrive in any order, so an older state
// (an earlier period, or less spent in the same one with the same limits) does not replace
// a newer one — and the gauges are computed from it at scrape time, so the hours count
// down and a period that ended reads its budget whole again. A key or team idle for
// budgetIdle is checked (exists, at most budgetChecksPerScrape a scrape, each at most once
// every budgetIdle) and its gauges dropped once it is deleted.
type budgetGauges struct {
	// exists reports whether the key's or team's account still is (LiteLLMOptions.AccountExists);
	// nil: never checked.
	exists func(ctx context.Context, kind, owner, id string) (bool, error)
	now    func() time.Time

	mu    sync.Mutex
	keys  map[string]*namedAccount // by key id
	teams map[string]*namedAccount // by team id
}

// namedAccount is a key's or team's account with its alias (its label api_key_alias or
// team_alias), its owner (the account's, to check it still exists), when a charge last
// showed it and when it was last checked.
type namedAccount struct {
	completions.AccountState
	alias, owner  string
	seen, checked time.Time
}

const (
	// budgetIdle is how long a key's or team's gauges go without a charge before the
	// account is checked, and how often it is checked again while it stays idle.
	budgetIdle = time.Minute
	// budgetChecksPerScrape bounds the accounts checked in one scrape (the rest wait for
	// the next ones), so a scrape reads the store a bounded number of times.
	budgetChecksPerScrape = 200
)

var (
	remainingKeyBudgetDesc = prometheus.NewDesc("litellm_remaining_api_key_budget_metric", "Remaining budget for api key (USD; +Inf without a max budget)",
		[]string{"hashed_api_key", "api_key_alias"}, nil)
	maxKeyBudgetDesc = prometheus.NewDesc("litellm_api_key_max_budget_metric", "Maximum budget set for api key (USD)",
		[]string{"hashed_api_key", "api_key_alias"}, nil)
	keyBudgetHoursDesc = prometheus.NewDesc("litellm_api_key_budget_remaining_hours_metric", "Remaining hours for api key budget to be reset",
		[]string{"hashed_api_key", "api_key_alias"}, nil)
	remainingTeamBudgetDesc = prometheus.NewDesc("litellm_remaining_team_budget_metric", "Remaining budget for team (USD; +Inf without a max budget)",
		[]string{"team", "team_alias"}, nil)
	maxTeamBudgetDesc = prometheus.NewDesc("litellm_team_max_budget_metric", "Maximum budget set for team (USD)",
		[]string{"team", "team_alias"}, nil)
	teamBudgetHoursDesc = prometheus.NewDesc("litellm_team_budget_remaining_hours_metric", "Remaining hours for team budget to be reset",
		[]string{"team", "team_alias"}, nil)
)

// observe keeps the accounts of r's key and team after its charge.
func (b *budgetGauges) observe(r *completions.RequestRecord) {
	if len(r.Accounts) == 0 || r.KeyID == "" && r.TeamID == "" {
		return
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	keep := func(m map[string]*namedAccount, id string, a completions.AccountState, alias string) {
		if old := m[id]; old != nil && older(a, old.AccountState) {
			old.seen = now
			return
		}
		m[id] = &namedAccount{AccountState: a, alias: alias, owner: r.Owner, seen: now}
	}
	for i, a := range r.Accounts {
		switch {
		case a.Kind != "":
		case i == 0 && a.Name == "" && r.KeyID != "":
			keep(b.keys, r.KeyID, a, r.KeyAlias) // the request's own Budget: its virtual key's
		case a.Name != "" && a.Name == r.TeamID:
			keep(b.teams, r.TeamID, a, r.TeamAlias)
		}
	}
}

// older reports whether a is an older state of the account than was: of an earlier
// period, or of the same period with the same limits and less spent (a charge's record
// that arrived after a later charge's).
func older(a, was completions.AccountState) bool {
	switch {
	case a.ResetAt.Before(was.ResetAt):
		return true
	case a.ResetAt.After(was.ResetAt):
		return false
	}
	sameLimits := a.MaxCostUSD == was.MaxCostUSD && a.Blocked == was.Blocked && a.Period == was.Period
	return sameLimits && a.SpentUSD < was.SpentUSD
}

// evictDeleted drops the gauges of idle keys and teams whose accounts are gone (deleted),
// checking at most budgetChecksPerScrape of them; the store is read outside the lock.
func (b *budgetGauges) evictDeleted(ctx context.Context) {
	if b.exists == nil {
		return
	}
	type idle struct {
		kind, owner, id string
		seen            time.Time
	}
	now := b.now()
	var check []idle
	b.mu.Lock()
	for kind, m := range map[string]map[string]*namedAccount{"key": b.keys, "team": b.teams} {
		for id, a := range m {
			if len(check) < budgetChecksPerScrape && now.Sub(a.seen) >= budgetIdle && now.Sub(a.checked) >= budgetIdle {
				a.checked = now
				check = append(check, idle{kind, a.owner, id, a.seen})
			}
		}
	}
	b.mu.Unlock()
	for _, c := range check {
		live, err := b.exists(ctx, c.kind, c.owner, c.id)
		if err != nil || live {
			continue // unknown: kept, checked again later
		}
		b.mu.Lock()
		m := b.keys
		if c.kind == "team" {
			m = b.teams
		}
		if a := m[c.id]; a != nil && a.seen.Equal(c.seen) {
			delete(m, c.id) // not charged since: deleted
		}
		b.mu.Unlock()
	}
}

// Describe implements prometheus.Collector.
func (b *budgetGauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{remainingKeyBudgetDesc, maxKeyBudgetDesc, keyBudgetHoursDesc, remainingTeamBudgetDesc, maxTeamBudgetDesc, teamBudgetHoursDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (b *budgetGauges) Collect(ch chan<- prometheus.Metric) {
	// A scrape takes no context: the checks are bounded (budgetChecksPerScrape) and each is
	// a store read, which the store bounds itself.
	b.evictDeleted(context.Background())
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	emit := func(accounts map[string]*namedAccount, remaining, max, hours *prometheus.Desc) {
		for id, na := range accounts {
			a := *na
			if !a.ResetAt.IsZero() && !now.Before(a.ResetAt) && a.Period > 0 {
				// The period ended: the next use starts the account afresh.
				a.SpentUSD = 0
				a.ResetAt = a.ResetAt.Add((now.Sub(a.ResetAt)/a.Period + 1) * a.Period)
			}
			left := math.Inf(1)
			if a.MaxCostUSD > 0 || a.Blocked {
				left = a.MaxCostUSD - a.SpentUSD
				ch <- prometheus.MustNewConstMetric(max, prometheus.GaugeValue, a.MaxCostUSD, id, a.alias)
			}
			ch <- prometheus.MustNewConstMetric(remaining, prometheus.GaugeValue, left, id, a.alias)
			if !a.ResetAt.IsZero() {
				ch <- prometheus.MustNewConstMetric(hours, prometheus.GaugeValue, a.ResetAt.Sub(now).Hours(), id, a.alias)
			}
		}
	}
	emit(b.keys, remainingKeyBudgetDesc, maxKeyBudgetDesc, keyBudgetHoursDesc)
	emit(b.teams, remainingTeamBudgetDesc, maxTeamBudgetDesc, teamBudgetHoursDesc)
}
