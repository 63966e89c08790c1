package completions

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// embeddingChatFake is a scripted upstream that answers chat (fakeProvider) and embeddings
// deterministically: an input containing one of the known sentences gets that sentence's
// vector (the longest known sentence it contains wins), any other input [0 0 0 1].
type embeddingChatFake struct {
	*fakeProvider
	vectors map[string][]float32

	mu     sync.Mutex
	inputs []string
	fail   error
}

func newEmbeddingChatFake(name string) *embeddingChatFake {
	return &embeddingChatFake{fakeProvider: newFake(name), vectors: map[string][]float32{
		"What is the capital of France?": {1, 0, 0, 0},
		"Tell me France's capital city.": {0.97, 0.2431, 0, 0}, // cosine 0.97 with the first
		"What is the capital of Spain?":  {0.6, 0.8, 0, 0},     // cosine 0.6
	}}
}

func (f *embeddingChatFake) Embed(_ context.Context, req *providers.EmbeddingRequest) (*providers.EmbeddingResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inputs = append(f.inputs, req.Input...)
	if f.fail != nil {
		return nil, f.fail
	}
	out := &providers.EmbeddingResponse{Usage: providers.Usage{PromptTokens: 7 * len(req.Input)}}
	for _, in := range req.Input {
		v, best := []float32{0, 0, 0, 1}, 0
		for s, sv := range f.vectors {
			if strings.Contains(in, s) && len(s) > best {
				v, best = sv, len(s)
			}
		}
		out.Vectors = append(out.Vectors, v)
	}
	return out, nil
}

func (f *embeddingChatFake) embedded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.inputs...)
}

// semanticHarness is a gateway caching in driver, semantically with e/embed.
type semanticHarness struct {
	g      *Gateway
	e      *embeddingChatFake
	ledger *recordingLedger
}

func newSemanticHarness(t *testing.T, driver CacheDriver, e *embeddingChatFake) *semanticHarness {
	t.Helper()
	if e == nil {
		e = newEmbeddingChatFake("e")
	}
	h := &semanticHarness{e: e, ledger: &recordingLedger{}}
	g, err := New(Options{Providers: fakeRegistry{"e": e}, Prices: fakePrices{}, Ledger: h.ledger, Store: memstore.New(),
		Sleep: func(context.Context, time.Duration) error { return nil }, AttemptTimeout: 2 * time.Second,
		Cache: CacheOptions{Driver: driver, TTL: time.Hour, Semantic: &SemanticCacheOptions{Model: "e/embed"}}})
	if err != nil {
		t.Fatal(err)
	}
	h.g = g
	return h
}

func (h *semanticHarness) ask(t *testing.T, scope Scope, req *Request) *Response {
	t.Helper()
	r, err := h.g.Complete(context.Background(), scope, req)
	if err != nil {
		t.Fatal(err)
	}
	h.g.cacheWrites.wg.Wait()
	return r
}

func withSystem(system string, req *Request) *Request {
	req.Messages = append([]Message{{Role: "system", Content: []ContentBlock{{Type: "text", Text: system}}}}, req.Messages...)
	return req
}

// TestSemanticCacheAnswersAParaphraseOverTheThreshold: a paraphrase of an answered
// question (cosine 0.97 ≥ the default 0.8) is answered from the cache, said to be semantic
// with its similarity and the key of the answer it got; the embedding calls are accounted.
func TestSemanticCacheAnswersAParaphraseOverTheThreshold(t *testing.T) {
	h := newSemanticHarness(t, &MemoryCache{}, nil)
	h.e.on("chat", step{text: "Paris", usage: providers.Usage{PromptTokens: 10, CompletionTokens: 2}})
	alice := Scope{Owner: "alice"}
	first := h.ask(t, alice, chat("What is the capital of France?", "e/chat"))
	if first.Cache == nil || first.Cache.Result != CacheMiss || first.Cache.Semantic {
		t.Fatalf("first: %+v", first.Cache)
	}
	second := h.ask(t, alice, chat("Tell me France's capital city.", "e/chat"))
	c := second.Cache
	if c == nil || c.Result != CacheHit || !c.Semantic || math.Abs(c.Similarity-0.97) > 0.001 || c.Key != first.Cache.Key {
		t.Fatalf("paraphrase: cache %+v, want a semantic hit of %s at 0.97", c, first.Cache.Key)
	}
	if second.Text() != "Paris" || h.e.callCount("chat") != 1 {
		t.Fatalf("answer %q, chat called %d times", second.Text(), h.e.callCount("chat"))
	}
	if in := h.e.embedded(); len(in) != 2 || in[0] != "user: What is the capital of France?" {
		t.Fatalf("embedded %q, want each conversation once as role: text", in)
	}
	embeds := 0
	for _, e := range h.ledger.all() {
		if e.Model == "e/embed" {
			embeds++
		}
	}
	if embeds != 2 {
		t.Fatalf("%d embedding calls in the ledger, want 2", embeds)
	}
	// The exact request again is an exact hit (no embedding call).
	third := h.ask(t, alice, chat("What is the capital of France?", "e/chat"))
	if third.Cache.Result != CacheHit || third.Cache.Semantic || len(h.e.embedded()) != 2 {
		t.Fatalf("exact repeat: %+v, %d embeddings", third.Cache, len(h.e.embedded()))
	}
}

