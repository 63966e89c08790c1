package completions

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// The gateway's own cost per request, without any network: an in-memory provider that
// answers at once, the real catalogue and an in-memory store.
func benchGateway(b *testing.B) *Gateway {
	p := newFake("openai").on("gpt-4o-mini", step{text: "Paris is the capital of France and its largest city.", usage: providers.Usage{PromptTokens: 12, CompletionTokens: 10}})
	g, err := New(Options{Providers: fakeRegistry{"openai": p}, Prices: providers.DefaultCatalog(), Store: memstore.New()})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func BenchmarkComplete(b *testing.B) {
	g := benchGateway(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Complete(ctx, Scope{Owner: "k"}, userReq("What is the capital of France?", "openai/gpt-4o-mini")); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStream(b *testing.B) {
	g := benchGateway(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		st, err := g.Stream(ctx, Scope{Owner: "k"}, userReq("What is the capital of France?", "openai/gpt-4o-mini"))
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		st.Close()
	}
}
