package completions

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// bowFake answers chat (fakeProvider) and embeds by bag of words (each lower-cased word
// hashed into one of 256 dimensions): a stand-in for a real embedding model in that text
// shared between two inputs pulls their vectors together in proportion to its length.
type bowFake struct{ *fakeProvider }

func (f bowFake) Embed(_ context.Context, req *providers.EmbeddingRequest) (*providers.EmbeddingResponse, error) {
	out := &providers.EmbeddingResponse{Usage: providers.Usage{PromptTokens: 7 * len(req.Input)}}
	for _, in := range req.Input {
		v := make([]float32, 256)
		for _, w := range strings.Fields(strings.ToLower(in)) {
			h := fnv.New32a()
			h.Write([]byte(strings.Trim(w, ".,:;?!")))
			v[h.Sum32()%256]++
		}
		out.Vectors = append(out.Vectors, v)
	}
	return out, nil
}

func review17cText(role, text string) Message {
	return Message{Role: role, Content: []ContentBlock{{Type: "text", Text: text}}}
}

// TestReview17cSemanticFinalQuestionIsNotDilutedByEarlierTurns: BUG. semanticText embeds the
// whole conversation as one text, so in a conversation whose first turn is long (a
// document pasted in) the final question is a small part of what is embedded: two
// conversations that share the document and the assistant's turn but ask entirely
// different things at the end ("Summarize it" vs "Translate it into French") are
// near-identical vectors (cosine ~0.97 here with a bag-of-words model; real embedding
// models behave the same way for a long shared prefix) and the second is served the
// first's summary as its translation. The earlier turns must not dominate: e.g. put the
// text of every message but the last user one in the scope hash (matched exactly) and
// embed only the last user message, or require the last message's own similarity to pass
// the threshold too.
func TestReview17cSemanticFinalQuestionIsNotDilutedByEarlierTurns(t *testing.T) {
	e := bowFake{newFake("e")}
	e.on("chat", step{text: "The report says sales rose 4% in the third quarter."}, step{text: "Le rapport indique que ..."})
	g, err := New(Options{Providers: fakeRegistry{"e": e}, Prices: fakePrices{}, Ledger: &recordingLedger{}, Store: memstore.New(),
		Sleep: func(context.Context, time.Duration) error { return nil }, AttemptTimeout: 2 * time.Second,
		Cache: CacheOptions{Driver: &MemoryCache{}, TTL: time.Hour, Semantic: &SemanticCacheOptions{Model: "e/embed"}}})
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Repeat("Quarterly report: revenue in the northern region grew while costs in logistics and "+
		"warehousing fell, the board approved a new hiring plan and the marketing budget was moved to online channels. ", 4)
	ask := func(final string) *Response {
		req := &Request{Models: []string{"e/chat"}, ephemeral: true, Messages: []Message{
			review17cText("user", doc),
			review17cText("assistant", "I have read the report. What would you like me to do with it?"),
			review17cText("user", final),
		}}
		r, err := g.Complete(context.Background(), Scope{Owner: "alice"}, req)
		if err != nil {
			t.Fatal(err)
		}
		g.cacheWrites.wg.Wait()
		return r
	}
	ask("Summarize it in one sentence.")
	r := ask("Translate it into French.")
	if r.Cache != nil && r.Cache.Result == CacheHit {
		t.Fatalf("a request for a translation was answered %q from the cache (semantic %v, similarity %v): the final question was drowned by the shared turns",
			r.Text(), r.Cache.Semantic, r.Cache.Similarity)
	}
}

// TestReview17cSemanticEmptyScopesAreNeverDropped: BUG. Every semantic lookup creates its
// scope in the index (semanticIndex.scope) before it knows whether anything will be stored
// in it. With a driver that is not a CacheLister (MemoryCache) a scope that never gets a
// vector — the request said no-store, the upstream failed, the answer was too big or was
// cut by a budget — has loaded zero and no entries, so the clean-up in scope() (which drops
// a scope only when it was loaded or has entries) never drops it: the index grows by one
// scope per distinct system prompt / parameter set / owner forever. Fix: drop a scope with
// no entries once it is older than a minute (record its creation time), or create it only
// when a vector is added (look up without creating).
func TestReview17cSemanticEmptyScopesAreNeverDropped(t *testing.T) {
	var mu sync.Mutex
	var offset time.Duration // a clock that runs, moved on by the test
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(offset) }
	e := newEmbeddingChatFake("e")
	g, err := New(Options{Providers: fakeRegistry{"e": e}, Prices: fakePrices{}, Ledger: &recordingLedger{}, Store: memstore.New(), Now: clock,
		Sleep: func(context.Context, time.Duration) error { return nil }, AttemptTimeout: 2 * time.Second,
		Cache: CacheOptions{Driver: &MemoryCache{}, TTL: time.Hour, Semantic: &SemanticCacheOptions{Model: "e/embed"}}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		req := withSystem(fmt.Sprintf("You are assistant number %d.", i), chat("What is the capital of France?", "e/chat"))
		req.Cache = &CacheControl{NoStore: true}
		if _, err := g.Complete(context.Background(), Scope{Owner: "alice"}, req); err != nil {
			t.Fatal(err)
		}
	}
	g.cacheWrites.wg.Wait()
	mu.Lock()
	offset += 3 * time.Hour // well past any TTL
	mu.Unlock()
	req := withSystem("Another system prompt.", chat("What is the capital of France?", "e/chat"))
	if _, err := g.Complete(context.Background(), Scope{Owner: "alice"}, req); err != nil {
		t.Fatal(err)
	}
	g.cacheWrites.wg.Wait()
	g.semantic.mu.Lock()
	n := len(g.semantic.scopes)
	g.semantic.mu.Unlock()
	if n > 1 {
		t.Fatalf("the semantic index holds %d scopes three hours later; the 50 that never held a vector are never dropped", n)
	}
}