// TestSemanticCacheMissesUnderTheThresholdAndHonoursTheRequest: a question under the
// threshold (0.6) is a miss; a request may lower or raise its threshold or opt out.
func TestSemanticCacheMissesUnderTheThresholdAndHonoursTheRequest(t *testing.T) {
	h := newSemanticHarness(t, &MemoryCache{}, nil)
	h.e.on("chat", step{text: "an answer"})
	alice := Scope{Owner: "alice"}
	h.ask(t, alice, chat("What is the capital of France?", "e/chat"))
	if r := h.ask(t, alice, chat("What is the capital of Spain?", "e/chat")); r.Cache.Result != CacheMiss {
		t.Fatalf("under the threshold: %+v", r.Cache)
	}
	strict := chat("Tell me France's capital city.", "e/chat")
	strict.Cache = &CacheControl{SimilarityThreshold: ptr(0.99), NoStore: true}
	if r := h.ask(t, alice, strict); r.Cache.Result != CacheMiss {
		t.Fatalf("threshold 0.99: %+v", r.Cache)
	}
	optOut := chat("Tell me France's capital city.", "e/chat")
	optOut.Cache = &CacheControl{NoSemantic: true, NoStore: true}
	before := len(h.e.embedded())
	if r := h.ask(t, alice, optOut); r.Cache.Result != CacheMiss || len(h.e.embedded()) != before {
		t.Fatalf("no-semantic: %+v, embedded %d more", r.Cache, len(h.e.embedded())-before)
	}
	lax := chat("What is the capital of Spain? ", "e/chat")
	lax.Cache = &CacheControl{SimilarityThreshold: ptr(0.5)}
	if r := h.ask(t, alice, lax); r.Cache.Result != CacheHit || !r.Cache.Semantic {
		t.Fatalf("threshold 0.5: %+v", r.Cache)
	}
	if n := h.e.callCount("chat"); n != 4 {
		t.Fatalf("chat called %d times, want 4", n)
	}
	bad := chat("x", "e/chat")
	bad.Cache = &CacheControl{SimilarityThreshold: ptr(1.5)}
	var ve *ValidationError
	if _, err := h.g.Complete(context.Background(), alice, bad); !errors.As(err, &ve) || ve.Field != "cache.similarity_threshold" {
		t.Fatalf("threshold 1.5: %v", err)
	}
}

// TestSemanticCacheKeepsSystemPromptsOwnersAndParametersApart: the same question under
// another system prompt, from another owner or with another temperature is a miss.
func TestSemanticCacheKeepsSystemPromptsOwnersAndParametersApart(t *testing.T) {
	h := newSemanticHarness(t, &MemoryCache{}, nil)
	h.e.on("chat", step{text: "an answer"})
	alice := Scope{Owner: "alice"}
	h.ask(t, alice, withSystem("Answer in French.", chat("What is the capital of France?", "e/chat")))
	if r := h.ask(t, alice, withSystem("Answer in French.", chat("Tell me France's capital city.", "e/chat"))); r.Cache.Result != CacheHit {
		t.Fatalf("same system prompt: %+v", r.Cache)
	}
	hot := chat("Tell me France's capital city.", "e/chat")
	hot.Temperature = ptr(0.9)
	for name, tc := range map[string]struct {
		scope Scope
		req   *Request
	}{
		"another system prompt": {alice, withSystem("Answer in German.", chat("Tell me France's capital city.", "e/chat"))},
		"no system prompt":      {alice, chat("Tell me France's capital city.", "e/chat")},
		"another owner":         {Scope{Owner: "bob"}, withSystem("Answer in French.", chat("Tell me France's capital city.", "e/chat"))},
		"another temperature":   {alice, withSystem("Answer in French.", hot)},
	} {
		tc.req.Cache = &CacheControl{NoStore: true}
		if r := h.ask(t, tc.scope, tc.req); r.Cache.Result != CacheMiss {
			t.Errorf("%s: %+v, want a miss", name, r.Cache)
		}
	}
}

// TestSemanticCacheBypassesToolsAndSeveralChoices: requests with tools or n > 1 are not
// embedded at all.
func TestSemanticCacheBypassesToolsAndSeveralChoices(t *testing.T) {
	h := newSemanticHarness(t, &MemoryCache{}, nil)
	h.e.on("chat", step{text: "an answer"})
	alice := Scope{Owner: "alice"}
	tools := chat("What is the capital of France?", "e/chat")
	tools.Tools = []providers.Tool{{Name: "lookup", Parameters: []byte(`{"type":"object"}`)}}
	h.ask(t, alice, tools)
	if _, _, err := h.g.CompleteN(context.Background(), alice, chat("What is the capital of France?", "e/chat"), 2); err != nil {
		t.Fatal(err)
	}
	h.g.cacheWrites.wg.Wait()
	if in := h.e.embedded(); len(in) != 0 {
		t.Fatalf("embedded %q for requests with tools or n > 1", in)
	}
	tools2 := chat("Tell me France's capital city.", "e/chat")
	tools2.Tools = tools.Tools
	if r := h.ask(t, alice, tools2); r.Cache.Result != CacheMiss {
		t.Fatalf("a paraphrase with tools: %+v", r.Cache)
	}
}

