package completions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// A budget's tokens per minute refuses a live embeddings request once the minute's
// tokens are used; a request every input of which the cache has (embeddingsFromCache)
// checks only Budget.usable, not the spend gate's rate, and is served. The chat cache
// refuses such a hit (review 12a's mend: prepare checks g.spend.rate on a hit).
func TestReview12bEmbeddingsFullHitIgnoresTokensPerMinute(t *testing.T) {
	h := cachedEmbedHarness(t)
	ctx := context.Background()
	scope := Scope{Owner: "o", Budget: NewBudget(BudgetLimits{TokensPerMinute: 3})}
	req := func(texts ...string) *EmbeddingsRequest {
		return &EmbeddingsRequest{Model: "openai/text-embedding-3-small", Input: EmbeddingInput{Texts: texts}}
	}
	if _, err := h.g.Embed(ctx, scope, req("one two three four")); err != nil { // 4 tokens: the minute is used
		t.Fatal(err)
	}
	h.g.cacheWrites.wg.Wait()
	if _, err := h.g.Embed(ctx, scope, req("not cached")); !errors.Is(err, ErrTokenRate) {
		t.Fatalf("a live request over the key's tokens per minute: %v, want ErrTokenRate", err)
	}
	r, err := h.g.Embed(ctx, scope, req("one two three four"))
	if !errors.Is(err, ErrTokenRate) {
		t.Fatalf("a full cache hit over the key's tokens per minute: err %v (cache %+v), want ErrTokenRate as chat hits and live requests get", err, r.Cache)
	}
}

// taggedEmbeddingsAPI is an OpenAI-format embeddings endpoint whose vectors are
// [len(text), tag]: which deployment made a vector can be told from it.
func taggedEmbeddingsAPI(t *testing.T, tag float64, fail *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Add(-1) >= 0 {
			w.WriteHeader(500)
			io.WriteString(w, `{"error":{"message":"scripted failure","type":"server_error"}}`)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		raw, _ := io.ReadAll(r.Body)
		json.Unmarshal(raw, &req)
		var data []string
		for i, s := range req.Input {
			data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":[%d,%g]}`, i, len(s), tag))
		}
		fmt.Fprintf(w, `{"object":"list","data":[%s],"model":%q,"usage":{"prompt_tokens":%d,"total_tokens":%d}}`, strings.Join(data, ","), req.Model, len(req.Input), len(req.Input))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A model group's members are tried in order; when the first fails the second answers and
// its vectors are cached under the group's key with no record of which member made them.
// A later batch then mixes vectors of two models in one answer (a partial hit) and a full
// hit names the group's first member as the model, though another made every vector.
// (embedCache's own comment promises "the model that made each"; there is no such field.)
func TestReview12bEmbeddingsGroupCacheMixesMembersVectors(t *testing.T) {
	var failA, failB atomic.Int32
	a := taggedEmbeddingsAPI(t, 1, &failA) // openai: [len, 1]
	b := taggedEmbeddingsAPI(t, 2, &failB) // mistral: [len, 2]
	env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": a.URL + "/v1", "MISTRAL_API_KEY": "mk", "MISTRAL_BASE_URL": b.URL + "/v1"}
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices:      providers.DefaultCatalog(),
		ModelGroups: map[string]ModelGroup{"embed": {Models: []string{"openai/text-embedding-3-small", "mistral/mistral-embed"}}},
		Sleep:       func(context.Context, time.Duration) error { return nil },
		Cache:       CacheOptions{Driver: &MemoryCache{}, TTL: time.Hour, MaxEntryBytes: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	madeBy := map[float32]string{1: "openai/text-embedding-3-small", 2: "mistral/mistral-embed"}
	check := func(what string, r *EmbeddingsResponse) {
		t.Helper()
		for i, d := range r.Data {
			if by := madeBy[d.Embedding.Values[1]]; by != r.Model {
				t.Errorf("%s: the answer names %s but vector %d (%v) was made by %s (cache %+v)", what, r.Model, i, d.Embedding.Values, by, r.Cache)
			}
		}
	}
	failA.Store(10) // the first member is down: the second answers "alpha"
	r, err := g.Embed(ctx, Scope{Owner: "o"}, &EmbeddingsRequest{Model: "embed", Input: EmbeddingInput{Texts: []string{"alpha"}}})
	if err != nil || r.Model != "mistral/mistral-embed" {
		t.Fatalf("fallback to the second member: %+v %v", r, err)
	}
	check("the second member's answer", r)
	g.cacheWrites.wg.Wait()
	failA.Store(-1 << 20)
	full, err := g.Embed(ctx, Scope{Owner: "o"}, &EmbeddingsRequest{Model: "embed", Input: EmbeddingInput{Texts: []string{"alpha"}}})
	if err != nil {
		t.Fatal(err)
	}
	check("full hit", full)
	partial, err := g.Embed(ctx, Scope{Owner: "o"}, &EmbeddingsRequest{Model: "embed", Input: EmbeddingInput{Texts: []string{"alpha", "beta"}}})
	if err != nil {
		t.Fatal(err)
	}
	check("partial hit", partial)
}

// A chat hit says how old its answer is (CacheStatus.AgeSeconds, the Age header); an
// embeddings hit never sets it, so /v1/embeddings answers "Age: 0" for vectors an hour old.
func TestReview12bEmbeddingsHitHasNoAge(t *testing.T) {
	h := cachedEmbedHarness(t)
	now := time.Now()
	h.g.opts.Now = func() time.Time { return now }
	ctx := context.Background()
	req := &EmbeddingsRequest{Model: "openai/text-embedding-3-small", Input: EmbeddingInput{Texts: []string{"old"}}}
	if _, err := h.g.Embed(ctx, Scope{Owner: "o"}, req); err != nil {
		t.Fatal(err)
	}
	h.g.cacheWrites.wg.Wait()
	now = now.Add(time.Hour - time.Minute)
	r, err := h.g.Embed(ctx, Scope{Owner: "o"}, req)
	if err != nil {
		t.Fatal(err)
	}
	if r.Cache == nil || r.Cache.Result != CacheHit || r.Cache.AgeSeconds != 59*60 {
		t.Fatalf("hit of vectors made 59 minutes ago: cache %+v, want age_seconds 3540", r.Cache)
	}
}
