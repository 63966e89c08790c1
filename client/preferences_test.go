package client_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// The preference calls against a real server: create, select under it, feedback, a speed
// report, read back the counts, list, delete.
func TestPreferencesAgainstServer(t *testing.T) {
	c, _ := realServer(t, selectionOptions)
	ctx := context.Background()
	p, err := c.CreatePreference(ctx, &client.CreatePreferenceRequest{Name: "support"})
	if err != nil || !strings.HasPrefix(p.PreferenceID, "pref_") || p.Name != "support" {
		t.Fatalf("create: %+v, %v", p, err)
	}
	sel, err := c.ModelSelect(ctx, &client.ModelSelectRequest{
		Messages:     []client.Message{{Role: "user", Content: "How do I reset my password?"}},
		LLMProviders: []client.Provider{{Provider: "openai", Model: "gpt-4o"}, {Provider: "acme", Model: "support-ft"}},
		PreferenceID: p.PreferenceID,
	})
	if err != nil {
		t.Fatal(err)
	}
	fb, err := c.Feedback(ctx, &client.FeedbackRequest{SessionID: sel.SessionID, Provider: client.Provider{Provider: "acme", Model: "support-ft"},
		Feedback: client.FeedbackAccuracy{Accuracy: 1}})
	if err != nil || !fb.Personalized || fb.Provider != "acme/support-ft" || fb.FeedbackCount != 1 {
		t.Fatalf("feedback: %+v, %v", fb, err)
	}
	lr, err := c.ReportLatency(ctx, &client.LatencyReport{SessionID: sel.SessionID, Provider: client.Provider{Provider: "openai", Model: "gpt-4o"},
		Feedback: client.LatencyMetrics{TokensPerSecond: 80}})
	if err != nil || !lr.Personalized || lr.Feedback.TokensPerSecond != 80 {
		t.Fatalf("latency report: %+v, %v", lr, err)
	}
	got, err := c.Preference(ctx, p.PreferenceID)
	if err != nil || got.FeedbackCount != 1 || len(got.Models) != 2 {
		t.Fatalf("read back: %+v, %v", got, err)
	}
	for _, m := range got.Models {
		switch m.Model {
		case "acme/support-ft":
			if m.Feedback != 1 || m.Successes != 1 {
				t.Errorf("acme/support-ft counts %+v", m)
			}
		case "openai/gpt-4o":
			if m.LatencyReports != 1 || m.SecondsPerTokenSum != 1.0/80 {
				t.Errorf("openai/gpt-4o speed %+v", m)
			}
		}
	}
	list, err := c.ListPreferences(ctx, "", 10)
	if err != nil || len(list.Data) != 1 {
		t.Fatalf("list: %+v, %v", list, err)
	}
	if err := c.DeletePreference(ctx, p.PreferenceID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Preference(ctx, p.PreferenceID); err == nil {
		t.Fatal("the deleted preference still reads")
	}
}
