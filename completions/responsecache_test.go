package completions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

func TestMemoryCacheKeepsWithinItsBoundLeastRecentlyUsedFirst(t *testing.T) {
	ctx := context.Background()
	t0 := time.Now()
	m := &MemoryCache{MaxBytes: 10 * (100 + 1 + memoryEntryOverhead)}
	v := []byte(strings.Repeat("x", 100))
	for _, k := range "abcdefghij" {
		if err := m.Put(ctx, string(k), v, t0, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := m.Get(ctx, "a", t0); err != nil { // a is now the most recent
		t.Fatal(err)
	}
	_ = m.Put(ctx, "k", v, t0, t0.Add(time.Hour))
	if m.Len() != 10 {
		t.Fatalf("%d entries, want 10 (the bound)", m.Len())
	}
	if _, _, err := m.Get(ctx, "b", t0); !errors.Is(err, ErrCacheMiss) {
		t.Fatalf("b, the least recently used, is still there: %v", err)
	}
	for _, k := range []string{"a", "c", "k"} {
		if _, _, err := m.Get(ctx, k, t0); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
	}
	if err := m.Put(ctx, "huge", make([]byte, m.MaxBytes), t0, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Get(ctx, "huge", t0); !errors.Is(err, ErrCacheMiss) || m.Len() != 10 {
		t.Fatalf("a value over an eighth of the bound was kept (%v) or pushed others out (%d)", err, m.Len())
	}
}

func TestStoreCacheSweepDeletesOnlyExpiredEntries(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	c := NewStoreCache(st)
	t0 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	for i := range 1200 {
		exp := t0.Add(time.Hour)
		if i%3 == 0 {
			exp = t0.Add(time.Minute)
		}
		if err := c.Put(ctx, fmt.Sprintf("k%04d", i), []byte("v"), t0, exp); err != nil {
			t.Fatal(err)
		}
	}
	n, err := c.Sweep(ctx, t0.Add(30*time.Minute)) // several pages of sweepPage
	if err != nil || n != 400 {
		t.Fatalf("Sweep = %d, %v; want the 400 expired entries", n, err)
	}
	left, _ := st.List(ctx, store.ResponseCache, store.ListOptions{})
	if len(left) != 800 {
		t.Fatalf("%d entries left, want 800", len(left))
	}
	if _, _, err := c.Get(ctx, "k0001", t0.Add(30*time.Minute)); err != nil {
		t.Fatalf("a live entry was swept: %v", err)
	}
}

// cacheHarness is a harness whose gateway caches in memory, with a clock the test moves
// ahead of the real one (the request deadlines are real).
type cacheHarness struct {
	*harness
	mu    sync.Mutex
	ahead time.Duration
}

func newCacheHarness(t *testing.T, tweak func(*Options)) *cacheHarness {
	h := &cacheHarness{}
	h.harness = newHarness(t, func(o *Options) {
		o.Cache = CacheOptions{Driver: &MemoryCache{}, TTL: 10 * time.Minute}
		o.Now = h.clock
		if tweak != nil {
			tweak(o)
		}
	})
	return h
}

func (h *cacheHarness) clock() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return time.Now().Add(h.ahead)
}

func (h *cacheHarness) advance(d time.Duration) {
	h.mu.Lock()
	h.ahead += d
	h.mu.Unlock()
}

// settle waits for the gateway's background cache writes.
func (h *cacheHarness) settle() { h.g.cacheWrites.wg.Wait() }

// chat is a stateless request (the OpenAI-compatible surfaces').
func chat(text string, models ...string) *Request {
	r := userReq(text, models...)
	r.ephemeral = true
	return r
}

func TestCacheAnswersTheSameRequestAgainWithoutAModel(t *testing.T) {
	h := newCacheHarness(t, nil)
	h.a.on("priced", step{text: "Paris is the capital", usage: providers.Usage{PromptTokens: 1000, CompletionTokens: 500}})
	ctx := context.Background()
	scope := Scope{Owner: "alice"}
	first, err := h.g.Complete(ctx, scope, chat("capital of France?", "a/priced"))
	if err != nil {
		t.Fatal(err)
	}
	if first.Cache == nil || first.Cache.Result != CacheMiss || first.Cache.Key == "" {
		t.Fatalf("first answer's cache status = %+v, want a miss with its key", first.Cache)
	}
	h.settle()
	h.advance(3 * time.Minute)
	second, err := h.g.Complete(ctx, scope, chat("capital of France?", "a/priced"))
	if err != nil {
		t.Fatal(err)
	}
	if got := h.a.callCount("priced"); got != 1 {
		t.Fatalf("the model was called %d times, want once", got)
	}
	c := second.Cache
	if c == nil || c.Result != CacheHit || c.Key != first.Cache.Key || c.AgeSeconds != 180 {
		t.Fatalf("second answer's cache status = %+v, want a hit 180 s old under %s", c, first.Cache.Key)
	}
	if c.SavedUSD != first.Usage.Costs.TotalTokensCost || c.SavedUSD == 0 {
		t.Fatalf("saved %v, want what the first cost (%v)", c.SavedUSD, first.Usage.Costs.TotalTokensCost)
	}
	if second.Text() != "Paris is the capital" || second.Provider != "a" || second.Model != "priced" || second.FinishReason != first.FinishReason {
		t.Fatalf("the hit's answer = %q from %s/%s (%s)", second.Text(), second.Provider, second.Model, second.FinishReason)
	}
	if second.Usage.PromptTokens != 1000 || second.Usage.CompletionTokens != 500 || second.Usage.Costs.Spent() != 0 || !second.Usage.Costs.PriceKnown {
		t.Fatalf("the hit's usage = %+v, want the answer's tokens and no cost", second.Usage)
	}
	if second.Attempts == nil || len(second.Attempts) != 0 || second.ResponseMessageID == first.ResponseMessageID {
		t.Fatalf("the hit's attempts %v (want none) or its message id is the first's", second.Attempts)
	}
	if n := len(h.ledger.all()); n != 1 {
		t.Fatalf("%d ledger entries, want 1: a hit costs nothing", n)
	}
}

func TestCacheKeyCoversCallerModelsParametersAndNamespace(t *testing.T) {
	h := newCacheHarness(t, nil)
	ctx := context.Background()
	ask := func(scope Scope, req *Request) *Response {
		t.Helper()
		r, err := h.g.Complete(ctx, scope, req)
		if err != nil {
			t.Fatal(err)
		}
		h.settle()
		return r
	}
	base := func() *Request { return chat("hello", "a/m") }
	ask(Scope{Owner: "alice"}, base())
	hot := base()
	hot.Temperature = ptr(0.9)
	other := chat("hello", "b/m")
	withFallback := base()
	withFallback.FallbackModels = []string{"b/m"}
	spaced := base()
	spaced.Cache = &CacheControl{Namespace: "run-2"}
	longer := chat("hello", "a/m")
	longer.Messages = append(longer.Messages, Message{Role: "assistant", Content: []ContentBlock{{Type: "text", Text: "hi"}}},
		Message{Role: "user", Content: []ContentBlock{{Type: "text", Text: "hello"}}})
	tools := base()
	tools.Tools = []providers.Tool{{Name: "lookup", Parameters: []byte(`{"type":"object"}`)}}
	for name, tc := range map[string]struct {
		scope Scope
		req   *Request
	}{
		"another caller": {Scope{Owner: "bob"}, base()}, "another temperature": {Scope{Owner: "alice"}, hot},
		"another model": {Scope{Owner: "alice"}, other}, "a fallback": {Scope{Owner: "alice"}, withFallback},
		"a namespace": {Scope{Owner: "alice"}, spaced}, "more history": {Scope{Owner: "alice"}, longer},
		"tools": {Scope{Owner: "alice"}, tools},
	} {
		if r := ask(tc.scope, tc.req); r.Cache == nil || r.Cache.Result != CacheMiss {
			t.Errorf("%s: cache status %+v, want a miss", name, r.Cache)
		}
	}
	if r := ask(Scope{Owner: "alice"}, base()); r.Cache.Result != CacheHit {
		t.Fatalf("the first request again: %+v, want a hit", r.Cache)
	}
	spaced2 := base()
	spaced2.Cache = &CacheControl{Namespace: "run-2"}
	if r := ask(Scope{Owner: "alice"}, spaced2); r.Cache.Result != CacheHit {
		t.Fatalf("the namespaced request again: %+v, want a hit", r.Cache)
	}
}

func TestCacheControlNoCacheNoStoreMaxAgeTTL(t *testing.T) {
	h := newCacheHarness(t, nil)
	ctx := context.Background()
	scope := Scope{Owner: "o"}
	ask := func(cc *CacheControl) *Response {
		t.Helper()
		req := chat("q", "a/m")
		req.Cache = cc
		r, err := h.g.Complete(ctx, scope, req)
		if err != nil {
			t.Fatal(err)
		}
		h.settle()
		return r
	}
	if r := ask(&CacheControl{NoStore: true}); r.Cache.Result != CacheMiss {
		t.Fatalf("no-store: %+v", r.Cache)
	}
	if r := ask(nil); r.Cache.Result != CacheMiss {
		t.Fatalf("after a no-store answer: %+v, want a miss (nothing was kept)", r.Cache)
	}
	if r := ask(&CacheControl{NoCache: true}); r.Cache.Result != CacheBypass || h.a.callCount("m") != 3 {
		t.Fatalf("no-cache: %+v after %d calls, want a bypass that called the model", r.Cache, h.a.callCount("m"))
	}
	if r := ask(&CacheControl{NoCache: true, NoStore: true}); r.Cache != nil {
		t.Fatalf("no-cache and no-store: %+v, want the cache out of it", r.Cache)
	}
	h.advance(2 * time.Minute)
	if r := ask(&CacheControl{MaxAge: 60}); r.Cache.Result != CacheMiss {
		t.Fatalf("s-maxage 60 for a 2-minute-old answer: %+v, want a miss", r.Cache)
	}
	h.advance(30 * time.Second)
	if r := ask(&CacheControl{MaxAge: 60}); r.Cache.Result != CacheHit || r.Cache.AgeSeconds != 30 {
		t.Fatalf("s-maxage 60 for the answer kept 30 s ago: %+v, want a hit", r.Cache)
	}
	// The server's TTL is 10 minutes; this answer is kept for 20.
	req := chat("long-lived", "a/m")
	req.Cache = &CacheControl{TTL: 1200}
	if _, err := h.g.Complete(ctx, scope, req); err != nil {
		t.Fatal(err)
	}
	h.settle()
	h.advance(15 * time.Minute)
	if r := ask(nil); r.Cache.Result != CacheMiss {
		t.Fatalf("after the server's 10-minute TTL: %+v, want a miss", r.Cache)
	}
	r, err := h.g.Complete(ctx, scope, chat("long-lived", "a/m"))
	if err != nil || r.Cache.Result != CacheHit {
		t.Fatalf("the answer kept with ttl 1200 after 15 minutes: %+v, %v", r.Cache, err)
	}
	for _, bad := range []*CacheControl{{TTL: -1}, {MaxAge: 1e12}, {Namespace: strings.Repeat("n", 257)}} {
		req := chat("q", "a/m")
		req.Cache = bad
		var ve *ValidationError
		if _, err := h.g.Complete(ctx, scope, req); !errors.As(err, &ve) || !strings.HasPrefix(ve.Field, "cache.") {
			t.Errorf("cache %+v: %v, want a validation error naming cache.*", bad, err)
		}
	}
}

func TestCacheReplaysAStreamWithItsToolCallsAndReasoning(t *testing.T) {
	h := newCacheHarness(t, nil)
	call := providers.ToolCall{ID: "call_1", Name: "weather", Arguments: `{"city":"Paris"}`}
	thought := []providers.ReasoningBlock{{Text: "The user wants the weather.", Signature: "sig-1"}}
	h.a.on("m", step{text: "Let me look that up for you, it will take a moment while I call the weather service.", reasoning: thought,
		usage: providers.Usage{PromptTokens: 40, CompletionTokens: 12}},
	)
	h.b.on("m", step{call: &call, argPieces: []string{`{"city":`, `"Paris"}`}, usage: providers.Usage{PromptTokens: 40, CompletionTokens: 9}})
	ctx := context.Background()
	streamed := func(req *Request) (text string, chunks int, resp *Response) {
		t.Helper()
		st, err := h.g.Stream(ctx, Scope{Owner: "o"}, req)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for {
			c, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			chunks++
			text += c.Text
		}
		h.settle()
		return text, chunks, st.Response()
	}
	thinking := func(models ...string) *Request {
		r := chat("weather in Paris?", models...)
		r.Thinking = &providers.Thinking{Effort: "low"}
		r.Tools = []providers.Tool{{Name: "weather", Parameters: []byte(`{"type":"object"}`)}}
		return r
	}
	text1, _, r1 := streamed(thinking("a/m"))
	text2, chunks2, r2 := streamed(thinking("a/m"))
	if h.a.callCount("m") != 1 || r2.Cache == nil || r2.Cache.Result != CacheHit {
		t.Fatalf("the second stream: %d calls, cache %+v; want a hit", h.a.callCount("m"), r2.Cache)
	}
	if text2 != text1 || chunks2 < 3 {
		t.Fatalf("replayed %q in %d fragments, want %q in pieces", text2, chunks2, text1)
	}
	if len(r2.Reasoning) != 1 || r2.Reasoning[0] != thought[0] || r2.Usage.CompletionTokens != r1.Usage.CompletionTokens {
		t.Fatalf("replayed reasoning %+v usage %+v; want %+v and the first's usage", r2.Reasoning, r2.Usage, thought)
	}
	// A streamed answer is found by a whole request, and a tool call comes back whole.
	if _, _, r := streamed(thinking("b/m")); len(r.ToolCalls) != 1 {
		t.Fatalf("tool call stream: %+v", r.ToolCalls)
	}
	whole, err := h.g.Complete(ctx, Scope{Owner: "o"}, thinking("b/m"))
	if err != nil {
		t.Fatal(err)
	}
	if whole.Cache.Result != CacheHit || len(whole.ToolCalls) != 1 || whole.ToolCalls[0] != call || whole.FinishReason != "tool_calls" && whole.FinishReason != r2.FinishReason {
		t.Fatalf("the tool call from the cache: %+v %+v (%s)", whole.Cache, whole.ToolCalls, whole.FinishReason)
	}
	_, _, again := streamed(thinking("b/m"))
	if len(again.ToolCalls) != 1 || again.ToolCalls[0] != call || h.b.callCount("m") != 1 {
		t.Fatalf("the tool call replayed as a stream: %+v after %d calls", again.ToolCalls, h.b.callCount("m"))
	}
}

func TestCacheServesAHitWhileTheModelIsDownButNotToASpentBudget(t *testing.T) {
	h := newCacheHarness(t, func(o *Options) { o.Breaker = BreakerOptions{Failures: 1, Cooldown: time.Hour} })
	ctx := context.Background()
	scope := Scope{Owner: "o"}
	if _, err := h.g.Complete(ctx, scope, chat("cached", "a/m")); err != nil {
		t.Fatal(err)
	}
	h.settle()
	h.a.on("m", step{err: upstreamErr(providers.KindOverloaded, 503, 0)})
	if _, err := h.g.Complete(ctx, scope, chat("not cached", "a/m")); err == nil {
		t.Fatal("the model is down: want an error")
	}
	r, err := h.g.Complete(ctx, scope, chat("cached", "a/m"))
	if err != nil || r.Cache.Result != CacheHit {
		t.Fatalf("a cached answer while the model's breaker is open: %v, %+v", err, r)
	}

	b := NewBudget(BudgetLimits{MaxCalls: 1})
	h.a.on("m", step{text: "ok", usage: providers.Usage{PromptTokens: 1, CompletionTokens: 1}})
	owned := Scope{Owner: "o", Budget: b}
	hit, err := h.g.Complete(ctx, owned, chat("cached", "a/m"))
	if err != nil || hit.Cache.Result != CacheHit || b.Used(ctx).Calls != 0 {
		t.Fatalf("a hit with a budget: %v, %+v, %d calls taken (want none)", err, hit, b.Used(ctx).Calls)
	}
	if _, err := h.g.Complete(ctx, owned, chat("fresh", "a/m")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.Complete(ctx, owned, chat("cached", "a/m")); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("a hit for a spent budget: %v, want ErrBudgetExceeded", err)
	}
	limited := Scope{Owner: "o", Budget: NewBudget(BudgetLimits{AllowedModels: []string{"b/m"}})}
	if _, err := h.g.Complete(ctx, limited, chat("cached", "a/m")); !errors.Is(err, ErrModelNotAllowed) {
		t.Fatalf("a hit for a model the key may not call: %v, want ErrModelNotAllowed", err)
	}
}

func TestCacheLeavesOutSearchesChoicesAndOptInRequests(t *testing.T) {
	h := newCacheHarness(t, nil)
	h.a.search = true
	ctx := context.Background()
	search := chat("news today", "a/m")
	search.Search = true
	if r, err := h.g.Complete(ctx, Scope{}, search); err != nil || r.Cache != nil {
		t.Fatalf("a web search: %v, cache %+v; want none", err, r.Cache)
	}
	answers, _, err := h.g.CompleteN(ctx, Scope{}, chat("pick a number", "a/m"), 2)
	if err != nil || len(answers) != 2 || answers[0].Cache != nil {
		t.Fatalf("n=2: %v, %d answers, cache %+v; want both from the model", err, len(answers), answers[0].Cache)
	}

	opt := newCacheHarness(t, func(o *Options) { o.Cache.OptIn = true })
	if r, _ := opt.g.Complete(ctx, Scope{}, chat("q", "a/m")); r.Cache != nil {
		t.Fatalf("opt-in cache, a request that did not ask: %+v", r.Cache)
	}
	asked := func() *Request { r := chat("q", "a/m"); r.Cache = &CacheControl{Use: true}; return r }
	if r, _ := opt.g.Complete(ctx, Scope{}, asked()); r.Cache == nil || r.Cache.Result != CacheMiss {
		t.Fatalf("opt-in cache, a request that asked: %+v", r.Cache)
	}
	opt.settle()
	if r, _ := opt.g.Complete(ctx, Scope{}, asked()); r.Cache == nil || r.Cache.Result != CacheHit {
		t.Fatalf("opt-in cache, asked again: %+v", r.Cache)
	}
}

func TestCacheKeepsANativeConversationGoing(t *testing.T) {
	h := newCacheHarness(t, nil)
	ctx := context.Background()
	first, err := h.g.Complete(ctx, Scope{Owner: "o"}, userReq("hi", "a/m"))
	if err != nil {
		t.Fatal(err)
	}
	h.settle()
	again, err := h.g.Complete(ctx, Scope{Owner: "o"}, userReq("hi", "a/m"))
	if err != nil || again.Cache.Result != CacheHit || again.ConversationID == first.ConversationID || again.ConversationID == "" {
		t.Fatalf("a new conversation with the same first turn: %v %+v", err, again)
	}
	_, msgs, err := h.g.Conversation(ctx, "o", again.ConversationID)
	if err != nil || len(msgs) != 2 || msgs[1].Content[0].Text != first.Text() {
		t.Fatalf("the conversation answered from the cache has %d messages (%v), want its turn saved", len(msgs), err)
	}
	next := userReq("and then?", "a/m")
	next.ConversationID = again.ConversationID
	if r, err := h.g.Complete(ctx, Scope{Owner: "o"}, next); err != nil || r.Cache.Result != CacheMiss {
		t.Fatalf("the conversation's next turn: %v, %+v", err, r)
	}
}

func TestGatewayCloseWaitsForCacheWrites(t *testing.T) {
	slow := &slowCache{MemoryCache: &MemoryCache{}, release: make(chan struct{})}
	h := newCacheHarness(t, func(o *Options) { o.Cache.Driver = slow })
	if _, err := h.g.Complete(context.Background(), Scope{}, chat("q", "a/m")); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := h.g.Close(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close with a write held: %v, want the deadline", err)
	}
	close(slow.release)
	if err := h.g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if slow.Len() != 1 {
		t.Fatalf("%d entries after Close, want the answer written", slow.Len())
	}
}

// slowCache holds every Put until release is closed.
type slowCache struct {
	*MemoryCache
	release chan struct{}
}

func (s *slowCache) Put(ctx context.Context, key string, value []byte, stored, expires time.Time) error {
	<-s.release
	return s.MemoryCache.Put(ctx, key, value, stored, expires)
}

func TestCacheWritesAreBounded(t *testing.T) {
	slow := &slowCache{MemoryCache: &MemoryCache{}, release: make(chan struct{})}
	h := newCacheHarness(t, func(o *Options) { o.Cache.Driver = slow })
	ctx := context.Background()
	for i := range maxCacheWrites + 10 {
		if _, err := h.g.Complete(ctx, Scope{}, chat(fmt.Sprint("q", i), "a/m")); err != nil {
			t.Fatal(err)
		}
	}
	h.g.cacheWrites.mu.Lock()
	n := h.g.cacheWrites.inflight
	h.g.cacheWrites.mu.Unlock()
	if n != maxCacheWrites {
		t.Fatalf("%d cache writes under way, want the bound %d", n, maxCacheWrites)
	}
	close(slow.release)
	h.settle()
	if slow.Len() != maxCacheWrites {
		t.Fatalf("%d answers kept, want %d (the others were dropped, not queued)", slow.Len(), maxCacheWrites)
	}
}

func TestPurgeCacheByOwnerNamespaceAndKey(t *testing.T) {
	h := newCacheHarness(t, nil)
	ctx := context.Background()
	ask := func(owner, ns, text string) *Response {
		t.Helper()
		req := chat(text, "a/m")
		if ns != "" {
			req.Cache = &CacheControl{Namespace: ns}
		}
		r, err := h.g.Complete(ctx, Scope{Owner: owner}, req)
		if err != nil {
			t.Fatal(err)
		}
		h.settle()
		return r
	}
	one := ask("alice", "", "one")
	ask("alice", "", "two")
	ask("alice", "run-1", "one")
	ask("bob", "", "one")
	if len(one.Cache.Key) != cacheKeyLen || !strings.HasPrefix(one.Cache.Key, cacheKeyPrefix("alice", "")) {
		t.Fatalf("key %q: not of alice's empty namespace or not %d long", one.Cache.Key, cacheKeyLen)
	}
	// One answer by its key; another owner's key is not found.
	if err := h.g.DeleteCached(ctx, "bob", one.Cache.Key); !errors.Is(err, ErrCacheMiss) {
		t.Fatalf("bob deleting alice's answer: %v, want ErrCacheMiss", err)
	}
	if err := h.g.DeleteCached(ctx, "alice", one.Cache.Key); err != nil {
		t.Fatal(err)
	}
	if err := h.g.DeleteCached(ctx, "alice", one.Cache.Key); !errors.Is(err, ErrCacheMiss) {
		t.Fatalf("deleting it again: %v, want ErrCacheMiss", err)
	}
	if r := ask("alice", "", "one"); r.Cache.Result != CacheMiss {
		t.Fatalf("after its deletion: %+v", r.Cache)
	}
	ns := "run-1"
	if n, err := h.g.PurgeCache(ctx, "alice", &ns); err != nil || n != 1 {
		t.Fatalf("purging run-1 = %d, %v; want 1", n, err)
	}
	if n, err := h.g.PurgeCache(ctx, "alice", nil); err != nil || n != 2 {
		t.Fatalf("purging alice's = %d, %v; want 2", n, err)
	}
	if r := ask("bob", "", "one"); r.Cache.Result != CacheHit {
		t.Fatalf("bob's answer after alice's purge: %+v, want a hit", r.Cache)
	}
}
