package routing_test

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
)

// NewSelector(Options{}) is a working selector: the learned default router ranks, the
// embedded catalogue prices, and sessions live in memory.
func TestSelectorFromZeroOptions(t *testing.T) {
	s := routing.NewSelector(routing.Options{})
	ctx := context.Background()
	resp, err := s.Select(ctx, "owner", &routing.Request{Messages: userMsg("Prove that there are infinitely many primes."),
		LLMProviders: names("openai/gpt-4o", "openai/gpt-4o-mini")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(ctx, "owner", resp.SessionID); err != nil {
		t.Errorf("the session of a selector without a store was not kept: %v", err)
	}
	next, err := s.Select(ctx, "owner", &routing.Request{Messages: userMsg("And twin primes?"),
		LLMProviders: names("openai/gpt-4o", "openai/gpt-4o-mini"), PreviousSession: resp.SessionID})
	if err != nil {
		t.Fatalf("previous_session on an in-memory selector: %v", err)
	}
	if chain, err := s.SessionChain(ctx, "owner", next.SessionID); err != nil || len(chain) != 2 {
		t.Errorf("SessionChain = %d sessions, %v; want 2", len(chain), err)
	}
}

// Misuse is an error, not a panic: a nil request is invalid and a zero Selector says how it
// is made.
func TestSelectorMisuseIsAnError(t *testing.T) {
	ctx := context.Background()
	s := routing.NewSelector(routing.Options{})
	if _, err := s.Select(ctx, "owner", nil); !errors.Is(err, routing.ErrInvalid) {
		t.Errorf("Select(nil) = %v, want ErrInvalid", err)
	}
	if _, err := s.Rank(ctx, "owner", nil); !errors.Is(err, routing.ErrInvalid) {
		t.Errorf("Rank(nil) = %v, want ErrInvalid", err)
	}
	var zero routing.Selector
	req := &routing.Request{Messages: userMsg("hi"), LLMProviders: names("openai/gpt-4o")}
	if _, err := zero.Select(ctx, "owner", req); err == nil {
		t.Error("a zero Selector selected")
	}
	if _, err := zero.Rank(ctx, "owner", req); err == nil {
		t.Error("a zero Selector ranked")
	}
	if _, err := zero.Session(ctx, "owner", "x"); !errors.Is(err, routing.ErrZeroSelector) {
		t.Errorf("a zero Selector's Session: %v", err)
	}
	if _, err := zero.ExpireSessions(ctx); !errors.Is(err, routing.ErrZeroSelector) {
		t.Errorf("a zero Selector's ExpireSessions: %v", err)
	}
}
