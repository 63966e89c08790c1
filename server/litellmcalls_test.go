package server

import (
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestLiteLLMCallsLeaveLostHedgesOut: x-litellm-attempted-retries and -fallbacks count the
// calls LiteLLM's router would have made. A hedged start that lost the race is recorded
// with its start (its call is traced) but is no retry or fallback of LiteLLM's; a model
// skipped without a call is none either.
func TestLiteLLMCallsLeaveLostHedgesOut(t *testing.T) {
	now := time.Now()
	calls, names := liteLLMCalls([]completions.Attempt{
		{Model: "a/m", ModelGroup: "a/m", Outcome: completions.OutcomeSkipped, Kind: "circuit_open"},
		{Model: "b/slow", ModelGroup: "b/slow", Outcome: completions.OutcomeCancelled, Kind: "hedged", Started: now},
		{Model: "c/down", ModelGroup: "c/down", Outcome: completions.OutcomeError, Kind: "overloaded", Started: now},
		{Model: "c/down", ModelGroup: "c/down", Outcome: completions.OutcomeError, Kind: "overloaded", Started: now},
		{Model: "d/ok", ModelGroup: "d/ok", Outcome: completions.OutcomeOK, Started: now},
	})
	if calls != 3 || names != 2 {
		t.Errorf("%d calls under %d names, want 3 under 2 (a retry of c/down, a fallback to d/ok)", calls, names)
	}
}
