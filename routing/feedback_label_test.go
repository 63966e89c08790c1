package routing_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
)

// TestFeedbackOnTheLabelOfANamedCandidate: a candidate given as {"name": ...} comes back
// as a bare llm_label ("my-local-llm"); feedback and latency reports naming it by that
// label, as a string, rate it (they were a 400 asking for a "provider/model" string).
func TestFeedbackOnTheLabelOfANamedCandidate(t *testing.T) {
	ctx := context.Background()
	sel := quietSelector()
	resp, err := sel.Select(ctx, "alice", &routing.Request{Messages: []routing.Message{{Role: "user", Content: "hi"}},
		LLMProviders: []routing.Candidate{{Name: "my-local-llm"}, {Provider: "openai", Model: "gpt-4o"}}})
	if err != nil {
		t.Fatal(err)
	}
	var req routing.FeedbackRequest
	if err := json.Unmarshal(fmt.Appendf(nil, `{"session_id": %q, "provider": "my-local-llm", "feedback": {"accuracy": 1}}`, resp.SessionID), &req); err != nil {
		t.Fatal(err)
	}
	got, err := sel.Feedback(ctx, "alice", &req)
	if err != nil || got.Provider != "my-local-llm" {
		t.Fatalf("feedback on the label: %+v, %v", got, err)
	}
	var lr routing.LatencyReport
	if err := json.Unmarshal(fmt.Appendf(nil, `{"session_id": %q, "provider": "my-local-llm", "feedback": {"tokens_per_second": 40}}`, resp.SessionID), &lr); err != nil {
		t.Fatal(err)
	}
	if got, err := sel.ReportLatency(ctx, "alice", &lr); err != nil || got.Provider != "my-local-llm" {
		t.Fatalf("latency on the label: %+v, %v", got, err)
	}
	// A bare string that is no candidate of the session is still a 400 naming provider.
	if err := json.Unmarshal(fmt.Appendf(nil, `{"session_id": %q, "provider": "other-llm", "feedback": {"accuracy": 1}}`, resp.SessionID), &req); err != nil {
		t.Fatal(err)
	}
	var ve *routing.ValidationError
	if _, err := sel.Feedback(ctx, "alice", &req); !errors.As(err, &ve) || ve.Field != "provider" {
		t.Fatalf("not a candidate: %v", err)
	}
}
