package completions

import (
	"context"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// removingRegistry is a provider registry that, armed, runs its swap the first time name is
// looked up: as deployments.Sync does on /model/delete, between a request's reading of the
// routes (its group with the member) and its looking up of the member's provider.
type removingRegistry struct {
	*providers.Registry
	mu   sync.Mutex
	name string
	swap func()
}

func (r *removingRegistry) Lookup(name string) (providers.Provider, error) {
	r.mu.Lock()
	swap := r.swap
	if name == r.name {
		r.swap = nil
	}
	r.mu.Unlock()
	if swap != nil && name == r.name {
		swap()
	}
	return r.Registry.Lookup(name)
}

// arm makes the next lookup of name take the member of provider name out of the routes
// (SetRoutes with groups) and then the provider out of the registry.
func (r *removingRegistry) arm(g *Gateway, name string, groups map[string]ModelGroup) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.name = name
	r.swap = func() {
		if err := g.SetRoutes(Routes{ModelGroups: groups}); err != nil {
			panic(err)
		}
		r.Registry.Remove(name)
	}
}

// TestReview29bGroupMemberRemovedMeanwhile: a request naming a model group whose other
// member was deleted (its routes swapped, then its provider removed, as /model/delete does)
// after the request read the group but before it looked the member's provider up is
// answered by the member left, not refused with a 400 naming an unknown provider: chat
// and embeddings.
func TestReview29bGroupMemberRemovedMeanwhile(t *testing.T) {
	a, b := newFake("a"), newFake("b")
	a.on("m1", step{text: "from a"})
	reg := &removingRegistry{Registry: providers.NewRegistry(a, b)}
	g, err := New(Options{Providers: reg, Prices: fakePrices{},
		ModelGroups: map[string]ModelGroup{"g": {Models: []string{"a/m1", "b/m2"}}}})
	if err != nil {
		t.Fatal(err)
	}
	reg.arm(g, "b", map[string]ModelGroup{"g": {Models: []string{"a/m1"}}})
	resp, err := g.Complete(context.Background(), Scope{}, chatRequest(t, `{"model":"g","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || resp.Text() != "from a" {
		t.Fatalf("chat to a group whose other member was removed meanwhile: %+v, %v", resp, err)
	}

	h := newEmbedHarness(t)
	ereg := &removingRegistry{Registry: h.g.opts.Providers.(*providers.Registry)}
	h.g.opts.Providers = ereg
	ereg.arm(h.g, "mistral", map[string]ModelGroup{"embed": {Models: []string{"openai/text-embedding-3-small"}}})
	eresp, err := h.g.Embed(context.Background(), Scope{}, &EmbeddingsRequest{Model: "embed", Input: EmbeddingInput{Texts: []string{"hi"}}})
	if err != nil || eresp.Model != "openai/text-embedding-3-small" {
		t.Fatalf("embeddings of a group whose other member was removed meanwhile: %+v, %v", eresp, err)
	}
}
