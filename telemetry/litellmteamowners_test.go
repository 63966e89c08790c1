package telemetry

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestLiteLLMTeamCountersPerOwner: two owners' teams sharing a team id ("eng") added up in
// one series of every LiteLLM counter labelled team (requests, spend, tokens, latency,
// deployment calls); with Options.OwnerLabel each such metric carries an "owner" label
// after LiteLLM's, and each owner's team has series of its own. Without it the labels are
// LiteLLM's alone and the two teams share their series, as before.
func TestLiteLLMTeamCountersPerOwner(t *testing.T) {
	teamed := []string{"litellm_proxy_total_requests_metric_total", "litellm_spend_metric_total", "litellm_total_tokens_metric_total",
		"litellm_request_total_latency_metric", "litellm_llm_api_latency_metric", "litellm_deployment_success_responses_total",
		"litellm_deployment_total_requests_total", "litellm_proxy_failed_requests_metric_total", "litellm_deployment_failure_responses_total"}
	for _, byOwner := range []bool{false, true} {
		m := New(Options{OwnerLabel: byOwner})
		m.EnableLiteLLM(LiteLLMOptions{})
		now := time.Now()
		usage := completions.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15, Costs: completions.Costs{TotalTokensCost: 0.01, PriceKnown: true}}
		for _, owner := range []string{"alice", "bob"} {
			m.ObserveRequest(context.Background(), completions.RequestRecord{Outcome: completions.RequestOK, Model: "openai/ok", Provider: "openai",
				Owner: owner, TeamID: "eng", Usage: usage, Latency: time.Second,
				Attempts: []completions.Attempt{{Model: "openai/ok", Outcome: completions.OutcomeOK, LatencyMS: 900, Started: now}}})
			m.ObserveRequest(context.Background(), completions.RequestRecord{Outcome: completions.RequestFailed, Model: "openai/down", Provider: "openai",
				Owner: owner, TeamID: "eng", Err: errors.New("upstream down"),
				Attempts: []completions.Attempt{{Model: "openai/down", Outcome: completions.OutcomeError, Kind: "server_error", Started: now}}})
		}
		fams, err := m.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		owners := map[string][]string{}
		for _, f := range fams {
			for _, s := range f.GetMetric() {
				l := map[string]string{}
				for _, p := range s.GetLabel() {
					l[p.GetName()] = p.GetValue()
				}
				if _, ok := l["team"]; !ok || !strings.HasPrefix(f.GetName(), "litellm_") {
					if o, ok := l["owner"]; ok && strings.HasPrefix(f.GetName(), "litellm_deployment_state") {
						t.Errorf("%s has an owner label %q: it names no team", f.GetName(), o)
					}
					continue
				}
				if l["team"] != "eng" {
					t.Errorf("%s: team %q, want eng", f.GetName(), l["team"])
				}
				o, ok := l["owner"]
				if ok != byOwner {
					t.Errorf("OwnerLabel %v: %s has an owner label: %v", byOwner, f.GetName(), ok)
				}
				owners[f.GetName()] = append(owners[f.GetName()], o)
			}
		}
		for _, name := range teamed {
			got := slices.Compact(slices.Sorted(slices.Values(owners[name])))
			want := []string{""}
			if byOwner {
				want = []string{"alice", "bob"}
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("OwnerLabel %v: %s series by owner %q, want %q", byOwner, name, got, want)
			}
		}
		if byOwner {
			if got := sumOf(t, m, "litellm_spend_metric_total"); got != 0.02 {
				t.Errorf("litellm_spend_metric_total sums to %v, want 0.02", got)
			}
		}
	}
}
