package server

import (
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// TestReview24bSubmittedStatusIsQueued: the spec's Optimization job (returned on submit)
// has status "`queued` at submission", and Submit never answers anything else, but the
// OpenAPI document gave the 202 answer's status every job state (queued, running,
// completed, interrupted, failed), so a generated client could not rely on it.
func TestReview24bSubmittedStatusIsQueued(t *testing.T) {
	e := optimizeServer(t, fakeAgentRunner{block: func(sandbox.Job) bool { return true }})
	doc := openAPIDoc(t, e.s)
	props := at(doc, "paths", "/api/v1/optimize", "post", "responses", "202", "content", "application/json", "schema", "properties")
	if got := strs(at(props, "status", "enum")); !slices.Equal(got, []string{"queued"}) {
		t.Errorf("submit: status enum %v, want [queued]", got)
	}
}
