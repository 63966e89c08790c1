package telemetry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestGatewayRequestsCutOutcome: a request the server's shutdown cut (RequestRecord.CutBy)
// read outcome cancelled in switchyard_gateway_requests_total and the duration histogram,
// as a client that left; it now reads cut, as the usage history says (its error_type its
// cut attempt's kind, cut also when it had no attempt: a request the closed gateway
// refused, a realtime session refused at shutdown), and a client that left still reads
// cancelled.
func TestGatewayRequestsCutOutcome(t *testing.T) {
	m := New(Options{})
	now := time.Now()
	shuttingDown := errors.New("server: shutting down")
	for _, r := range []completions.RequestRecord{
		{Outcome: completions.RequestCancelled, CutBy: shuttingDown, Err: context.Canceled, Requested: "openai/a",
			Attempts: []completions.Attempt{{Model: "openai/a", Outcome: completions.OutcomeCancelled, Kind: "cut", Started: now}}},
		{Outcome: completions.RequestCancelled, CutBy: shuttingDown, Err: completions.ErrGatewayClosed, Requested: "openai/b"},
		{Outcome: completions.RequestCancelled, Err: context.Canceled, Requested: "openai/c",
			Attempts: []completions.Attempt{{Model: "openai/c", Outcome: completions.OutcomeCancelled, Kind: "client_gone", Started: now}}},
	} {
		m.ObserveRequest(context.Background(), r)
	}
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	durations := map[string]string{}
	for _, f := range fams {
		for _, s := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range s.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			switch f.GetName() {
			case "switchyard_gateway_requests_total":
				got[l["gen_ai_request_model"]] = l["outcome"] + "/" + l["error_type"]
			case "gen_ai_client_operation_duration_seconds":
				durations[l["gen_ai_request_model"]] = l["outcome"]
			}
		}
	}
	want := map[string]string{"openai/a": "cut/cut", "openai/b": "cut/cut", "openai/c": "cancelled/client_gone"}
	if !sameMap(got, want) {
		t.Errorf("switchyard_gateway_requests_total outcome/error_type by model %v, want %v", got, want)
	}
	if wantD := map[string]string{"openai/a": "cut", "openai/b": "cut", "openai/c": "cancelled"}; !sameMap(durations, wantD) {
		t.Errorf("gen_ai_client_operation_duration_seconds outcome by model %v, want %v", durations, wantD)
	}
}

// TestCutRequestSpanOutcome: the span of a request the server's shutdown cut reads
// switchyard.outcome cut and error.type cut (no attempt kind to give), its status an error
// saying cut; one whose client left still reads cancelled.
func TestCutRequestSpanOutcome(t *testing.T) {
	for _, tc := range []struct {
		cutBy error
		want  string
	}{{errors.New("server: shutting down"), "cut"}, {nil, "cancelled"}} {
		r := completions.RequestRecord{Outcome: completions.RequestCancelled, CutBy: tc.cutBy, Err: context.Canceled, Requested: "openai/gpt-4o", Start: time.Now()}
		sp := chatSpanStub(t, observedSpans(t, TracingOptions{}, r))
		outcome, _ := attrOf(sp.Attributes, "switchyard.outcome")
		errType, _ := attrOf(sp.Attributes, "error.type")
		if outcome.AsString() != tc.want || errType.AsString() != tc.want || sp.Status.Description != tc.want {
			t.Errorf("CutBy %v: switchyard.outcome %q, error.type %q, status %q; want %s", tc.cutBy, outcome.AsString(), errType.AsString(), sp.Status.Description, tc.want)
		}
	}
}