// TestReview17cSemanticReplicaRefreshReplacesAnExpiredVector: BUG. loadSemantic skips a
// listed vector whose answer key the scope already knows, even when the known entry has
// expired and the driver's is a fresh one (another replica answered the same request again
// after the TTL and wrote its vector again under the same key). Replica A keeps its expired
// entry (nearest skips it) and never matches that answer again until the entry is pushed
// out by the LRU bound — A answers paraphrases upstream that B answers from the cache.
// Fix: in loadSemantic replace a known entry when the listed one expires later (or drop
// expired entries from a scope when it is refreshed).
func TestReview17cSemanticReplicaRefreshReplacesAnExpiredVector(t *testing.T) {
	var mu sync.Mutex
	var offset time.Duration // a clock that runs, moved on by the test
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(offset) }
	advance := func(d time.Duration) { mu.Lock(); offset += d; mu.Unlock() }
	st := memstore.New()
	e := newEmbeddingChatFake("e")
	e.on("chat", step{text: "Paris"})
	replica := func() *Gateway {
		g, err := New(Options{Providers: fakeRegistry{"e": e}, Prices: fakePrices{}, Ledger: &recordingLedger{}, Store: memstore.New(), Now: clock,
			Sleep: func(context.Context, time.Duration) error { return nil }, AttemptTimeout: 2 * time.Second,
			Cache: CacheOptions{Driver: NewStoreCache(st), TTL: time.Hour, Semantic: &SemanticCacheOptions{Model: "e/embed"}}})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	a, b := replica(), replica()
	ask := func(g *Gateway, text string) *Response {
		r, err := g.Complete(context.Background(), Scope{Owner: "alice"}, chat(text, "e/chat"))
		if err != nil {
			t.Fatal(err)
		}
		g.cacheWrites.wg.Wait()
		return r
	}
	first := ask(a, "What is the capital of France?") // A: miss, vector in A's index (expires in 1h)
	advance(2 * time.Hour)
	again := ask(b, "What is the capital of France?") // B: the answer expired; answered and written again, same key
	if again.Cache.Key != first.Cache.Key || again.Cache.Result != CacheMiss {
		t.Fatalf("setup: %+v vs %+v", again.Cache, first.Cache)
	}
	if r := ask(b, "Tell me France's capital city."); r.Cache.Result != CacheHit || !r.Cache.Semantic {
		t.Fatalf("setup: B's paraphrase %+v", r.Cache)
	}
	advance(2 * time.Minute) // past A's refresh
	r := ask(a, "Tell me France's capital city.")
	if r.Cache.Result != CacheHit || !r.Cache.Semantic {
		t.Fatalf("replica A after its refresh: %+v (chat called %d times); B's fresh vector of the same answer key was skipped as known while A's entry had expired",
			r.Cache, e.callCount("chat"))
	}
}

