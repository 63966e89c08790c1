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
	renamed, err := c.RenamePreference(ctx, p.PreferenceID, "support v2")
	if err != nil || renamed.Name != "support v2" || renamed.FeedbackCount != 1 {
		t.Fatalf("rename: %+v, %v (its feedback kept)", renamed, err)
	}
	if _, err := c.RenamePreference(ctx, "pref_nosuch", "x"); err == nil {
		t.Fatal("renaming an unknown preference succeeded")
	}
	if err := c.DeletePreference(ctx, p.PreferenceID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Preference(ctx, p.PreferenceID); err == nil {
		t.Fatal("the deleted preference still reads")
	}
}

// The fields Not Diamond's SDKs add reach the server from the Go client: a timeout that
// passes answers the default; prices decide a cost tradeoff; a custom model is not
// matched by name.
func TestModelSelectNotDiamondFieldsFromClient(t *testing.T) {
	c, _ := realServer(t, selectionOptions)
	ctx := context.Background()
	tiny := 1e-9
	res, err := c.ModelSelect(ctx, &client.ModelSelectRequest{
		Messages:     []client.Message{{Role: "user", Content: "hi"}},
		LLMProviders: []client.Provider{{Provider: "openai", Model: "gpt-4o"}, {Provider: "openai", Model: "gpt-4o-mini"}},
		Timeout:      &tiny, Default: "openai/gpt-4o-mini", Metric: "accuracy",
	})
	if err != nil || res.LLMLabel != "openai/gpt-4o-mini" || res.Providers[0].ScoreSource != "default" {
		t.Fatalf("timeout with a default: %+v, %v", res, err)
	}
	in, out, window := 1.0, 3.0, 128000
	res, err = c.ModelSelect(ctx, &client.ModelSelectRequest{
		Messages: []client.Message{{Role: "user", Content: "hi"}},
		LLMProviders: []client.Provider{{Provider: "acme", Model: "a", Attributes: map[string]any{"quality": 0.8}, InputPrice: &out, OutputPrice: &out},
			{Provider: "acme", Model: "b", Attributes: map[string]any{"quality": 0.8}, InputPrice: &in, OutputPrice: &in, ContextLength: &window},
			{Provider: "openai", Model: "gpt-4o", IsCustom: true}},
		Tradeoff: "cost",
	})
	if err != nil || res.LLMLabel != "acme/b" {
		t.Fatalf("cost tradeoff with input and output prices: %+v, %v", res, err)
	}
	for _, p := range res.Providers {
		if p.Model == "gpt-4o" && p.ScoreSource != "unknown" {
			t.Errorf("the custom gpt-4o was scored by %s", p.ScoreSource)
		}
	}
}
