package telemetry

import (
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-ai/switchyard/completions"
)

// budgetGauges are LiteLLM's budget gauges of virtual keys and teams:
// litellm_remaining_api_key_budget_metric, litellm_api_key_max_budget_metric,
// litellm_api_key_budget_remaining_hours_metric and the team's three. Each key's and
// team's account is kept as its last request's charge left it (RequestRecord.Accounts: no
// store read), and the gauges are computed from it at scrape time, so the hours count
// down and a period that ended reads its budget whole again.
type budgetGauges struct {
	mu    sync.Mutex
	keys  map[string]namedAccount // by key id
	teams map[string]namedAccount // by team id
}

// namedAccount is a key's or team's account with its alias (its label api_key_alias or
// team_alias).
type namedAccount struct {
	completions.AccountState
	alias string
}

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
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, a := range r.Accounts {
		switch {
		case a.Kind != "":
		case i == 0 && a.Name == "" && r.KeyID != "":
			b.keys[r.KeyID] = namedAccount{a, r.KeyAlias} // the request's own Budget: its virtual key's
		case a.Name != "" && a.Name == r.TeamID:
			b.teams[r.TeamID] = namedAccount{a, r.TeamAlias}
		}
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
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	emit := func(accounts map[string]namedAccount, remaining, max, hours *prometheus.Desc) {
		for id, a := range accounts {
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
