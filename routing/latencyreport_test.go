package routing_test

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
)

// Reported speeds under a preference decide tradeoff latency; a second report on the same
// candidate of a session replaces the first; reports without a preference personalize
// nothing; bad reports name the field.
func TestLatencyReports(t *testing.T) {
	ctx := context.Background()
	sel := quietSelector()
	pref, err := sel.CreatePreference(ctx, "alice", routing.PreferenceRequest{})
	if err != nil {
		t.Fatal(err)
	}
	tol := 0.05
	req := func(pid string) *routing.Request {
		return &routing.Request{Messages: userMsg("Summarise this paragraph."), PreferenceID: pid, Tradeoff: "latency", TradeoffTolerance: &tol,
			LLMProviders: []routing.Candidate{{Name: "acme/slow", Attributes: map[string]any{"quality": 0.8}},
				{Name: "acme/fast", Attributes: map[string]any{"quality": 0.8}}}}
	}
	resp := mustSelect(t, sel, "alice", req(pref.ID))
	if resp.LLMLabel != "acme/slow" {
		t.Fatalf("without speeds the pick is %s, want the first of equals (acme/slow)", resp.LLMLabel)
	}
	report := func(sess, label string, tps float64) (*routing.LatencyReportResponse, error) {
		return sel.ReportLatency(ctx, "alice", &routing.LatencyReport{SessionID: sess, Provider: routing.Candidate{Name: label},
			Feedback: routing.LatencyMetrics{TokensPerSecond: &tps}})
	}
	if _, err := report(resp.SessionID, "acme/slow", 900); err != nil { // replaced below
		t.Fatal(err)
	}
	for _, r := range []struct {
		label string
		tps   float64
	}{{"acme/slow", 12}, {"acme/fast", 140}} {
		out, err := report(resp.SessionID, r.label, r.tps)
		if err != nil || !out.Personalized || out.PreferenceID != pref.ID {
			t.Fatalf("report %s: %+v, %v", r.label, out, err)
		}
	}
	p, err := sel.Preference(ctx, "alice", pref.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range p.Models {
		if spt, _ := m.SecondsPerToken(); m.LatencyReports != 1 || (m.Model == "acme/slow" && spt != 1.0/12) {
			t.Errorf("%s: %v reports, %v s/token; want one report each, the second on acme/slow replacing the first", m.Model, m.LatencyReports, spt)
		}
	}
	if got := mustSelect(t, sel, "alice", req(pref.ID)).LLMLabel; got != "acme/fast" {
		t.Fatalf("with reported speeds the latency tradeoff picks %s, want acme/fast", got)
	}
	// the same request without the preference knows no speeds
	if got := mustSelect(t, sel, "alice", req("")).LLMLabel; got != "acme/slow" {
		t.Fatalf("without the preference the pick is %s, want acme/slow", got)
	}

	plain := mustSelect(t, sel, "alice", req(""))
	if out, err := report(plain.SessionID, "acme/fast", 50); err != nil || out.Personalized {
		t.Fatalf("a report on a session without a preference: %+v, %v; want recorded, not personalized", out, err)
	}
	var ve *routing.ValidationError
	for _, c := range []struct {
		label string
		tps   float64
		field string
	}{{"acme/fast", 0, "feedback.tokens_per_second"}, {"acme/fast", -3, "feedback.tokens_per_second"}, {"acme/other", 10, "provider"}} {
		if _, err := report(resp.SessionID, c.label, c.tps); !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("report %s at %v: %v, want a validation error naming %s", c.label, c.tps, err, c.field)
		}
	}
	tps := 10.0
	if _, err := sel.ReportLatency(ctx, "bob", &routing.LatencyReport{SessionID: resp.SessionID, Provider: routing.Candidate{Name: "acme/fast"},
		Feedback: routing.LatencyMetrics{TokensPerSecond: &tps}}); !errors.Is(err, routing.ErrNotFound) {
		t.Errorf("another owner's session: %v, want not found", err)
	}
}
