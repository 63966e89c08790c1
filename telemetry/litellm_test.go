package telemetry

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// TestLiteLLMDeploymentState: litellm_deployment_state is 0 after a deployment's call
// succeeded, 1 after one failed, and 2 while its model's circuit breaker is open; a failed
// attempt counts in litellm_deployment_failure_responses_total with the upstream's status and
// LiteLLM's class name for it.
func TestLiteLLMDeploymentState(t *testing.T) {
	m := New(Options{})
	open := map[string]string{}
	m.EnableLiteLLM(LiteLLMOptions{BreakerStates: func() map[string]string { return open }})
	down := &providers.Error{Provider: "openai", Model: "down", StatusCode: 429, Message: "slow down"}
	m.ObserveRequest(context.Background(), completions.RequestRecord{Outcome: completions.RequestOK, Model: "openai/ok", Provider: "openai", ModelGroup: "g",
		Attempts: []completions.Attempt{
			{Model: "openai/down", Outcome: completions.OutcomeError, Err: down, Started: time.Now()},
			{Model: "openai/ok", Outcome: completions.OutcomeOK, Started: time.Now()},
		}})
	want := func(when string, text string) {
		t.Helper()
		if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(text), "litellm_deployment_state"); err != nil {
			t.Errorf("%s: %v", when, err)
		}
	}
	const head = "# HELP litellm_deployment_state LLM Deployment Analytics - The state of the deployment: 0 = healthy, 1 = partial outage (its last call failed), 2 = complete outage (its circuit breaker is open)\n# TYPE litellm_deployment_state gauge\n"
	idDown, idOK := completions.DeploymentID("g", "openai/down"), completions.DeploymentID("g", "openai/ok")
	want("closed", head+
		`litellm_deployment_state{api_base="",api_provider="openai",litellm_model_name="openai/down",model_id="`+idDown+`"} 1`+"\n"+
		`litellm_deployment_state{api_base="",api_provider="openai",litellm_model_name="openai/ok",model_id="`+idOK+`"} 0`+"\n")
	open["openai/down"] = completions.BreakerOpen
	want("open", head+
		`litellm_deployment_state{api_base="",api_provider="openai",litellm_model_name="openai/down",model_id="`+idDown+`"} 2`+"\n"+
		`litellm_deployment_state{api_base="",api_provider="openai",litellm_model_name="openai/ok",model_id="`+idOK+`"} 0`+"\n")
	fail, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range fail {
		if f.GetName() != "litellm_deployment_failure_responses_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range s.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			found = l["exception_status"] == "429" && l["exception_class"] == "Openai.RateLimitError" && l["requested_model"] == "g" && s.GetCounter().GetValue() == 1
		}
	}
	if !found {
		t.Errorf("no failure of openai/down with 429 Openai.RateLimitError: %v", fail)
	}
	if c := exceptionClass(errors.New("x"), 500, "openai"); c != "InternalServerError" {
		t.Errorf("class of a 500: %s", c)
	}
}

// TestLiteLLMEndUserLabel: the end_user label is empty unless LiteLLMOptions.EndUser (LiteLLM's
// enable_end_user_cost_tracking_prometheus_only) asks for it: each end user would otherwise
// be series of its own in every metric.
func TestLiteLLMEndUserLabel(t *testing.T) {
	for _, on := range []bool{false, true} {
		m := New(Options{})
		m.EnableLiteLLM(LiteLLMOptions{EndUser: on})
		for _, u := range []string{"alice", "bob", "carol"} {
			m.ObserveRequest(context.Background(), completions.RequestRecord{Outcome: completions.RequestOK, Model: "openai/ok", Provider: "openai", EndUser: u})
		}
		fams, err := m.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		users := map[string]bool{}
		for _, f := range fams {
			if f.GetName() != "litellm_proxy_total_requests_metric_total" {
				continue
			}
			for _, s := range f.GetMetric() {
				for _, p := range s.GetLabel() {
					if p.GetName() == "end_user" {
						users[p.GetValue()] = true
					}
				}
			}
		}
		if want := map[bool]int{false: 1, true: 3}[on]; len(users) != want || !on && !users[""] {
			t.Errorf("EndUser %v: end_user values %v, want %d", on, users, want)
		}
	}
}

