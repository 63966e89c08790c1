package client_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// Not Diamond's journey from the Go client: select, then rate the choice with the Provider
// the answer hands back (Chosen), without rebuilding it from the label; a ranked entry of
// the name shape comes back as a name, and Labels lists the order a completion falls
// back in.
func TestModelSelectChosenFeedsTheNextCall(t *testing.T) {
	c, _ := realServer(t, selectionOptions)
	ctx := context.Background()
	p, err := c.CreatePreference(ctx, &client.CreatePreferenceRequest{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.ModelSelect(ctx, &client.ModelSelectRequest{
		Messages: []client.Message{{Role: "user", Content: "Summarise this ticket."}},
		LLMProviders: []client.Provider{{Provider: "openai", Model: "gpt-4o", Attributes: map[string]any{"quality": 0.9}},
			{Provider: "openai", Model: "gpt-4o-mini", Attributes: map[string]any{"quality": 0.4}}},
		PreferenceID: p.PreferenceID,
	})
	if err != nil {
		t.Fatal(err)
	}
	chosen := res.Chosen()
	if !reflect.DeepEqual(chosen, client.Provider{Provider: "openai", Model: "gpt-4o"}) {
		t.Fatalf("Chosen() = %+v for %+v", chosen, res)
	}
	if got := res.Labels(); !slices.Equal(got, []string{"openai/gpt-4o", "openai/gpt-4o-mini"}) {
		t.Fatalf("Labels() = %v", got)
	}
	fb, err := c.Feedback(ctx, &client.FeedbackRequest{SessionID: res.SessionID, Provider: chosen, Feedback: client.FeedbackAccuracy{Accuracy: 1}})
	if err != nil || fb.Provider != "openai/gpt-4o" || !fb.Personalized {
		t.Fatalf("feedback with Chosen(): %+v, %v", fb, err)
	}
	if _, err := c.ReportLatency(ctx, &client.LatencyReport{SessionID: res.SessionID, Provider: res.Providers[1].Candidate(),
		Feedback: client.LatencyMetrics{TokensPerSecond: 50}}); err != nil {
		t.Fatalf("latency report with Candidate(): %v", err)
	}

	named, err := c.ModelSelect(ctx, &client.ModelSelectRequest{
		Messages:     []client.Message{{Role: "user", Content: "hi"}},
		LLMProviders: []client.Provider{{Name: "house/bot", Attributes: map[string]any{"quality": 0.9}}, {Name: "other"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// a name with a slash stays a name: the ranked entry says which shape it was sent in
	if got := named.Chosen(); !reflect.DeepEqual(got, client.Provider{Name: "house/bot"}) {
		t.Fatalf("name shape Chosen() = %+v", got)
	}
	if _, err := c.Feedback(ctx, &client.FeedbackRequest{SessionID: named.SessionID, Provider: named.Chosen(), Feedback: client.FeedbackAccuracy{Accuracy: 0}}); err != nil {
		t.Fatalf("feedback on a named candidate: %v", err)
	}
}

// Without the ranked list (a server answering the spec's llm_label alone), Chosen reads
// the label and Labels is the label.
func TestModelSelectChosenFromLabelAlone(t *testing.T) {
	r := &client.ModelSelectResponse{LLMLabel: "anthropic/claude-3-5-haiku-20241022"}
	if got := r.Chosen(); !reflect.DeepEqual(got, client.Provider{Provider: "anthropic", Model: "claude-3-5-haiku-20241022"}) {
		t.Fatalf("Chosen() = %+v", got)
	}
	if got := r.Labels(); !slices.Equal(got, []string{r.LLMLabel}) {
		t.Fatalf("Labels() = %v", got)
	}
	if got := (&client.ModelSelectResponse{LLMLabel: "smart"}).Chosen(); !reflect.DeepEqual(got, client.Provider{Name: "smart"}) {
		t.Fatalf("name label Chosen() = %+v", got)
	}
	if (&client.ModelSelectResponse{}).Labels() != nil {
		t.Fatal("an empty answer has labels")
	}
}
