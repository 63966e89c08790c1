package telemetry

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestLiteLLMTeamBudgetGaugesPerOwner: two owners' teams sharing a team id ("eng") are two
// accounts. Without Options.OwnerLabel the team's gauges (labels team, team_alias, as
// LiteLLM's) serve the one charged last — one owner's state is not set aside as "older"
// than the other's — and deleting one owner's team leaves the other's gauges; with
// OwnerLabel each owner's team has series of its own under an "owner" label.
func TestLiteLLMTeamBudgetGaugesPerOwner(t *testing.T) {
	for _, byOwner := range []bool{false, true} {
		m := New(Options{OwnerLabel: byOwner})
		live := map[string]bool{"team/bob/eng": true}
		m.EnableLiteLLM(LiteLLMOptions{AccountExists: func(_ context.Context, kind, owner, id string) (bool, error) {
			return live[kind+"/"+owner+"/"+id], nil
		}})
		clock := time.Now()
		m.litellm.Load().budgets.now = func() time.Time { return clock }
		charge := func(owner, alias string, spent float64, resetAt time.Time) {
			m.ObserveRequest(context.Background(), completions.RequestRecord{Outcome: completions.RequestOK, Model: "openai/ok", Owner: owner,
				KeyID: "vk_" + owner, TeamID: "eng", TeamAlias: alias,
				Accounts: []completions.AccountState{{}, {Name: "eng", MaxCostUSD: 100, SpentUSD: spent, ResetAt: resetAt, Period: 24 * time.Hour}}})
		}
		// A series as "team alias owner" → remaining budget.
		teams := func() map[string]float64 {
			t.Helper()
			fams, err := m.Registry().Gather()
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]float64{}
			for _, f := range fams {
				if f.GetName() != "litellm_remaining_team_budget_metric" {
					continue
				}
				for _, s := range f.GetMetric() {
					l := map[string]string{}
					for _, p := range s.GetLabel() {
						l[p.GetName()] = p.GetValue()
					}
					if len(l) != 2 && !byOwner || len(l) != 3 && byOwner {
						t.Errorf("OwnerLabel %v: labels %v", byOwner, l)
					}
					out[l["team"]+" "+l["team_alias"]+" "+l["owner"]] = s.GetGauge().GetValue()
				}
			}
			return out
		}
		charge("alice", "Alice Eng", 10, clock.Add(20*time.Hour)) // a later reset than bob's
		charge("bob", "Bob Eng", 50, clock.Add(2*time.Hour))
		got := teams()
		if !byOwner {
			if len(got) != 1 || got["eng Bob Eng "] != 50 {
				t.Errorf("without OwnerLabel: %v, want bob's team (charged last) alone: eng Bob Eng = 50", got)
			}
		} else if len(got) != 2 || got["eng Alice Eng alice"] != 90 || got["eng Bob Eng bob"] != 50 {
			t.Errorf("with OwnerLabel: %v, want alice's 90 and bob's 50", got)
		}
		// alice's team is deleted, bob's stays: bob's gauges stay.
		clock = clock.Add(61 * time.Second)
		got = teams()
		want := "eng Bob Eng "
		if byOwner {
			want = "eng Bob Eng bob"
		}
		if len(got) != 1 || got[want] != 50 {
			t.Errorf("OwnerLabel %v, alice's team deleted: %v, want %q = 50 alone", byOwner, got, want)
		}
	}
}
