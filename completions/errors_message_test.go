package completions

import (
	"strings"
	"testing"
)

// TestAllFailedNamesEachModelOnce: a provider error already starting with the model is not
// prefixed with it again.
func TestAllFailedNamesEachModelOnce(t *testing.T) {
	e := &AllFailedError{Attempts: []Attempt{
		{Model: "openai/x", Error: "openai/x: model_not_found (HTTP 404): no such model"},
		{Model: "anthropic/y", Error: "skipped: the circuit breaker is open"},
	}}
	got := e.Error()
	want := "all models failed: openai/x: model_not_found (HTTP 404): no such model; anthropic/y: skipped: the circuit breaker is open"
	if got != want || strings.Count(got, "openai/x") != 1 {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
