package main

import (
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// TestFailedAttemptsLeavesOutHedgeLosers: the chat summary's "after …" listed a hedged start
// that lost the race as a failure; it names only the members that failed or were skipped.
func TestFailedAttemptsLeavesOutHedgeLosers(t *testing.T) {
	got := failedAttempts([]client.Attempt{
		{Model: "openai/gpt-4o", Outcome: "error", Kind: "rate_limited"},
		{Model: "anthropic/claude-3-5-haiku", Outcome: "cancelled", Kind: "hedged"},
		{Model: "groq/llama", Outcome: "skipped", Kind: "circuit_open"},
		{Model: "gemini/gemini-2.0-flash", Outcome: "ok"},
	})
	if want := " after openai/gpt-4o rate_limited, groq/llama circuit_open"; got != want {
		t.Errorf("failedAttempts = %q, want %q", got, want)
	}
	if got := failedAttempts([]client.Attempt{{Model: "a/b", Outcome: "cancelled", Kind: "hedged"}, {Model: "c/d", Outcome: "ok"}}); got != "" {
		t.Errorf("a hedge's loser alone: %q, want nothing", got)
	}
}
