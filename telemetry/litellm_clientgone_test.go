package telemetry

import (
	"context"
	"errors"
	"strconv"
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

// TestLiteLLMShutdownCutIsProxyFailure: a request the server's own graceful shutdown cut
// (RequestCancelled with CutBy set) was answered a 503 asking to retry — a failure its
// client saw — so it counts in litellm_proxy_failed_requests_metric_total and
// litellm_proxy_total_requests_metric_total with exception_status 503 and the proxy's own
// ServiceUnavailableError; a request whose client left counts in neither.
func TestLiteLLMShutdownCutIsProxyFailure(t *testing.T) {
	m := New(Options{})
	m.EnableLiteLLM(LiteLLMOptions{})
	now := time.Now()
	shuttingDown := errors.New("server: shutting down, the request did not finish within the shutdown timeout; retry it")
	m.ObserveRequest(context.Background(), completions.RequestRecord{Outcome: completions.RequestCancelled, ModelGroup: "g",
		Err: context.Canceled, CutBy: shuttingDown,
		Attempts: []completions.Attempt{
			{Model: "openai/cut", Outcome: completions.OutcomeCancelled, Kind: "cut", Err: shuttingDown, Error: shuttingDown.Error(), Started: now},
		}})
	m.ObserveRequest(context.Background(), completions.RequestRecord{Outcome: completions.RequestCancelled, ModelGroup: "left",
		Err: context.Canceled,
		Attempts: []completions.Attempt{
			{Model: "openai/left", Outcome: completions.OutcomeCancelled, Kind: "client_gone", Err: context.Canceled, Started: now},
		}})
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"litellm_proxy_failed_requests_metric_total", "litellm_proxy_total_requests_metric_total"} {
		var got []map[string]string
		for _, f := range fams {
			if f.GetName() != name {
				continue
			}
			for _, s := range f.GetMetric() {
				l := map[string]string{"value": strconv.FormatFloat(s.GetCounter().GetValue(), 'f', -1, 64)}
				for _, p := range s.GetLabel() {
					l[p.GetName()] = p.GetValue()
				}
				got = append(got, l)
			}
		}
		if len(got) != 1 {
			t.Fatalf("%s: series %v, want the cut request's only", name, got)
		}
		l := got[0]
		if l["value"] != "1" || l["requested_model"] != "g" {
			t.Errorf("%s: %v, want 1 for requested_model g", name, l)
		}
		if _, ok := l["exception_status"]; ok && l["exception_status"] != "503" {
			t.Errorf("%s: exception_status %q, want 503", name, l["exception_status"])
		}
		if _, ok := l["exception_class"]; ok && l["exception_class"] != "ServiceUnavailableError" {
			t.Errorf("%s: exception_class %q, want ServiceUnavailableError", name, l["exception_class"])
		}
		if _, ok := l["status_code"]; ok && l["status_code"] != "503" {
			t.Errorf("%s: status_code %q, want 503", name, l["status_code"])
		}
	}
	wantDeploymentSeries(t, m, []deploymentSeries{
		{"litellm_deployment_failure_responses_total", map[string]int{}},
	})
}
