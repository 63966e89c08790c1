package telemetry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestLiteLLMStartedStreamStatusIsTheFailures: a stream that failed after its first fragment
// (its 200 sent, then an error event) — cut by the server's shutdown or broken by its
// upstream — reads its failure's status in litellm_proxy_total_requests_metric_total's
// status_code as in the failed counter's exception_status (503 for the cut, the error's for
// the break), as LiteLLM's post_call_failure_hook labels a stream that failed mid-way, so
// that a dashboard counting status_code != 200 sees it; so do a cut before the first
// fragment, a realtime session refused or cut at shutdown and a non-streamed cut.
func TestLiteLLMStartedStreamStatusIsTheFailures(t *testing.T) {
	m := New(Options{})
	m.EnableLiteLLM(LiteLLMOptions{StatusOf: func(error) int { return 500 }})
	now := time.Now()
	shuttingDown := errors.New("server: shutting down, the request did not finish within the shutdown timeout; retry it")
	cutAttempt := []completions.Attempt{{Model: "openai/m", Outcome: completions.OutcomeCancelled, Kind: "cut", Err: shuttingDown, Started: now}}
	opened := []completions.Attempt{{Model: "openai/gpt-realtime", Outcome: completions.OutcomeOK, Started: now}}
	for _, r := range []completions.RequestRecord{
		// 200 sent, then the error event: still the failure's status.
		{Outcome: completions.RequestCancelled, CutBy: shuttingDown, Err: context.Canceled, Stream: true, TTFT: time.Millisecond, ModelGroup: "started-cut", Attempts: cutAttempt},
		{Outcome: completions.RequestCancelled, CutBy: shuttingDown, Err: context.Canceled, Stream: true, Partial: &completions.Response{Model: "openai/m"}, ModelGroup: "started-cut", Attempts: cutAttempt},
		{Outcome: completions.RequestStreamFailed, Err: &completions.StreamError{Model: "openai/m", Kind: "stream_broken", Err: errors.New("connection reset")},
			Stream: true, TTFT: time.Millisecond, ModelGroup: "broken", Attempts: []completions.Attempt{{Model: "openai/m", Outcome: completions.OutcomeError, Kind: "stream_broken", Started: now}}},
		{Operation: completions.OperationRealtime, Outcome: completions.RequestCancelled, CutBy: shuttingDown, Err: context.Canceled, Stream: true, ModelGroup: "realtime-opened", Attempts: opened},
		// A 503 answered.
		{Outcome: completions.RequestCancelled, CutBy: shuttingDown, Err: context.Canceled, Stream: true, ModelGroup: "unstarted-cut", Attempts: cutAttempt},
		{Outcome: completions.RequestCancelled, CutBy: shuttingDown, Err: context.Canceled, ModelGroup: "unstarted-cut", Attempts: cutAttempt},
		{Operation: completions.OperationRealtime, Outcome: completions.RequestCancelled, CutBy: shuttingDown, Err: context.Canceled, Stream: true, ModelGroup: "realtime-refused"},
	} {
		m.ObserveRequest(context.Background(), r)
	}
	wantFailure := map[string]string{"started-cut": "503", "broken": "500", "realtime-opened": "503", "unstarted-cut": "503", "realtime-refused": "503"}
	if got := groupLabel(t, m, "litellm_proxy_total_requests_metric_total", "status_code"); !sameMap(got, wantFailure) {
		t.Errorf("litellm_proxy_total_requests_metric_total status_code by requested_model %v, want %v", got, wantFailure)
	}
	if got := groupLabel(t, m, "litellm_proxy_failed_requests_metric_total", "exception_status"); !sameMap(got, wantFailure) {
		t.Errorf("litellm_proxy_failed_requests_metric_total exception_status by requested_model %v, want %v", got, wantFailure)
	}
}

// groupLabel is, of m's series of the counter name, the values of label by requested_model
// (several joined with ",").
func groupLabel(t *testing.T, m *Metrics, name, label string) map[string]string {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			var group, value string
			for _, p := range s.GetLabel() {
				switch p.GetName() {
				case "requested_model":
					group = p.GetValue()
				case label:
					value = p.GetValue()
				}
			}
			if got[group] != "" {
				value = got[group] + "," + value
			}
			got[group] = value
		}
	}
	return got
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
