package telemetry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestLiteLLMClientGoneNotDeploymentFailure: an attempt that ended because its caller went
// away (Kind client_gone or closed_early) is no failure of its deployment — LiteLLM counts
// none for a client disconnect — even when the request went on after it; a real failure
// beside it still counts.
func TestLiteLLMClientGoneNotDeploymentFailure(t *testing.T) {
	m := New(Options{})
	m.EnableLiteLLM(LiteLLMOptions{})
	now := time.Now()
	m.ObserveRequest(context.Background(), completions.RequestRecord{Outcome: completions.RequestOK, Model: "openai/ok", Provider: "openai", ModelGroup: "g",
		Attempts: []completions.Attempt{
			{Model: "openai/left", Outcome: completions.OutcomeCancelled, Kind: "client_gone", Err: context.Canceled, Started: now},
			{Model: "openai/closed", Outcome: completions.OutcomeCancelled, Kind: "closed_early", Err: context.Canceled, Started: now},
			{Model: "openai/down", Outcome: completions.OutcomeError, Kind: "server_error", Started: now},
			{Model: "openai/ok", Outcome: completions.OutcomeOK, Started: now},
		}})
	wantDeploymentSeries(t, m, []deploymentSeries{
		{"litellm_deployment_failure_responses_total", map[string]int{"openai/down": 1}},
		{"litellm_deployment_total_requests_total", map[string]int{"openai/down": 1, "openai/ok": 1}},
		{"litellm_deployment_state", map[string]int{"openai/down": 1, "openai/ok": 1}},
	})
}

// TestLiteLLMShutdownCutNotDeploymentFailure: an attempt the server's own graceful shutdown
// cut (Kind "cut", its cause server.ErrShuttingDown) is no failure of its deployment either:
// it counts in neither the deployment failure and call counters nor the deployment state,
// while a real failure beside it still does.
func TestLiteLLMShutdownCutNotDeploymentFailure(t *testing.T) {
	m := New(Options{})
	m.EnableLiteLLM(LiteLLMOptions{})
	now := time.Now()
	shuttingDown := errors.New("server: shutting down, the request did not finish within the shutdown timeout; retry it")
	m.ObserveRequest(context.Background(), completions.RequestRecord{Outcome: completions.RequestFailed, Model: "openai/cut", Provider: "openai", ModelGroup: "g",
		Err: shuttingDown,
		Attempts: []completions.Attempt{
			{Model: "openai/down", Outcome: completions.OutcomeError, Kind: "server_error", Started: now},
			{Model: "openai/cut", Outcome: completions.OutcomeCancelled, Kind: "cut", Err: shuttingDown, Error: shuttingDown.Error(), Started: now},
		}})
	wantDeploymentSeries(t, m, []deploymentSeries{
		{"litellm_deployment_failure_responses_total", map[string]int{"openai/down": 1}},
		{"litellm_deployment_total_requests_total", map[string]int{"openai/down": 1}},
		{"litellm_deployment_state", map[string]int{"openai/down": 1}},
	})
}

// deploymentSeries is a metric and the number of its series wanted per litellm_model_name.
type deploymentSeries struct {
	metric string
	want   map[string]int
}

// wantDeploymentSeries checks m's series of each metric by litellm_model_name.
func wantDeploymentSeries(t *testing.T, m *Metrics, wants []deploymentSeries) {
	t.Helper()
	for _, tc := range wants {
		got := map[string]int{}
		fams, err := m.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			if f.GetName() != tc.metric {
				continue
			}
			for _, s := range f.GetMetric() {
				for _, p := range s.GetLabel() {
					if p.GetName() == "litellm_model_name" {
						got[p.GetValue()]++
					}
				}
			}
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: series by litellm_model_name %v, want %v", tc.metric, got, tc.want)
			continue
		}
		for k, n := range tc.want {
			if got[k] != n {
				t.Errorf("%s: series by litellm_model_name %v, want %v", tc.metric, got, tc.want)
			}
		}
	}
}
