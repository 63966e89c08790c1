package completions

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// A budget with few tokens left caps the request's max tokens (prepare) after the cache key
// was computed: the truncated answer is kept under the key of the uncapped request, and
// the issuer (or the same key once its budget resets) is served the truncated answer.
func TestReview12aBudgetCappedAnswerIsCachedUnderTheUncappedKey(t *testing.T) {
	h := newCacheHarness(t, nil)
	ctx := context.Background()
	h.a.on("m", step{text: "short", usage: providers.Usage{PromptTokens: 50, CompletionTokens: 40}})
	b := NewBudget(BudgetLimits{MaxTokens: 100})
	vk := Scope{Owner: "issuer", Budget: b} // a virtual key acts for its issuer
	if _, err := h.g.Complete(ctx, vk, chat("warm up", "a/m")); err != nil {
		t.Fatal(err)
	}
	h.settle()
	// 10 tokens left: the request reaches the model capped at 10.
	capped, err := h.g.Complete(ctx, vk, chat("write an essay", "a/m"))
	if err != nil {
		t.Fatal(err)
	}
	if got := h.a.lastRequest().MaxTokens; got != 10 {
		t.Fatalf("the capped request was sent max tokens %d, want 10", got)
	}
	h.settle()
	// The issuer, with no budget, asks the same thing with no cap.
	full, err := h.g.Complete(ctx, Scope{Owner: "issuer"}, chat("write an essay", "a/m"))
	if err != nil {
		t.Fatal(err)
	}
	if full.Cache != nil && full.Cache.Result == CacheHit {
		t.Fatalf("the uncapped request was answered from the cache with the answer made under a 10-token cap (key %s, made by %s)",
			full.Cache.Key, capped.Cache.Key)
	}
	if got := h.a.lastRequest().MaxTokens; got != 0 {
		t.Fatalf("the uncapped request was sent max tokens %d, want 0", got)
	}
}

// A Budget's TokensPerMinute refuses a live request once the minute's tokens are used
// (README: "a request after they reach it is a 429"); a cache hit skips the spend gate
// where that rate is checked and is served.
func TestReview12aHitIgnoresTokensPerMinute(t *testing.T) {
	h := newCacheHarness(t, nil)
	ctx := context.Background()
	h.a.on("m", step{text: "answer", usage: providers.Usage{PromptTokens: 50, CompletionTokens: 40}})
	scope := Scope{Owner: "o", Budget: NewBudget(BudgetLimits{TokensPerMinute: 50})}
	if _, err := h.g.Complete(ctx, scope, chat("cached", "a/m")); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if _, err := h.g.Complete(ctx, scope, chat("not cached", "a/m")); !errors.Is(err, ErrTokenRate) {
		t.Fatalf("a live request over the key's tokens per minute: %v, want ErrTokenRate", err)
	}
	r, err := h.g.Complete(ctx, scope, chat("cached", "a/m"))
	if !errors.Is(err, ErrTokenRate) {
		t.Fatalf("a hit over the key's tokens per minute: %v (cache %+v), want ErrTokenRate as a miss gets", err, r.Cache)
	}
}

// The chat surface shows reasoning a model sends unasked (reasoning_content); the
// Messages and Responses surfaces hide it and store the answer without it, under the same
// key: the chat surface's hit then lacks the reasoning a live answer has.
func TestReview12aHitOnChatSurfaceLosesUnaskedReasoning(t *testing.T) {
	h := newCacheHarness(t, nil)
	ctx := context.Background()
	h.a.on("r1", step{text: "42", reasoning: []providers.ReasoningBlock{{Text: "6 times 7"}}, usage: providers.Usage{PromptTokens: 5, CompletionTokens: 5}})
	hidden := chat("6*7?", "a/r1")
	hidden.unaskedReasoning = false // /v1/messages, /v1/responses
	if _, err := h.g.Complete(ctx, Scope{Owner: "o"}, hidden); err != nil {
		t.Fatal(err)
	}
	h.settle()
	shown := chat("6*7?", "a/r1")
	shown.unaskedReasoning = true // /v1/chat/completions
	r, err := h.g.Complete(ctx, Scope{Owner: "o"}, shown)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Reasoning) == 0 {
		t.Fatalf("chat surface answer (cache %+v) has no reasoning; a live answer has %q", r.Cache, "6 times 7")
	}
}

// With fallback_on_content_filter the fallback model's answer is kept; the same request
// without it is then answered from the cache, where live the content filter's refusal
// stands (a policy decision the gateway says it never overrides).
func TestReview12aHitOverridesContentFilterPolicy(t *testing.T) {
	h := newCacheHarness(t, nil)
	ctx := context.Background()
	h.a.on("m", step{err: upstreamErr(providers.KindContentFilter, 400, 0)})
	lenient := chat("borderline", "a/m")
	lenient.FallbackModels = []string{"b/m"}
	lenient.FallbackOnContentFilter = true
	if r, err := h.g.Complete(ctx, Scope{Owner: "o"}, lenient); err != nil || r.Provider != "b" {
		t.Fatalf("lenient: %v %+v", err, r)
	}
	h.settle()
	strict := chat("borderline", "a/m")
	strict.FallbackModels = []string{"b/m"}
	r, err := h.g.Complete(ctx, Scope{Owner: "o"}, strict)
	var cf *ContentFilterError
	if !errors.As(err, &cf) {
		t.Fatalf("strict request: %v (answer from %s, cache %+v), want the content filter's refusal", err, r.Provider, r.Cache)
	}
}

// racingDriver runs between, once, right after a Get of the response cache returns: another
// replica's Put landing between StoreCache.Get's read and its delete of the expired entry.
type racingDriver struct {
	*memstore.Driver
	between func()
}

func (d *racingDriver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	b, err := d.Driver.Get(ctx, c, key)
	if f := d.between; f != nil && c == store.ResponseCache {
		d.between = nil
		f()
	}
	return b, err
}

// StoreCache.Get deletes an entry it read as expired without checking it is still that
// entry (Sweep re-reads inside a transaction; Get does not): a fresh answer another
// replica just kept under the key is deleted.
func TestReview12aStoreCacheGetDeletesAFreshEntryPutMeanwhile(t *testing.T) {
	ctx := context.Background()
	d := &racingDriver{Driver: memstore.NewDriver()}
	c := NewStoreCache(store.New(d))
	t0 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	if err := c.Put(ctx, "k", []byte("old"), t0, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(2 * time.Minute)
	d.between = func() {
		if err := NewStoreCache(store.New(d.Driver)).Put(ctx, "k", []byte("fresh"), now, now.Add(time.Hour)); err != nil {
			t.Error(err)
		}
	}
	if _, _, err := c.Get(ctx, "k", now); !errors.Is(err, ErrCacheMiss) {
		t.Fatalf("Get of the expired entry: %v", err)
	}
	if v, _, err := c.Get(ctx, "k", now); err != nil || string(v) != "fresh" {
		t.Fatalf("the fresh answer put meanwhile: %q, %v; it was deleted with the expired one", v, err)
	}
}
