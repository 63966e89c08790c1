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
//
// Accounts are kept by owner and id: a team id is its owner's choice, so two owners' teams
// may share one ("eng"), and neither's state may stand for, replace or keep alive the
// other's. With Options.OwnerLabel each has series of its own under an "owner" label;
// without it, LiteLLM's labels cannot tell them apart, and the one charged last is served.
type budgetGauges struct {
	// exists reports whether the key's or team's account still is (LiteLLMOptions.AccountExists);
	// nil: never checked.
	exists func(ctx context.Context, kind, owner, id string) (bool, error)
	now    func() time.Time
	// byOwner adds the "owner" label (Options.OwnerLabel).
	byOwner bool
	// descs are the gauges' descriptions, in budgetDescs' order.
	descs [6]*prometheus.Desc

	mu sync.Mutex
	// charges counts the charges seen.
	charges uint64
	keys    map[accountKey]*namedAccount
	teams   map[accountKey]*namedAccount
}

// accountKey names a key's or team's account: its owner and its id.
type accountKey struct{ owner, id string }

// newBudgetGauges are the budget gauges; exists is LiteLLMOptions.AccountExists, byOwner
// Options.OwnerLabel.
func newBudgetGauges(exists func(ctx context.Context, kind, owner, id string) (bool, error), byOwner bool) *budgetGauges {
	b := &budgetGauges{exists: exists, now: time.Now, byOwner: byOwner,
		keys: map[accountKey]*namedAccount{}, teams: map[accountKey]*namedAccount{}}
	for i, d := range budgetDescs {
		labels := d.labels
		if byOwner {
			labels = append(labels[:len(labels):len(labels)], "owner")
		}
		b.descs[i] = prometheus.NewDesc(d.name, d.help, labels, nil)
	}
	return b
}

// namedAccount is a key's or team's account with its alias (its label api_key_alias or
// team_alias), when a charge last showed it and when it was last checked, and the count
// of charges the gauges had seen by then (which of two was charged last).
type namedAccount struct {
	completions.AccountState
	alias         string
	seen, checked time.Time
	charge        uint64
}

const (
	// budgetIdle is how long a key's or team's gauges go without a charge before the
	// account is checked, and how often it is checked again while it stays idle.
	budgetIdle = time.Minute
	// budgetChecksPerScrape bounds the accounts checked in one scrape (the rest wait for
	// the next ones), so a scrape reads the store a bounded number of times.
	budgetChecksPerScrape = 200
)

// budgetDescs are the budget gauges under LiteLLM's names and labels
// (litellm/types/integrations/prometheus.py): the key's three, then the team's three, each
// remaining, max, hours.
var budgetDescs = [6]struct {
	name, help string
	labels     []string
}{
	{"litellm_remaining_api_key_budget_metric", "Remaining budget for api key (USD; +Inf without a max budget)", []string{"hashed_api_key", "api_key_alias"}},
	{"litellm_api_key_max_budget_metric", "Maximum budget set for api key (USD)", []string{"hashed_api_key", "api_key_alias"}},
	{"litellm_api_key_budget_remaining_hours_metric", "Remaining hours for api key budget to be reset", []string{"hashed_api_key", "api_key_alias"}},
	{"litellm_remaining_team_budget_metric", "Remaining budget for team (USD; +Inf without a max budget)", []string{"team", "team_alias"}},
	{"litellm_team_max_budget_metric", "Maximum budget set for team (USD)", []string{"team", "team_alias"}},
	{"litellm_team_budget_remaining_hours_metric", "Remaining hours for team budget to be reset", []string{"team", "team_alias"}},
}

// observe keeps the accounts of r's key and team after its charge.
func (b *budgetGauges) observe(r *completions.RequestRecord) {
	if len(r.Accounts) == 0 || r.KeyID == "" && r.TeamID == "" {
		return
	}
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.charges++
	keep := func(m map[accountKey]*namedAccount, id string, a completions.AccountState, alias string) {
		k := accountKey{r.Owner, id}
		if old := m[k]; old != nil && older(a, old.AccountState) {
			old.seen, old.charge = now, b.charges
			return
		}
		m[k] = &namedAccount{AccountState: a, alias: alias, seen: now, charge: b.charges}
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
		kind string
		key  accountKey
		seen time.Time
	}
	now := b.now()
	var check []idle
	b.mu.Lock()
	for kind, m := range map[string]map[accountKey]*namedAccount{"key": b.keys, "team": b.teams} {
		for k, a := range m {
			if len(check) < budgetChecksPerScrape && now.Sub(a.seen) >= budgetIdle && now.Sub(a.checked) >= budgetIdle {
				a.checked = now
				check = append(check, idle{kind, k, a.seen})
			}
		}
	}
	b.mu.Unlock()
	for _, c := range check {
		live, err := b.exists(ctx, c.kind, c.key.owner, c.key.id)
		if err != nil || live {
			continue // unknown: kept, checked again later
		}
		b.mu.Lock()
		m := b.keys
		if c.kind == "team" {
			m = b.teams
		}
		if a := m[c.key]; a != nil && a.seen.Equal(c.seen) {
			delete(m, c.key) // not charged since: deleted
		}
		b.mu.Unlock()
	}
}

// Describe implements prometheus.Collector.
func (b *budgetGauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range b.descs {
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
	emit := func(accounts map[accountKey]*namedAccount, remaining, max, hours *prometheus.Desc) {
		served := accounts
		if !b.byOwner {
			served = lastCharged(accounts)
		}
		for k, na := range served {
			a := *na
			labels := []string{k.id, a.alias}
			if b.byOwner {
				labels = append(labels, k.owner)
			}
			if !a.ResetAt.IsZero() && !now.Before(a.ResetAt) && a.Period > 0 {
				// The period ended: the next use starts the account afresh.
				a.SpentUSD = 0
				a.ResetAt = a.ResetAt.Add((now.Sub(a.ResetAt)/a.Period + 1) * a.Period)
			}
			left := math.Inf(1)
			if a.MaxCostUSD > 0 || a.Blocked {
				left = a.MaxCostUSD - a.SpentUSD
				ch <- prometheus.MustNewConstMetric(max, prometheus.GaugeValue, a.MaxCostUSD, labels...)
			}
			ch <- prometheus.MustNewConstMetric(remaining, prometheus.GaugeValue, left, labels...)
			if !a.ResetAt.IsZero() {
				ch <- prometheus.MustNewConstMetric(hours, prometheus.GaugeValue, a.ResetAt.Sub(now).Hours(), labels...)
			}
		}
	}
	emit(b.keys, b.descs[0], b.descs[1], b.descs[2])
	emit(b.teams, b.descs[3], b.descs[4], b.descs[5])
}

// lastCharged keeps, of the accounts sharing an id (teams of different owners), the one a
// charge showed last: LiteLLM's labels name an account by its id alone, and a scrape may
// hold a series only once.
func lastCharged(accounts map[accountKey]*namedAccount) map[accountKey]*namedAccount {
	byID := make(map[string]accountKey, len(accounts))
	for k, a := range accounts {
		if was, ok := byID[k.id]; !ok || accounts[was].charge < a.charge {
			byID[k.id] = k
		}
	}
	if len(byID) == len(accounts) {
		return accounts
	}
	out := make(map[accountKey]*namedAccount, len(byID))
	for _, k := range byID {
		out[k] = accounts[k]
	}
	return out
}
