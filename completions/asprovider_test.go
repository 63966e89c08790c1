package completions

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
)

func TestResolverRunsThroughTheGateway(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{err: &providers.Error{Kind: providers.KindOverloaded}}, step{text: "<prompt>better</prompt>", usage: providers.Usage{PromptTokens: 30, CompletionTokens: 7}})
	r := Resolver{Gateway: h.g, Scope: Scope{Owner: "k1", Tag: "optimize:opt_1/proposer"}}
	p, model, err := r.Resolve("a/m")
	if err != nil || model != "a/m" {
		t.Fatalf("Resolve = %v %q %v", p, model, err)
	}
	temp := 0.7
	resp, err := p.Complete(context.Background(), &providers.Request{Model: model, Temperature: &temp,
		Messages: []providers.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "improve"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "<prompt>better</prompt>" || resp.Usage.PromptTokens != 30 || resp.Usage.CompletionTokens != 7 {
		t.Fatalf("response %+v", resp)
	}
	// The gateway retried the overloaded first attempt.
	if h.a.callCount("m") != 2 {
		t.Fatalf("upstream calls = %d, want 2 (one retry)", h.a.callCount("m"))
	}
	// The call is in the gateway's ledger under the scope's tag, and no conversation was kept.
	es := h.ledger.all()
	if len(es) != 1 || es[0].Tag != "optimize:opt_1/proposer" || es[0].Owner != "k1" || es[0].Usage.PromptTokens != 30 {
		t.Fatalf("ledger %+v", es)
	}
	if convs, _ := h.store.List(context.Background(), store.Conversations, store.ListOptions{}); len(convs) != 0 {
		t.Fatalf("%d conversations stored", len(convs))
	}

	// A failure keeps its kind for the caller's retry decisions.
	h.a.on("denied", step{err: &providers.Error{Kind: providers.KindAuth, Message: "bad key"}})
	_, err = p.Complete(context.Background(), &providers.Request{Model: "a/denied", Messages: []providers.Message{{Role: "user", Content: "x"}}})
	if providers.KindOf(err) != providers.KindAuth || !errors.Is(err, ErrAllFailed) {
		t.Fatalf("err = %v (kind %v)", err, providers.KindOf(err))
	}
	if _, _, err := r.Resolve("zzz/m"); err == nil {
		t.Fatal("unknown provider resolved")
	}
}
