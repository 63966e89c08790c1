package telemetry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestLiteLLMStartedStreamStatusIsWhatTheClientGot: a stream the server's shutdown cut after
// its first fragment had its 200 sent, then an error event, but read status_code 503 in
// litellm_proxy_total_requests_metric_total, and one an upstream broke after its start
// read its error's status (500): both now read 200, what the client was answered, and their
// failure's status stays in litellm_proxy_failed_requests_metric_total's exception_status
// (503 for the cut, the error's for the break). A cut before the first fragment (a 503
// answered), a realtime session refused at shutdown (no attempt) and a non-streamed cut
// still read 503; a realtime session cut after it opened reads 200.
func TestLiteLLMStartedStreamStatusIsWhatTheClientGot(t *testing.T) {
	m := New(Options{})
	m.EnableLiteLLM(LiteLLMOptions{StatusOf: func(error) int { return 500 }})
	now := time.Now()
	shuttingDown := errors.New("server: shutting down, the request did not finish within the shutdown timeout; retry it")
	cutAttempt := []completions.Attempt{{Model: "openai/m", Outcome: completions.OutcomeCancelled, Kind: "cut", Err: shuttingDown, Started: now}}
	opened := []completions.Attempt{{Model: "openai/gpt-realtime", Outcome: completions.OutcomeOK, Started: now}}
	for _, r := range []completions.RequestRecord{
		// 200 sent, then the error event: status_code 200.
		{Outcome: completions.RequestCancelled, CutBy: shuttingDown, Err: context.Canceled, Stream: true, TTFT: time.Millisecond, ModelGroup: "started-cut", Attempts: cutAttempt},
		{Outcome: completions.RequestCancelled, CutBy: shuttingDown, Err: context.Canceled, Stream: true, Partial: &completions.Response{Model: "openai/m"}, ModelGroup: "started-cut", Attempts: cutAttempt},
		{Outcome: completions.RequestStreamFailed, Err: &completions.StreamError{Model: "openai/m", Kind: "stream_broken", Err: errors.New("connection reset")},
			Stream: true, TTFT: time.Millisecond, ModelGroup: "broken", Attempts: []completions.Attempt{{Model: "openai/m", Outcome: completions.OutcomeError, Kind: "stream_broken", Started: now}}},
		{Operation: completions.OperationRealtime, Outcome: completions.RequestCancelled, CutBy: shuttingDown, Err: context.Canceled, Stream: true, ModelGroup: "realtime-opened", Attempts: opened},
		// A 503 answered: status_code 503.
		{Outcome: completions.RequestCancelled, CutBy: shuttingDown, Err: context.Canceled, Stream: true, ModelGroup: "unstarted-cut", Attempts: cutAttempt},
		{Outcome: completions.RequestCancelled, CutBy: shuttingDown, Err: context.Canceled, ModelGroup: "unstarted-cut", Attempts: cutAttempt},
		{Operation: completions.OperationRealtime, Outcome: completions.RequestCancelled, CutBy: shuttingDown, Err: context.Canceled, Stream: true, ModelGroup: "realtime-refused"},
	} {
		m.ObserveRequest(context.Background(), r)
	}
	want := map[string]string{"started-cut": "200", "broken": "200", "realtime-opened": "200", "unstarted-cut": "503", "realtime-refused": "503"}
	wantFailure := map[string]string{"started-cut": "503", "broken": "500", "realtime-opened": "503", "unstarted-cut": "503", "realtime-refused": "503"}
	if got := groupLabel(t, m, "litellm_proxy_total_requests_metric_total", "status_code"); !sameMap(got, want) {
		t.Errorf("litellm_proxy_total_requests_metric_total status_code by requested_model %v, want %v", got, want)
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
