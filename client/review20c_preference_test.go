package client_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/routing"
)

// jsonKeys returns the member names of v's JSON object, and of its first "models" entry
// prefixed "models.".
func jsonKeys(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var out []string
	for k, x := range m {
		out = append(out, k)
		if ms, ok := x.([]any); ok && k == "models" && len(ms) > 0 {
			for mk := range ms[0].(map[string]any) {
				out = append(out, "models."+mk)
			}
		}
	}
	slices.Sort(out)
	return out
}

// The Go client's Preference reads every field the server answers for a preference (the
// server's routing.Preference without its stored owner): router_training_job_id, set on
// the preferences Not Diamond's trainCustomRouter makes, was dropped.
func TestReview20cPreferenceShapeMatchesServer(t *testing.T) {
	now := time.Now().UTC()
	server := routing.Preference{ID: "pref_1", Name: "n", RouterModelID: "rm_1", RouterTrainingJobID: "tj_1",
		CreatedAt: now, UpdatedAt: now, FeedbackCount: 2, RouterFallback: routing.FallbackRouterDeleted,
		Models: []routing.ModelFeedback{{Model: "openai/gpt-4o", Feedback: 2, Successes: 1, Expected: 1.2, Adjustment: 0.1}}}
	raw, err := json.Marshal(server)
	if err != nil {
		t.Fatal(err)
	}
	var got client.Preference
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want, have := jsonKeys(t, server), jsonKeys(t, got)
	if !slices.Equal(want, have) {
		t.Fatalf("the client's Preference keeps %v of the server's %v", have, want)
	}
}
