package routing_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
)

var shortConversation = []routing.Message{
	{Role: "system", Content: "You are a helpful assistant."},
	{Role: "user", Content: "What's a good name for a golden retriever puppy?"},
	{Role: "assistant", Content: "How about Sunny, Maple or Biscuit?"},
	{Role: "user", Content: "Something more unusual, please, and explain why."},
}

func benchmarkSelect(b *testing.B, opts routing.Options, pref string) {
	st := memstoreNew()
	defer st.Close()
	opts.Store = st
	sel := routing.NewSelector(opts)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		req := &routing.Request{Messages: shortConversation, PreferenceID: pref,
			Models: names("openai/gpt-4o", "openai/gpt-4o-mini", "acme/chef", "acme/coder", "meta/llama-3.1-8b-instruct")}
		if _, err := sel.Select(ctx, "alice", req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSelectDefault: go test ./routing -bench Select -run '^$'
func BenchmarkSelectDefault(b *testing.B) { benchmarkSelect(b, routing.Options{}, "") }

// BenchmarkSelectCustom routes with a (small) trained n-gram + softmax router.
func BenchmarkSelectCustom(b *testing.B) {
	local := &routing.LocalModels{}
	local.Add("alice", "toy", trainToyRouter(b))
	benchmarkSelect(b, routing.Options{CustomModels: local}, "toy")
}

// benchmarkPreference creates a preference with feedback on every candidate (so every one
// is corrected) and returns the selector, its id and a session under it.
func benchmarkPreference(b *testing.B) (*routing.Selector, string, string) {
	st := memstoreNew()
	b.Cleanup(func() { st.Close() })
	sel := routing.NewSelector(routing.Options{Store: st, Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	pref, err := sel.CreatePreference(ctx, "alice", routing.PreferenceRequest{})
	if err != nil {
		b.Fatal(err)
	}
	req := &routing.Request{Messages: shortConversation, PreferenceID: pref.ID,
		Models: names("openai/gpt-4o", "openai/gpt-4o-mini", "acme/chef", "acme/coder", "meta/llama-3.1-8b-instruct")}
	resp, err := sel.Select(ctx, "alice", req)
	if err != nil {
		b.Fatal(err)
	}
	one := 1.0
	for _, p := range resp.Providers {
		label := p.Name
		if label == "" {
			label = p.Provider + "/" + p.Model
		}
		if _, err := sel.Feedback(ctx, "alice", &routing.FeedbackRequest{SessionID: resp.SessionID,
			Provider: routing.Candidate{Name: label}, Feedback: routing.FeedbackMetrics{Accuracy: &one}}); err != nil {
			b.Fatal(err)
		}
	}
	return sel, pref.ID, resp.SessionID
}

// BenchmarkSelectPreference: model selection under a pref_ preference with feedback on
// every candidate (compare with BenchmarkSelectDefault).
func BenchmarkSelectPreference(b *testing.B) {
	sel, pref, _ := benchmarkPreference(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		req := &routing.Request{Messages: shortConversation, PreferenceID: pref,
			Models: names("openai/gpt-4o", "openai/gpt-4o-mini", "acme/chef", "acme/coder", "meta/llama-3.1-8b-instruct")}
		if _, err := sel.Select(ctx, "alice", req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFeedback: one feedback call (a session and a preference read and written in one
// transaction; the in-memory store).
func BenchmarkFeedback(b *testing.B) {
	sel, _, sess := benchmarkPreference(b)
	ctx := context.Background()
	b.ReportAllocs()
	acc := 0.0
	for b.Loop() {
		acc = 1 - acc
		if _, err := sel.Feedback(ctx, "alice", &routing.FeedbackRequest{SessionID: sess,
			Provider: routing.Candidate{Name: "acme/chef"}, Feedback: routing.FeedbackMetrics{Accuracy: &acc}}); err != nil {
			b.Fatal(err)
		}
	}
}
