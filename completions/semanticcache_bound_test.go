package completions

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestSemanticIndexBoundsVectorsAcrossScopes: beyond MaxTotalVectors the least recently
// used scope gives up its least recently used vector, and a scope left empty is dropped;
// a lookup never makes a scope.
func TestSemanticIndexBoundsVectorsAcrossScopes(t *testing.T) {
	var x semanticIndex
	now := time.Now()
	add := func(prefix, key string, v ...float32) {
		x.add(prefix, newSemanticEntry(key, normalize(v), now.Add(time.Hour)), now, 10, 4)
	}
	add("o.n.va.", "a1", 1, 0)
	add("o.n.vb.", "b1", 0, 1)
	add("o.n.vb.", "b2", 1, 1)
	add("o.n.vc.", "c1", 1, 2)
	add("o.n.vc.", "c2", 2, 1) // a, the least recently used scope, gives up a1 and goes
	if n := x.total.Load(); n != 4 {
		t.Fatalf("total %d, want 4", n)
	}
	if x.get("o.n.va.") != nil || len(x.scopes) != 2 {
		t.Fatalf("scopes %d: the emptied least recently used one is kept", len(x.scopes))
	}
	b := x.get("o.n.vb.")
	if e, _ := b.nearest(normalize([]float32{0, 1}), now); e == nil || e.answerKey != "b1" {
		t.Fatalf("nearest in b: %v", e)
	}
	b.used.Store(x.tick.Add(1)) // b is used: c is now the least recently used scope
	add("o.n.vd.", "d1", 3, 1)
	if n := x.total.Load(); n != 4 {
		t.Fatalf("total %d, want 4", n)
	}
	if c := x.get("o.n.vc."); c == nil || len(c.entries) != 1 {
		t.Fatal("c, the least recently used scope, did not give up a vector")
	}
	if len(b.entries) != 2 {
		t.Fatalf("b holds %d vectors, want 2", len(b.entries))
	}
	if x.get("o.n.vnone.") != nil || len(x.scopes) != 3 {
		t.Fatalf("get made a scope: %d", len(x.scopes))
	}
	x.purged("o.n.")
	if n := x.total.Load(); n != 0 || len(x.scopes) != 0 {
		t.Fatalf("after a purge: total %d, %d scopes", n, len(x.scopes))
	}
}

// TestSemanticCacheMaxAgeTriesTheNextNearest: when the nearest answer is older than the
// request's s-maxage, a younger one over the threshold is taken.
func TestSemanticCacheMaxAgeTriesTheNextNearest(t *testing.T) {
	var mu sync.Mutex
	var offset time.Duration
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(offset) }
	e := newEmbeddingChatFake("e")
	e.vectors = map[string][]float32{
		"Old question": {1, 0, 0, 0},
		"New question": {0.6, 0.8, 0, 0},     // 0.6 to the old: a miss
		"Asked":        {0.95, 0.3122, 0, 0}, // 0.95 to the old, 0.82 to the new
	}
	e.on("chat", step{text: "old answer"}, step{text: "new answer"})
	g, err := New(Options{Providers: fakeRegistry{"e": e}, Prices: fakePrices{}, Ledger: &recordingLedger{}, Store: memstore.New(), Now: clock,
		Sleep: func(context.Context, time.Duration) error { return nil }, AttemptTimeout: 2 * time.Second,
		Cache: CacheOptions{Driver: &MemoryCache{}, TTL: time.Hour, Semantic: &SemanticCacheOptions{Model: "e/embed"}}})
	if err != nil {
		t.Fatal(err)
	}
	ask := func(text string, ctl *CacheControl) *Response {
		req := chat(text, "e/chat")
		req.Cache = ctl
		r, err := g.Complete(context.Background(), Scope{Owner: "alice"}, req)
		if err != nil {
			t.Fatal(err)
		}
		g.cacheWrites.wg.Wait()
		return r
	}
	old := ask("Old question", nil)
	mu.Lock()
	offset += 10 * time.Minute
	mu.Unlock()
	young := ask("New question", nil)
	mu.Lock()
	offset += 10 * time.Minute // the old answer is 20 minutes old, the young one 10
	mu.Unlock()
	if r := ask("Asked", &CacheControl{NoStore: true}); r.Cache.Result != CacheHit || r.Cache.Key != old.Cache.Key {
		t.Fatalf("any age: %+v, want the nearest, %s", r.Cache, old.Cache.Key)
	}
	if r := ask("Asked", &CacheControl{NoStore: true, MaxAge: 900}); r.Cache.Result != CacheHit || r.Cache.Key != young.Cache.Key || r.Text() != "new answer" {
		t.Fatalf("s-maxage 900: %+v %q, want the younger %s", r.Cache, r.Text(), young.Cache.Key)
	}
	if r := ask("Asked", &CacheControl{NoStore: true, MaxAge: 300}); r.Cache.Result != CacheMiss {
		t.Fatalf("s-maxage 300: %+v, want a miss", r.Cache)
	}
}

