package completions

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestTagRoutingEmbeddingsCache: the embeddings cache is keyed on the members a request's
// tags select, not the whole group: a request tagged free after one tagged paid is sent to
// the free member (it was answered with the paid member's cached vectors), and a second
// request tagged free is the free member's cached answer.
func TestTagRoutingEmbeddingsCache(t *testing.T) {
	calls := map[string]*atomic.Int64{}
	var ps []providers.Provider
	for _, n := range []string{"free", "paid"} {
		c := &atomic.Int64{}
		calls[n] = c
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c.Add(1)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,0.25]}],"model":"m","usage":{"prompt_tokens":2,"total_tokens":2}}`)
		}))
		t.Cleanup(up.Close)
		ps = append(ps, providers.NewOpenAI(providers.Config{Name: n, BaseURL: up.URL, KeyOptional: true}))
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