// TestSemanticCacheEmbeddingFailureIsAMiss: an embeddings call that fails never fails the
// request: it is answered upstream, as a miss.
func TestSemanticCacheEmbeddingFailureIsAMiss(t *testing.T) {
	h := newSemanticHarness(t, &MemoryCache{}, nil)
	h.e.on("chat", step{text: "Paris"})
	h.e.fail = &providers.Error{Provider: "e", Kind: providers.KindBadRequest, StatusCode: 400, Message: "embeddings are down"}
	alice := Scope{Owner: "alice"}
	r := h.ask(t, alice, chat("What is the capital of France?", "e/chat"))
	if r.Text() != "Paris" || r.Cache == nil || r.Cache.Result != CacheMiss {
		t.Fatalf("answer %q, cache %+v", r.Text(), r.Cache)
	}
	if len(h.e.embedded()) == 0 {
		t.Fatal("no embedding was tried")
	}
	// The exact cache still works.
	if r := h.ask(t, alice, chat("What is the capital of France?", "e/chat")); r.Cache.Result != CacheHit || h.e.callCount("chat") != 1 {
		t.Fatalf("exact repeat: %+v", r.Cache)
	}
}

// TestSemanticCacheStoreFindsVectorsAfterARestart: with a StoreCache a new Gateway on the
// same store (a restart, or another replica) finds the vectors kept by the first.
func TestSemanticCacheStoreFindsVectorsAfterARestart(t *testing.T) {
	st := memstore.New()
	e := newEmbeddingChatFake("e")
	e.on("chat", step{text: "Paris"})
	first := newSemanticHarness(t, NewStoreCache(st), e)
	alice := Scope{Owner: "alice"}
	answered := first.ask(t, alice, chat("What is the capital of France?", "e/chat"))
	if err := first.g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	second := newSemanticHarness(t, NewStoreCache(st), e)
	r := second.ask(t, alice, chat("Tell me France's capital city.", "e/chat"))
	if r.Cache == nil || r.Cache.Result != CacheHit || !r.Cache.Semantic || r.Cache.Key != answered.Cache.Key || r.Text() != "Paris" {
		t.Fatalf("after a restart: %+v %q", r.Cache, r.Text())
	}
	if e.callCount("chat") != 1 {
		t.Fatalf("chat called %d times", e.callCount("chat"))
	}
	// A purge takes the vectors too.
	if _, err := second.g.PurgeCache(context.Background(), "alice", nil); err != nil {
		t.Fatal(err)
	}
	third := newSemanticHarness(t, NewStoreCache(st), e)
	if r := third.ask(t, alice, chat("Tell me France's capital city.", "e/chat")); r.Cache.Result != CacheMiss {
		t.Fatalf("after a purge: %+v", r.Cache)
	}
}

// TestSemanticIndexDropsTheLeastRecentlyUsedBeyondItsBound: a scope keeps at most its
// bound of vectors; the one hit or added least recently goes first.
func TestSemanticIndexDropsTheLeastRecentlyUsedBeyondItsBound(t *testing.T) {
	var x semanticIndex
	s := x.scope("o.n.vs.", time.Now())
	now := time.Now()
	add := func(key string, v ...float32) {
		e := newSemanticEntry(key, normalize(v), now.Add(time.Hour))
		e.used.Store(x.tick.Add(1))
		s.add(e, 3)
	}
	add("a", 1, 0, 0)
	add("b", 0, 1, 0)
	add("c", 0, 0, 1)
	e, sim := s.nearest(normalize([]float32{1, 0.1, 0}), now) // a is used: b is now the oldest
	if e == nil || e.answerKey != "a" || sim < 0.99 {
		t.Fatalf("nearest = %v %v", e, sim)
	}
	e.used.Store(x.tick.Add(1))
	add("d", 1, 1, 0)
	if len(s.entries) != 3 || len(s.byKey) != 3 {
		t.Fatalf("entries %d", len(s.entries))
	}
	if _, ok := s.byKey["b"]; ok {
		t.Fatal("b, the least recently used, is still in the index")
	}
	for _, k := range []string{"a", "c", "d"} {
		if i, ok := s.byKey[k]; !ok || s.entries[i].answerKey != k {
			t.Fatalf("%s lost or misplaced", k)
		}
	}
	if e, _ := s.nearest(normalize([]float32{0, 1, 0}), now.Add(2*time.Hour)); e != nil {
		t.Fatalf("an expired vector was found: %v", e.answerKey)
	}
	// A scope whose every vector expired is dropped when another is made.
	x.scope("o.n.vt.", now.Add(2*time.Hour))
	if _, ok := x.scopes["o.n.vs."]; ok || len(x.scopes) != 1 {
		t.Fatalf("scopes %d: the expired one is kept", len(x.scopes))
	}
}
