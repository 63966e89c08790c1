package completions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
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

func TestAllFailedErrorUnwrapsToTheAttempts(t *testing.T) {
	rate := &providers.Error{Provider: "a", Model: "x", Kind: providers.KindRateLimited, Message: "slow down"}
	e := fmt.Errorf("complete: %w", &AllFailedError{Attempts: []Attempt{
		{Model: "a/x", Outcome: OutcomeError, Kind: "rate_limited", Error: rate.Error(), Err: rate},
		{Model: "b/y", Outcome: OutcomeError, Kind: "timeout", Error: "deadline", Err: context.DeadlineExceeded},
	}})
	var pe *providers.Error
	if !errors.As(e, &pe) || pe != rate {
		t.Errorf("errors.As(*providers.Error) = %v, want the first attempt's", pe)
	}
	if !errors.Is(e, context.DeadlineExceeded) || !errors.Is(e, ErrAllFailed) {
		t.Errorf("%v does not match its attempts' errors and ErrAllFailed", e)
	}
}