// liteLLMSeries counts the series of each LiteLLM family in m, and the distinct values of
// label in them.
func liteLLMSeries(t *testing.T, m *Metrics, label string) (map[string]int, map[string]bool) {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	n, values := map[string]int{}, map[string]bool{}
	for _, f := range fams {
		if !strings.HasPrefix(f.GetName(), "litellm_") {
			continue
		}
		n[f.GetName()] = len(f.GetMetric())
		for _, s := range f.GetMetric() {
			for _, p := range s.GetLabel() {
				if p.GetName() == label {
					values[p.GetValue()] = true
				}
			}
		}
	}
	return n, values
}

// TestLiteLLMMadeUpModelsBounded: requests naming made-up models that fail (an upstream's
// 404) read "other" in model_id as in the model labels, so a thousand junk names make no
// more series than one, litellm_deployment_state included.
func TestLiteLLMMadeUpModelsBounded(t *testing.T) {
	m := New(Options{})
	m.EnableLiteLLM(LiteLLMOptions{})
	m.AdmitModels(func(model string) bool { return model == "openai/ok" })
	junk := func(i int) {
		name := "openai/no-such-model-" + strconv.Itoa(i)
		m.ObserveRequest(context.Background(), completions.RequestRecord{Outcome: completions.RequestFailed, Requested: name, Provider: "openai",
			Err: &providers.Error{Provider: "openai", Model: name, StatusCode: 404, Message: "no such model"},
			Attempts: []completions.Attempt{{Model: name, Outcome: completions.OutcomeError, Started: time.Now(),
				Err: &providers.Error{Provider: "openai", Model: name, StatusCode: 404, Message: "no such model"}}}})
	}
	m.ObserveRequest(context.Background(), completions.RequestRecord{Outcome: completions.RequestOK, Model: "openai/ok", Provider: "openai",
		Attempts: []completions.Attempt{{Model: "openai/ok", Outcome: completions.OutcomeOK, Started: time.Now()}}})
	junk(0)
	one, ids := liteLLMSeries(t, m, "model_id")
	for i := 1; i < 1000; i++ {
		junk(i)
	}
	many, idsAfter := liteLLMSeries(t, m, "model_id")
	if len(one) == 0 || one["litellm_deployment_state"] != 2 || one["litellm_proxy_failed_requests_metric_total"] != 1 {
		t.Fatalf("series after one junk name: %v", one)
	}
	for name, n := range many {
		if n != one[name] {
			t.Errorf("%s: %d series after 1000 junk names, %d after one", name, n, one[name])
		}
	}
	okID := completions.DeploymentID("openai/ok", "openai/ok")
	if len(idsAfter) != 2 || !idsAfter["other"] || !idsAfter[okID] || len(ids) != 2 {
		t.Errorf("%d model_id values after 1000 junk names (%v after one), want other and %s", len(idsAfter), ids, okID)
	}
}

// TestLiteLLMEndUserLabelBounded: with EndUser on, the first MaxEndUserLabels end users take
// an end_user value of their own and later ones read "other"; requests without an end user
// take none of the values.
func TestLiteLLMEndUserLabelBounded(t *testing.T) {
	m := New(Options{})
	m.EnableLiteLLM(LiteLLMOptions{EndUser: true})
	observe := func(user string) {
		m.ObserveRequest(context.Background(), completions.RequestRecord{Outcome: completions.RequestOK, Model: "openai/ok", Provider: "openai", EndUser: user})
	}
	observe("")
	for i := 0; i < 3*MaxEndUserLabels; i++ {
		observe("user-" + strconv.Itoa(i))
	}
	observe("user-0")
	n, users := liteLLMSeries(t, m, "end_user")
	if len(users) != MaxEndUserLabels+2 || !users["other"] || !users[""] || !users["user-0"] || !users["user-"+strconv.Itoa(MaxEndUserLabels-1)] || users["user-"+strconv.Itoa(MaxEndUserLabels)] {
		t.Errorf("%d end_user values, want %d: the first %d users, other and the empty one", len(users), MaxEndUserLabels+2, MaxEndUserLabels)
	}
	if got := n["litellm_proxy_total_requests_metric_total"]; got != MaxEndUserLabels+2 {
		t.Errorf("%d series of total requests, want %d", got, MaxEndUserLabels+2)
	}
}

