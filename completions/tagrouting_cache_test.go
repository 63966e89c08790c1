package completions

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestTagRoutingEmbeddingsCache: the embeddings cache is keyed on the members a request's
// tags select, not the whole group: a request tagged free after one tagged paid is sent to
// the free member (it was answered with the paid member's cached vectors), and a second
// request tagged free is the free member's cached answer.
func TestTagRoutingEmbeddingsCache(t *testing.T) {
	calls, urls := embeddingUpstreams(t, "free", "paid")
	var ps []providers.Provider
	for _, n := range []string{"free", "paid"} {
		ps = append(ps, providers.NewOpenAI(providers.Config{Name: n, BaseURL: urls[n], KeyOptional: true}))
	}
	grp := ModelGroup{Models: []string{"free/m", "paid/m"}, Tags: [][]string{{"free"}, {"paid"}}, TagFiltering: true}
	g, err := New(Options{Providers: providers.NewRegistry(ps...), ModelGroups: map[string]ModelGroup{"emb": grp}, DefaultMaxRetries: -1,
		Cache: CacheOptions{Driver: &MemoryCache{}}})
	if err != nil {
		t.Fatal(err)
	}
	embed := func(tag string) {
		t.Helper()
		var in EmbeddingInput
		if err := json.Unmarshal([]byte(`"hello"`), &in); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Embed(context.Background(), Scope{Owner: "o"}, &EmbeddingsRequest{Model: "emb", Input: in, Tags: []string{tag}}); err != nil {
			t.Fatalf("tagged %s: %v", tag, err)
		}
		g.cacheWrites.wg.Wait() // the answer kept before the next request
	}
	embed("paid")
	embed("free")
	embed("free")
	if p, f := calls["paid"].Load(), calls["free"].Load(); p != 1 || f != 1 {
		t.Fatalf("calls: paid %d, free %d; want 1 each (free's second from the cache, none from paid's)", p, f)
	}
}

// TestTagRoutingRerankCache: the rerank cache, like the embeddings cache, is keyed on the
// members a request's tags select: a request tagged jina after one tagged cohere is sent to
// jina (it was answered with cohere's cached ranking), and its repeat comes from the cache.
func TestTagRoutingRerankCache(t *testing.T) {
	h := newRerankHarness(t, &MemoryCache{})
	grp := ModelGroup{Models: []string{"cohere/rerank-v3.5", "jina/jina-reranker-v2-base-multilingual"}, Tags: [][]string{{"cohere"}, {"jina"}}, TagFiltering: true}
	if err := h.g.SetRoutes(Routes{ModelGroups: map[string]ModelGroup{"rerank": grp}}); err != nil {
		t.Fatal(err)
	}
	rerank := func(tag string) *RerankResponse {
		t.Helper()
		resp, err := h.g.Rerank(context.Background(), Scope{Owner: "k"}, &RerankRequest{Model: "rerank", Query: "most moons", Documents: moonDocs, TopN: intp(2), Tags: []string{tag}})
		if err != nil {
			t.Fatalf("tagged %s: %v", tag, err)
		}
		h.g.cacheWrites.wg.Wait()
		return resp
	}
	rerank("cohere")
	if got := rerank("jina"); got.Model != "jina/jina-reranker-v2-base-multilingual" || got.Cache == nil || got.Cache.Result != CacheMiss {
		t.Fatalf("tagged jina after cohere: model %s, cache %+v", got.Model, got.Cache)
	}
	if got := rerank("jina"); got.Cache == nil || got.Cache.Result != CacheHit {
		t.Fatalf("tagged jina again: cache %+v", got.Cache)
	}
}