// TestReview17cSemanticDeletedAnswersVectorsStayAndHideALiveMatch: BUG. DeleteCached (the
// README's way to "take a bad match out") deletes the answer key only: the vector entry,
// under "<owner>.<ns>.v<scope>.<hash>", stays in the driver until its TTL. Every refresh
// (a minute) lists it again as unknown and puts it back in the index, and lookupSemantic
// gives up after three answers found missing — so once three deleted answers are nearer
// than a live one, the live answer (similarity 0.82 here, over the 0.8 threshold) is never
// found again. Fix: DeleteCached also deletes the vector entry (scope + key[34:], for the
// scopes of that owner/namespace, e.g. keep the vector key derivable or DeletePrefix on
// "<owner>.<ns>.v" entries whose suffix is key[34:]), and lookupSemantic should skip entries
// whose answer is gone without a fixed try budget (or remember them as tombstones).
func TestReview17cSemanticDeletedAnswersVectorsStayAndHideALiveMatch(t *testing.T) {
	var mu sync.Mutex
	var offset time.Duration
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(offset) }
	e := newEmbeddingChatFake("e")
	e.vectors = map[string][]float32{
		// 0.88 to the question, 0.77 to each other (each its own miss when asked)
		"Bad one":   {0.88, 0.475, 0, 0, 0},
		"Bad two":   {0.88, 0, 0.475, 0, 0},
		"Bad three": {0.88, 0, 0, 0.475, 0},
		"Good one":  {0.82, 0, 0, 0, 0.572}, // 0.82 to the question
		"Question":  {1, 0, 0, 0, 0},
	}
	g, err := New(Options{Providers: fakeRegistry{"e": e}, Prices: fakePrices{}, Ledger: &recordingLedger{}, Store: memstore.New(), Now: clock,
		Sleep: func(context.Context, time.Duration) error { return nil }, AttemptTimeout: 2 * time.Second,
		Cache: CacheOptions{Driver: NewStoreCache(memstore.New()), TTL: time.Hour, Semantic: &SemanticCacheOptions{Model: "e/embed"}}})
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
	var bad []string
	for _, q := range []string{"Bad one", "Bad two", "Bad three"} {
		bad = append(bad, ask(q).Cache.Key)
	}
	good := ask("Good one").Cache.Key
	for _, k := range bad {
		if err := g.DeleteCached(context.Background(), "alice", k); err != nil {
			t.Fatal(err)
		}
	}
	if r := ask("Question"); r.Cache.Result != CacheHit || r.Cache.Key != good {
		t.Fatalf("setup: right after the deletions %+v, want a hit of %s", r.Cache, good)
	}
	mu.Lock()
	offset += 2 * time.Minute // the scope is read again from the driver
	mu.Unlock()
	if r := ask("Question"); r.Cache.Result != CacheHit || r.Cache.Key != good {
		t.Fatalf("after a refresh: %+v, want a hit of %s (0.82): the deleted answers' vectors came back from the driver and used up the lookup's tries", r.Cache, good)
	}
}

// TestReview17cSemanticMessageNamesAreInTheScope: BUG. A message's name (OpenAI's
// "name" on a user message: who speaks in a multi-user chat) is sent to the model and is
// in the exact key, but semanticScopeOf replaces every non-system message by its role
// alone and semanticText writes only "role: text": the same question asked by "bob" is
// answered, by meaning (similarity 1), with the answer made for "alice" — "Your name is
// Alice." Fix: keep Name in the scope's messages ({Role, Name}) or write it into the
// embedded line.
func TestReview17cSemanticMessageNamesAreInTheScope(t *testing.T) {
	h := newSemanticHarness(t, &MemoryCache{}, nil)
	h.e.on("chat", step{text: "Your name is Alice."}, step{text: "Your name is Bob."})
	ask := func(name string) *Response {
		req := chat("What is my name?", "e/chat")
		req.Messages[0].Name = name
		return h.ask(t, Scope{Owner: "team"}, req)
	}
	ask("alice")
	if r := ask("bob"); r.Cache != nil && r.Cache.Result == CacheHit {
		t.Fatalf("bob was answered %q from alice's answer (%+v)", r.Text(), r.Cache)
	}
}

// TestReview17cSemanticGroupMixesEmbeddingModels: BUG. The semantic model may be a model
// group (checkSemantic accepts one; the README says so), and the scope names the group,
// not the deployment that made the vector. When the group's first model fails and another
// embedding model of the same dimensions answers (ada-002 and text-embedding-3-small are
// both 1536), its vector is compared by cosine with vectors of the other model — a
// different space, so the similarity means nothing: here "What is the capital of Spain?"
// embedded by f lands on France's answer made from e's vector. (The embeddings cache
// keeps models apart; the semantic index does not.) Fix: key the scope (or each entry)
// by the model that actually made the vector (EmbeddingsResponse's provider/model) and
// compare only vectors of the same model, or refuse a group of different models.
func TestReview17cSemanticGroupMixesEmbeddingModels(t *testing.T) {
	e := newEmbeddingChatFake("e")
	e.on("chat", step{text: "Paris"}, step{text: "Madrid"})
	f := newEmbeddingChatFake("f")
	f.vectors = map[string][]float32{"What is the capital of Spain?": {1, 0, 0, 0}} // f's own space
	g, err := New(Options{Providers: fakeRegistry{"e": e, "f": f}, Prices: fakePrices{}, Ledger: &recordingLedger{}, Store: memstore.New(),
		Sleep: func(context.Context, time.Duration) error { return nil }, AttemptTimeout: 2 * time.Second,
		ModelGroups: map[string]ModelGroup{"emb": {Models: []string{"e/embed", "f/embed"}}},
		Cache:       CacheOptions{Driver: &MemoryCache{}, TTL: time.Hour, Semantic: &SemanticCacheOptions{Model: "emb"}}})
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
	ask("What is the capital of France?") // embedded by e
	e.mu.Lock()
	e.fail = &providers.Error{Provider: "e", Model: "embed", Kind: providers.KindOverloaded, StatusCode: 503, Message: "embeddings down"}
	e.mu.Unlock()
	r := ask("What is the capital of Spain?") // embedded by f
	if len(f.embedded()) == 0 {
		t.Skip("setup: the group did not fall back to f")
	}
	if r.Cache != nil && r.Cache.Result == CacheHit {
		t.Fatalf("Spain was answered %q: f's vector was matched against e's (%+v)", r.Text(), r.Cache)
	}
}