// TestSemanticCacheGoneAnswerStaysOutAfterARefresh: an answer the driver lost (not
// deleted through DeleteCached) is remembered as gone, so that its vector listed again
// at the next refresh does not come back; the same answer made again does.
func TestSemanticCacheGoneAnswerStaysOutAfterARefresh(t *testing.T) {
	var mu sync.Mutex
	var offset time.Duration
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(offset) }
	advance := func(d time.Duration) { mu.Lock(); offset += d; mu.Unlock() }
	st := memstore.New()
	driver := NewStoreCache(st)
	e := newEmbeddingChatFake("e")
	e.on("chat", step{text: "Paris"})
	g, err := New(Options{Providers: fakeRegistry{"e": e}, Prices: fakePrices{}, Ledger: &recordingLedger{}, Store: memstore.New(), Now: clock,
		Sleep: func(context.Context, time.Duration) error { return nil }, AttemptTimeout: 2 * time.Second,
		Cache: CacheOptions{Driver: driver, TTL: time.Hour, Semantic: &SemanticCacheOptions{Model: "e/embed"}}})
	if err != nil {
		t.Fatal(err)
	}
	ask := func(text string) *Response {
		r, err := g.Complete(context.Background(), Scope{Owner: "alice"}, chat(text, "e/chat"))
		if err != nil {
			t.Fatal(err)
		}
		g.cacheWrites.wg.Wait()
		return r
	}
	key := ask("What is the capital of France?").Cache.Key
	if _, err := driver.DeletePrefix(context.Background(), key); err != nil { // the answer alone
		t.Fatal(err)
	}
	if r := ask("Tell me France's capital city."); r.Cache.Result != CacheMiss {
		t.Fatalf("the answer is gone: %+v", r.Cache)
	}
	s := g.semantic.get(r17Scope(t, g))
	if s == nil || len(s.gone) != 1 {
		t.Fatal("the gone answer is not remembered")
	}
	advance(2 * time.Minute)
	ask("Tell me France's capital city.") // a refresh lists the vector again; kept out (the paraphrase is now cached itself)
	if _, ok := s.byKey[key]; ok {
		t.Fatal("the vector of the gone answer came back at the refresh")
	}
	advance(2 * time.Minute)
	if r := ask("What is the capital of France?"); r.Cache.Result != CacheHit || r.Cache.Key == key {
		t.Fatalf("the paraphrase's answer: %+v", r.Cache)
	}
}

// r17Scope is the one scope of g's index.
func r17Scope(t *testing.T, g *Gateway) string {
	t.Helper()
	g.semantic.mu.Lock()
	defer g.semantic.mu.Unlock()
	if len(g.semantic.scopes) != 1 {
		t.Fatalf("%d scopes, want 1", len(g.semantic.scopes))
	}
	for p := range g.semantic.scopes {
		return p
	}
	return ""
}