// TestLiteLLMBudgetGaugesPeriodEnded: a key's and a team's budget gauges come from the
// accounts its request's charge left (RequestRecord.Accounts), at scrape time: once the
// period ended the budget reads whole again with the next period's hours; an account of
// another kind (a user's) makes none, and neither does a request of no key or team.
func TestLiteLLMBudgetGaugesPeriodEnded(t *testing.T) {
	m := New(Options{})
	m.EnableLiteLLM(LiteLLMOptions{})
	now := time.Now()
	m.ObserveRequest(context.Background(), completions.RequestRecord{Outcome: completions.RequestOK, Model: "openai/ok", KeyID: "vk_1", TeamID: "eng",
		Accounts: []completions.AccountState{
			{MaxCostUSD: 5, SpentUSD: 4, ResetAt: now.Add(-90 * time.Minute), Period: time.Hour},
			{Name: "eng", MaxCostUSD: 100, SpentUSD: 40, ResetAt: now.Add(10 * time.Hour), Period: 24 * time.Hour},
			{Kind: "user", Name: "u", MaxCostUSD: 7, SpentUSD: 1},
		}})
	m.ObserveRequest(context.Background(), completions.RequestRecord{Outcome: completions.RequestOK, Model: "openai/ok",
		Accounts: []completions.AccountState{{MaxCostUSD: 1}}})
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]float64{}
	for _, f := range fams {
		if strings.Contains(f.GetName(), "budget") {
			for _, s := range f.GetMetric() {
				got[f.GetName()] = append(got[f.GetName()], s.GetGauge().GetValue())
			}
		}
	}
	want := map[string]float64{"litellm_api_key_max_budget_metric": 5, "litellm_remaining_api_key_budget_metric": 5,
		"litellm_team_max_budget_metric": 100, "litellm_remaining_team_budget_metric": 60}
	for name, v := range want {
		if len(got[name]) != 1 || got[name][0] != v {
			t.Errorf("%s = %v, want [%g]", name, got[name], v)
		}
	}
	if h := got["litellm_api_key_budget_remaining_hours_metric"]; len(h) != 1 || h[0] <= 0 || h[0] > 0.5 {
		t.Errorf("key's hours to reset %v, want one in (0, 0.5]: its period ended 30 minutes into the next", h)
	}
	if h := got["litellm_team_budget_remaining_hours_metric"]; len(h) != 1 || h[0] <= 9 || h[0] > 10 {
		t.Errorf("team's hours to reset %v, want one in (9, 10]", h)
	}
	if len(got) != 6 {
		t.Errorf("budget gauges %v, want the six of the key and the team", got)
	}
}

// TestLiteLLMConfiguredDeploymentFailingIsNamed: a --litellm-config deployment with an
// api_base of its own (the gateway's member "openai-smart/gpt-fail", LiteLLM's name
// "openai/gpt-fail") that fails before it ever answered is reported under its LiteLLM name
// in litellm_deployment_state and litellm_deployment_failure_responses_total: it is a
// configured model, not a made-up one to read "other" (its outage was invisible).
func TestLiteLLMConfiguredDeploymentFailingIsNamed(t *testing.T) {
	m := New(Options{})
	m.EnableLiteLLM(LiteLLMOptions{Models: map[string]string{"openai-smart/gpt-fail": "openai/gpt-fail"}})
	m.AdmitModels(func(model string) bool { return model == "openai-smart/gpt-fail" || model == "smart" })
	fail := &providers.Error{Provider: "openai-smart", Model: "gpt-fail", StatusCode: 500, Message: "boom"}
	m.ObserveRequest(context.Background(), completions.RequestRecord{Outcome: completions.RequestFailed, ModelGroup: "smart", Provider: "openai-smart", Err: fail,
		Attempts: []completions.Attempt{{Model: "openai-smart/gpt-fail", Outcome: completions.OutcomeError, Err: fail, Started: time.Now()}}})
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, f := range families {
		switch f.GetName() {
		case "litellm_deployment_state", "litellm_deployment_failure_responses_total":
			for _, s := range f.GetMetric() {
				for _, p := range s.GetLabel() {
					if p.GetName() == "litellm_model_name" {
						seen[f.GetName()] += p.GetValue() + " "
					}
				}
			}
		}
	}
	for _, name := range []string{"litellm_deployment_state", "litellm_deployment_failure_responses_total"} {
		if seen[name] != "openai/gpt-fail " {
			t.Errorf("%s: litellm_model_name %q, want openai/gpt-fail", name, seen[name])
		}
	}
}

