package routing_test

import (
	"context"
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
