package routing_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store"
)

// sourceOf returns the score_source of the candidate labelled label.
func sourceOf(t *testing.T, resp *routing.Response, label string) string {
	t.Helper()
	for _, p := range resp.Providers {
		if p.Name == label || p.Provider+"/"+p.Model == label {
			return p.ScoreSource
		}
	}
	t.Fatalf("%s not in %+v", label, resp.Providers)
	return ""
}

// A caller's own model (is_custom) and the public model of the same name are different
// models: a preference's feedback on one must not correct the other's estimate.
func TestFeedbackKeepsCustomAndPublicModelsApart(t *testing.T) {
	ctx := context.Background()
	sel, _ := newSelector(t, routing.Options{})
	pref, err := sel.CreatePreference(ctx, "o", routing.PreferenceRequest{})
	if err != nil {
		t.Fatal(err)
	}
	mine := routing.Candidate{Name: "openai/gpt-4o", IsCustom: true}
	public := routing.Candidate{Name: "openai/gpt-4o"}
	other := routing.Candidate{Name: "openai/gpt-4o-mini"}
	zero := 0.0
	for range 5 {
		resp := mustSelect(t, sel, "o", &routing.Request{Messages: userMsg("hi"), PreferenceID: pref.ID,
			LLMProviders: []routing.Candidate{mine, other}})
		if _, err := sel.Feedback(ctx, "o", &routing.FeedbackRequest{SessionID: resp.SessionID,
			Provider: routing.Candidate{Name: "openai/gpt-4o"}, Feedback: routing.FeedbackMetrics{Accuracy: &zero}}); err != nil {
			t.Fatal(err)
		}
	}
	tps := 50.0
	resp := mustSelect(t, sel, "o", &routing.Request{Messages: userMsg("hi"), PreferenceID: pref.ID,
		LLMProviders: []routing.Candidate{mine, other}})
	if !strings.HasSuffix(sourceOf(t, resp, "openai/gpt-4o"), routing.SourceFeedbackSuffix) {
		t.Fatalf("the custom model's own feedback does not correct it: %+v", resp.Providers)
	}
	if _, err := sel.ReportLatency(ctx, "o", &routing.LatencyReport{SessionID: resp.SessionID,
		Provider: routing.Candidate{Name: "openai/gpt-4o"}, Feedback: routing.LatencyMetrics{TokensPerSecond: &tps}}); err != nil {
		t.Fatal(err)
	}
	p, err := sel.Preference(ctx, "o", pref.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Models) != 1 || !p.Models[0].IsCustom || p.Models[0].Feedback != 5 || p.Models[0].LatencyReports != 1 {
		t.Fatalf("preference models %+v, want one custom entry with 5 feedbacks and 1 latency report", p.Models)
	}
	resp = mustSelect(t, sel, "o", &routing.Request{Messages: userMsg("hi"), PreferenceID: pref.ID,
		LLMProviders: []routing.Candidate{public, other}})
	if src := sourceOf(t, resp, "openai/gpt-4o"); strings.HasSuffix(src, routing.SourceFeedbackSuffix) {
		t.Fatalf("the public model was corrected by the custom model's feedback: %s", src)
	}
	// feedback on the public one is its own entry
	one := 1.0
	if _, err := sel.Feedback(ctx, "o", &routing.FeedbackRequest{SessionID: resp.SessionID,
		Provider: public, Feedback: routing.FeedbackMetrics{Accuracy: &one}}); err != nil {
		t.Fatal(err)
	}
	if p, err = sel.Preference(ctx, "o", pref.ID); err != nil || len(p.Models) != 2 || p.FeedbackCount != 6 {
		t.Fatalf("preference %+v %v, want a custom and a public entry", p, err)
	}
}

// A preference stored by an earlier build has entries without is_custom: they keep
// counting for the public model of that name, and a custom model of the name starts apart.
func TestFeedbackReadsPreferenceStoredBeforeCustomKeys(t *testing.T) {
	ctx := context.Background()
	sel, st := newSelector(t, routing.Options{})
	id := "pref_0123456789abcdef01234567"
	old := `{"preference_id":"` + id + `","created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-02T00:00:00Z",` +
		`"feedback_count":5,"models":[{"model":"openai/gpt-4o","feedback":5,"successes":0,"expected":4,` +
		`"latency_reports":2,"seconds_per_token_sum":0.04}],"owner":"o"}`
	if err := store.PutJSON(ctx, st, store.Preferences, id, json.RawMessage(old)); err != nil {
		t.Fatal(err)
	}
	p, err := sel.Preference(ctx, "o", id)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Models) != 1 || p.Models[0].IsCustom || p.Models[0].Feedback != 5 || p.Models[0].Adjustment >= 0 {
		t.Fatalf("old preference read as %+v", p.Models)
	}
	pub := mustSelect(t, sel, "o", &routing.Request{Messages: userMsg("hi"), PreferenceID: id,
		LLMProviders: []routing.Candidate{{Name: "openai/gpt-4o"}, {Name: "openai/gpt-4o-mini"}}})
	if src := sourceOf(t, pub, "openai/gpt-4o"); !strings.HasSuffix(src, routing.SourceFeedbackSuffix) {
		t.Fatalf("the old counts no longer correct the public model: %s", src)
	}
	mine := mustSelect(t, sel, "o", &routing.Request{Messages: userMsg("hi"), PreferenceID: id,
		LLMProviders: []routing.Candidate{{Name: "openai/gpt-4o", IsCustom: true}, {Name: "openai/gpt-4o-mini"}}})
	if src := sourceOf(t, mine, "openai/gpt-4o"); strings.HasSuffix(src, routing.SourceFeedbackSuffix) {
		t.Fatalf("the old public counts corrected a custom model: %s", src)
	}
	zero := 0.0
	if _, err := sel.Feedback(ctx, "o", &routing.FeedbackRequest{SessionID: mine.SessionID,
		Provider: routing.Candidate{Name: "openai/gpt-4o"}, Feedback: routing.FeedbackMetrics{Accuracy: &zero}}); err != nil {
		t.Fatal(err)
	}
	if p, err = sel.Preference(ctx, "o", id); err != nil || len(p.Models) != 2 || p.FeedbackCount != 6 {
		t.Fatalf("after feedback on the custom model: %+v %v", p, err)
	}
	for _, m := range p.Models {
		if !m.IsCustom && (m.Feedback != 5 || m.LatencyReports != 2) {
			t.Fatalf("the old public entry changed: %+v", m)
		}
	}
}