// TestLiteLLMBudgetGaugesNewestStateAndEviction: records of requests charged at once may
// arrive out of order, so a key's gauges keep the newest state of its account (more spent
// in the same period, a later period, or new limits), not the last record's; a key or team
// idle for a minute that no longer exists (AccountExists) loses its gauges at the next
// scrape, one that exists or whose check fails keeps them, and each idle account is
// checked at most once a minute.
func TestLiteLLMBudgetGaugesNewestStateAndEviction(t *testing.T) {
	m := New(Options{})
	live := map[string]bool{"key/op/vk_live": true, "team/op/eng": true}
	checks := map[string]int{}
	m.EnableLiteLLM(LiteLLMOptions{AccountExists: func(_ context.Context, kind, owner, id string) (bool, error) {
		checks[kind+"/"+owner+"/"+id]++
		if id == "vk_flaky" {
			return false, errors.New("store down")
		}
		return live[kind+"/"+owner+"/"+id], nil
	}})
	clock := time.Now()
	m.litellm.Load().budgets.now = func() time.Time { return clock }
	reset := clock.Add(time.Hour)
	charge := func(key, team string, spent float64, max float64, resetAt time.Time) {
		r := completions.RequestRecord{Outcome: completions.RequestOK, Model: "openai/ok", Owner: "op", KeyID: key, TeamID: team,
			Accounts: []completions.AccountState{{MaxCostUSD: max, SpentUSD: spent, ResetAt: resetAt, Period: 2 * time.Hour}}}
		if team != "" {
			r.Accounts = append(r.Accounts, completions.AccountState{Name: team, MaxCostUSD: 100, SpentUSD: spent})
		}
		m.ObserveRequest(context.Background(), r)
	}
	remaining := func() map[string]float64 {
		t.Helper()
		fams, err := m.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, f := range fams {
			if f.GetName() != "litellm_remaining_api_key_budget_metric" && f.GetName() != "litellm_remaining_team_budget_metric" {
				continue
			}
			for _, s := range f.GetMetric() {
				for _, l := range s.GetLabel() {
					if l.GetName() == "hashed_api_key" || l.GetName() == "team" {
						out[l.GetValue()] = s.GetGauge().GetValue()
					}
				}
			}
		}
		return out
	}

	charge("vk_live", "", 3, 10, reset)
	charge("vk_live", "", 2, 10, reset) // an earlier charge's record, arriving late
	if got := remaining()["vk_live"]; got != 7 {
		t.Errorf("after a late record of less spent: remaining %v, want 7 (the newest state's)", got)
	}
	charge("vk_live", "", 1, 10, reset.Add(2*time.Hour)) // the next period
	if got := remaining()["vk_live"]; got != 9 {
		t.Errorf("a later period: remaining %v, want 9", got)
	}
	charge("vk_live", "", 0.5, 20, reset.Add(2*time.Hour)) // limits changed (and spend set back)
	if got := remaining()["vk_live"]; got != 19.5 {
		t.Errorf("new limits: remaining %v, want 19.5", got)
	}

	charge("vk_gone", "eng", 1, 10, reset)
	charge("vk_flaky", "gone-team", 1, 10, reset)
	if got := remaining(); len(got) != 5 || len(checks) != 0 {
		t.Fatalf("gauges %v, checks %v: want five series and no check before a minute idle", got, checks)
	}
	clock = clock.Add(61 * time.Second)
	got := remaining()
	if _, ok := got["vk_gone"]; ok {
		t.Errorf("a deleted key's gauge after a minute idle: %v", got)
	}
	if _, ok := got["gone-team"]; ok {
		t.Errorf("a deleted team's gauge after a minute idle: %v", got)
	}
	for _, id := range []string{"vk_live", "vk_flaky", "eng"} {
		if _, ok := got[id]; !ok {
			t.Errorf("%s lost its gauge (it exists, or its check failed): %v", id, got)
		}
	}
	remaining() // within the minute: no account checked twice
	for k, n := range checks {
		if n != 1 {
			t.Errorf("%s checked %d times within a minute, want 1", k, n)
		}
	}
	// A charge after the check keeps the account (it is not idle).
	charge("vk_flaky", "", 2, 10, reset)
	clock = clock.Add(30 * time.Second)
	if _, ok := remaining()["vk_flaky"]; !ok || checks["key/op/vk_flaky"] != 1 {
		t.Errorf("a key charged 30 s ago was checked (%d) or dropped", checks["key/op/vk_flaky"])
	}
}
