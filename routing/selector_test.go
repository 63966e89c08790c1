package routing_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

func userMsg(s string) []routing.Message { return []routing.Message{{Role: "user", Content: s}} }

func names(ns ...string) []routing.Candidate {
	out := make([]routing.Candidate, len(ns))
	for i, n := range ns {
		out[i] = routing.Candidate{Name: n}
	}
	return out
}

func labels(ps []routing.RankedProvider) []string {
	var out []string
	for _, p := range ps {
		if p.Name != "" {
			out = append(out, p.Name)
		} else {
			out = append(out, p.Provider+"/"+p.Model)
		}
	}
	return out
}

func fp(f float64) *float64 { return &f }

func newSelector(t *testing.T, opts routing.Options) (*routing.Selector, *store.Store) {
	t.Helper()
	st := memstore.New()
	t.Cleanup(func() { st.Close() })
	opts.Store = st
	return routing.NewSelector(opts), st
}

func mustSelect(t *testing.T, s *routing.Selector, owner string, req *routing.Request) *routing.Response {
	t.Helper()
	resp, err := s.Select(context.Background(), owner, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestDefaultScorerUsesPriors(t *testing.T) {
	s, _ := newSelector(t, routing.Options{Scorer: routing.DefaultScorer{}})
	req := &routing.Request{Messages: userMsg("What is the capital of France?"),
		LLMProviders: names("meta/llama-3.1-8b-instruct", "acme/unknown-model", "openai/gpt-4o", "openai/gpt-4o-mini")}
	resp := mustSelect(t, s, "alice", req)
	got := strings.Join(labels(resp.Providers), ",")
	want := "openai/gpt-4o,openai/gpt-4o-mini,acme/unknown-model,meta/llama-3.1-8b-instruct"
	if got != want {
		t.Fatalf("ranking %s, want %s", got, want)
	}
	if resp.LLMLabel != "openai/gpt-4o" || resp.SessionID == "" {
		t.Errorf("label %q session %q", resp.LLMLabel, resp.SessionID)
	}
	src := map[string]string{}
	for _, p := range resp.Providers {
		src[p.Name] = p.ScoreSource
	}
	if src["openai/gpt-4o"] != routing.SourceBenchmark || src["acme/unknown-model"] != routing.SourceUnknown {
		t.Errorf("sources %v", src)
	}

	// A quality attribute overrides the built-in table.
	req.LLMProviders = names("openai/gpt-4o", "acme/unknown-model")
	req.LLMProviders[1].Attributes = map[string]any{"quality": 91.0}
	if resp := mustSelect(t, s, "alice", req); resp.LLMLabel != "acme/unknown-model" || resp.Providers[0].ScoreSource != routing.SourceAttribute {
		t.Errorf("quality attribute ignored: %+v", resp.Providers)
	}
}

func TestDomainAttributesFollowConversation(t *testing.T) {
	s, _ := newSelector(t, routing.Options{})
	cands := func() []routing.Candidate {
		c := names("a/generalist", "b/coder")
		c[0].Attributes = map[string]any{"quality": 0.7}
		c[1].Attributes = map[string]any{"quality": 0.6, "quality_code": 0.9}
		return c
	}
	chat := mustSelect(t, s, "", &routing.Request{Messages: userMsg("Tell me a story about a cat."), LLMProviders: cands()})
	code := mustSelect(t, s, "", &routing.Request{Messages: userMsg("Fix this python function:\n```python\ndef f(x):\n    return x +\n```"), LLMProviders: cands()})
	if chat.LLMLabel != "a/generalist" || code.LLMLabel != "b/coder" {
		t.Errorf("chat picked %s (want a/generalist), code picked %s (want b/coder)", chat.LLMLabel, code.LLMLabel)
	}
}

func TestConversationFeatures(t *testing.T) {
	easy := routing.NewConversation(userMsg("hi there"), 0, 0)
	code := routing.NewConversation(userMsg("```go\nfunc main() {}\n```"), 0, 0)
	math := routing.NewConversation(userMsg("Solve the equation $x^2 - 4 = 0$ and compute the integral."), 0, 0)
	tools := routing.NewConversation(userMsg("hi there"), 3, 0)
	if easy.Features.Code != 0 || easy.Features.Math != 0 {
		t.Errorf("small talk has code %v math %v", easy.Features.Code, easy.Features.Math)
	}
	if code.Features.Code != 1 || math.Features.Math != 1 {
		t.Errorf("code signal %v, math signal %v; want 1 and 1", code.Features.Code, math.Features.Math)
	}
	for name, c := range map[string]*routing.Conversation{"code": code, "math": math, "tools": tools} {
		if c.Features.Difficulty() <= easy.Features.Difficulty() {
			t.Errorf("%s difficulty %v not above small talk %v", name, c.Features.Difficulty(), easy.Features.Difficulty())
		}
	}
	// Rendering is fixed and the last user turn is picked out.
	conv := routing.NewConversation([]routing.Message{
		{Role: "system", Content: " Be brief. "}, {Role: "user", Content: "first"},
		{Role: "assistant", Content: "ok"}, {Role: "user", Content: "second"}}, 0, 0)
	if conv.Text != "system: Be brief.\nuser: first\nassistant: ok\nuser: second" || conv.LastUser != "second" {
		t.Errorf("rendered %q, last user %q", conv.Text, conv.LastUser)
	}
	if conv.Features.UserTurns != 2 {
		t.Errorf("user turns %d", conv.Features.UserTurns)
	}
	// The last user turn weighs most: code in the last turn counts more than code earlier.
	codeLast := routing.NewConversation([]routing.Message{{Role: "user", Content: "hello"}, {Role: "user", Content: "```x```"}}, 0, 0)
	codeFirst := routing.NewConversation([]routing.Message{{Role: "user", Content: "```x```"}, {Role: "user", Content: "hello"}}, 0, 0)
	if codeLast.Features.Code <= codeFirst.Features.Code {
		t.Errorf("code in last turn %v should outweigh code in first turn %v", codeLast.Features.Code, codeFirst.Features.Code)
	}
}

func TestToolsFilter(t *testing.T) {
	cat := routing.CatalogMap{"acme/tooly": {SupportsTools: ptrBool(true)}, "openai/gpt-4o": {SupportsTools: ptrBool(false)}}
	s, _ := newSelector(t, routing.Options{Catalog: cat})
	c := names("google/gemma-2-9b-it", "acme/unknown", "acme/declared", "acme/tooly", "meta/llama-3.1-70b-instruct", "openai/gpt-4o")
	c[2].Attributes = map[string]any{"supports_tools": true}
	req := &routing.Request{Messages: userMsg("What's the weather in Paris?"), LLMProviders: c,
		Tools: []routing.Tool{{Name: "get_weather"}}}
	resp := mustSelect(t, s, "", req)
	got := map[string]bool{}
	for _, l := range labels(resp.Providers) {
		got[l] = true
	}
	// gemma-2 (table: no tools), unknown (not known), gpt-4o (catalogue says no; catalogue
	// beats the table) are dropped.
	want := map[string]bool{"acme/declared": true, "acme/tooly": true, "meta/llama-3.1-70b-instruct": true}
	if len(got) != len(want) {
		t.Fatalf("kept %v, want %v", got, want)
	}
	for k := range want {
		if !got[k] {
			t.Errorf("%s dropped", k)
		}
	}
	// Without tools every candidate stays.
	req.Tools = nil
	if resp := mustSelect(t, s, "", req); len(resp.Providers) != 6 {
		t.Errorf("without tools kept %d of 6", len(resp.Providers))
	}
	// With none known to support tools, the ones not known to lack it remain.
	resp = mustSelect(t, s, "", &routing.Request{Messages: userMsg("x"),
		Models: names("acme/unknown", "openai/gpt-4o", "acme/other"), Tools: []routing.Tool{{Name: "f"}}})
	if got := labels(resp.Providers); len(got) != 2 || slices.Contains(got, "openai/gpt-4o") {
		t.Errorf("none known to support tools: kept %v, want acme/unknown and acme/other", got)
	}
	// Every candidate known not to support tools is a 400 naming the candidate list.
	_, err := s.Select(context.Background(), "", &routing.Request{Messages: userMsg("x"),
		Models: names("openai/gpt-4o", "google/gemma-2-9b-it"), Tools: []routing.Tool{{Name: "f"}}})
	var ve *routing.ValidationError
	if !errors.As(err, &ve) || ve.Field != "models" {
		t.Errorf("err = %v, want a ValidationError on models", err)
	}
}

func ptrBool(b bool) *bool { return &b }

func qualityCands(q ...float64) []routing.Candidate {
	c := make([]routing.Candidate, len(q))
	for i, v := range q {
		c[i] = routing.Candidate{Name: string(rune('a'+i)) + "/m", Attributes: map[string]any{"quality": v}}
	}
	return c
}

func TestTradeoffCost(t *testing.T) {
	s, _ := newSelector(t, routing.Options{Tolerance: 0.05,
		Catalog: routing.CatalogMap{"c/m": {Price: fp(0.5)}}})
	msgs := userMsg("Say hello.")
	c := qualityCands(0.80, 0.79, 0.78, 0.40)
	c[0].Price, c[1].Price, c[3].Price = fp(10), fp(2), fp(0.1) // c/m priced by the catalogue
	resp := mustSelect(t, s, "", &routing.Request{Messages: msgs, LLMProviders: c, Tradeoff: "cost"})
	// c/m is cheapest within tolerance; d/m is cheaper still but far worse.
	if got := strings.Join(labels(resp.Providers), ","); got != "c/m,b/m,a/m,d/m" {
		t.Errorf("cost ranking %s, want c/m,b/m,a/m,d/m", got)
	}
	// No tradeoff: by quality.
	resp = mustSelect(t, s, "", &routing.Request{Messages: msgs, LLMProviders: c})
	if resp.LLMLabel != "a/m" {
		t.Errorf("no tradeoff picked %s", resp.LLMLabel)
	}
	// An unknown price is never cheaper: drop b's price and the catalogue.
	s2, _ := newSelector(t, routing.Options{})
	c2 := qualityCands(0.80, 0.79)
	c2[0].Price = fp(10)
	if resp := mustSelect(t, s2, "", &routing.Request{Messages: msgs, LLMProviders: c2, Tradeoff: "cost"}); resp.LLMLabel != "a/m" {
		t.Errorf("unknown price treated as cheaper: picked %s", resp.LLMLabel)
	}
	// A negative tolerance means only exact ties qualify.
	s3, _ := newSelector(t, routing.Options{Tolerance: -1})
	if resp := mustSelect(t, s3, "", &routing.Request{Messages: msgs, LLMProviders: c, Tradeoff: "cost"}); resp.LLMLabel != "a/m" {
		t.Errorf("zero tolerance picked %s", resp.LLMLabel)
	}
}

func TestTradeoffLatencyAndDifficulty(t *testing.T) {
	s, _ := newSelector(t, routing.Options{Tolerance: 0.05})
	c := qualityCands(0.75, 0.70)
	c[0].Latency, c[1].Latency = fp(900), fp(150)
	// Easy conversation: the gap is compressed, the faster model is within tolerance.
	easy := mustSelect(t, s, "", &routing.Request{Messages: userMsg("hi"), LLMProviders: c, Tradeoff: "latency"})
	// Hard conversation (code + math + length): the gap widens, quality wins.
	hard := mustSelect(t, s, "", &routing.Request{Messages: userMsg(strings.Repeat("Solve the integral $\\int x^2 dx$ and write a python function computing it.\n```python\ndef f(x): return x**3/3\n```\n", 40)),
		LLMProviders: c, Tradeoff: "latency"})
	if easy.LLMLabel != "b/m" || hard.LLMLabel != "a/m" {
		t.Errorf("easy picked %s (want b/m), hard picked %s (want a/m)", easy.LLMLabel, hard.LLMLabel)
	}
}

func TestMaxModelDepthAndShapes(t *testing.T) {
	s, _ := newSelector(t, routing.Options{})
	req, err := routing.ParseRequest([]byte(`{"messages":[{"role":"user","content":"hi"}],
		"llm_providers":[{"provider":"openai","model":"gpt-4o-mini"},{"name":"openai/gpt-4o"},{"provider":"x","model":"y"}],
		"max_model_depth":2}`))
	if err != nil {
		t.Fatal(err)
	}
	resp := mustSelect(t, s, "", req)
	b, _ := json.Marshal(resp)
	var wire map[string]any
	json.Unmarshal(b, &wire)
	provs := wire["providers"].([]any)
	if len(provs) != 2 {
		t.Fatalf("providers cut at %d, want 2: %s", len(provs), b)
	}
	// Which of the two ranks first is the router's call; each must keep its own shape,
	// and llm_label the first one's.
	var named, split map[string]any
	for _, p := range provs {
		if m := p.(map[string]any); m["name"] != nil {
			named = m
		} else {
			split = m
		}
	}
	if named == nil || named["name"] != "openai/gpt-4o" || named["provider"] != nil {
		t.Errorf("name shape not written back: %s", b)
	}
	if split == nil || split["provider"] != "openai" || split["model"] != "gpt-4o-mini" || split["name"] != nil {
		t.Errorf("provider/model shape not written back: %s", b)
	}
	if first := provs[0].(map[string]any); (first["name"] != nil && wire["llm_label"] != "openai/gpt-4o") ||
		(first["name"] == nil && wire["llm_label"] != "openai/gpt-4o-mini") {
		t.Errorf("llm_label %v is not the first candidate in its shape: %s", wire["llm_label"], b)
	}
	if wire["session_id"] == "" {
		t.Errorf("no session id: %s", b)
	}
	// The stored session keeps the list the caller saw (max_model_depth 2).
	sess, err := s.Session(context.Background(), "", resp.SessionID)
	if err != nil || len(sess.Ranked) != 2 {
		t.Errorf("session %+v, %v", sess, err)
	}
}

// fakeRouters is a scripted CustomModels for tests: per owner/model id, a function of the
// text giving probabilities.
type fakeRouters struct {
	models    map[string]func(text string) []routing.ModelProb
	texts     [][]string
	tolerance float64
}

func (f *fakeRouters) Rank(_ context.Context, owner, id string, texts []string) (*routing.RouterEstimates, error) {
	fn, ok := f.models[owner+"/"+id]
	if !ok {
		return nil, routing.ErrNotFound
	}
	f.texts = append(f.texts, texts)
	out := make([][]routing.ModelProb, len(texts))
	for i, t := range texts {
		out[i] = fn(t)
	}
	return &routing.RouterEstimates{Texts: out, Tolerance: f.tolerance}, nil
}

func TestCustomRouter(t *testing.T) {
	fake := &fakeRouters{models: map[string]func(string) []routing.ModelProb{
		"alice/r1": func(text string) []routing.ModelProb {
			if strings.Contains(text, "code") {
				return []routing.ModelProb{{"acme/coder", 0.6, 0.9}, {"acme/chat", 0.1, 0.4}, {"acme/absent", 0.3, 0.5}}
			}
			return []routing.ModelProb{{"acme/coder", 0.2, 0.5}, {"acme/chat", 0.5, 0.8}, {"acme/absent", 0.3, 0.5}}
		},
	}}
	s, _ := newSelector(t, routing.Options{CustomModels: fake})
	cands := func() []routing.Candidate { return names("openai/gpt-4o", "acme/chat", "acme/coder", "zzz/unknown") }
	resp := mustSelect(t, s, "alice", &routing.Request{Messages: userMsg("write code"), LLMProviders: cands(), PreferenceID: "r1"})
	// Known candidates by the router's score, then the rest by the default scorer (gpt-4o's
	// benchmark prior beats the unknown prior).
	if got := strings.Join(labels(resp.Providers), ","); got != "acme/coder,acme/chat,openai/gpt-4o,zzz/unknown" {
		t.Errorf("ranking %s", got)
	}
	if p := resp.Providers[0]; p.ScoreSource != routing.SourceRouter || p.Score != 0.6 || p.Quality != 0.9 {
		t.Errorf("top %+v, want the router's score 0.6 and estimate 0.9", p)
	}
	// The last user turn weighs most: earlier code talk does not outweigh it.
	resp = mustSelect(t, s, "alice", &routing.Request{Messages: []routing.Message{
		{Role: "user", Content: "some code please"}, {Role: "assistant", Content: "sure"},
		{Role: "user", Content: "actually, tell me a joke"}}, LLMProviders: cands(), PreferenceID: "r1"})
	if resp.LLMLabel != "acme/chat" {
		t.Errorf("picked %s, want acme/chat (last turn)", resp.LLMLabel)
	}
	last := fake.texts[len(fake.texts)-1]
	if len(last) != 2 || last[0] != "actually, tell me a joke" || !strings.HasPrefix(last[1], "user: some code please\n") {
		t.Errorf("texts sent to the router: %q", last)
	}
	// Unknown preference, and another owner's preference, are not found.
	for _, owner := range []string{"alice", "bob"} {
		id := "nope"
		if owner == "bob" {
			id = "r1"
		}
		_, err := s.Select(context.Background(), owner, &routing.Request{Messages: userMsg("x"), LLMProviders: cands(), PreferenceID: id})
		var nf *routing.NotFoundError
		if !errors.Is(err, routing.ErrNotFound) || !errors.As(err, &nf) || nf.Field != "preference_id" || !strings.HasPrefix(err.Error(), "preference_id") {
			t.Errorf("owner %s id %s: err = %v, want not found naming preference_id", owner, id, err)
		}
	}
	// Without CustomModels every preference is unknown.
	s2, _ := newSelector(t, routing.Options{})
	if _, err := s2.Select(context.Background(), "alice", &routing.Request{Messages: userMsg("x"), LLMProviders: cands(), PreferenceID: "r1"}); !errors.Is(err, routing.ErrNotFound) {
		t.Errorf("err = %v", err)
	}
}

func TestSessions(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s, st := newSelector(t, routing.Options{Now: func() time.Time { return now }})
	ctx := context.Background()
	secret := "my secret prompt about project X"
	plain := mustSelect(t, s, "alice", &routing.Request{Messages: userMsg(secret), LLMProviders: names("openai/gpt-4o", "openai/gpt-4o-mini")})
	raw, err := st.Get(ctx, store.Sessions, plain.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "secret") || strings.Contains(string(raw), "sha256") {
		t.Errorf("session without hash_content stores content or hashes: %s", raw)
	}
	hashed := mustSelect(t, s, "alice", &routing.Request{Messages: userMsg(secret), LLMProviders: names("openai/gpt-4o"),
		HashContent: true, PreviousSession: plain.SessionID})
	raw, _ = st.Get(ctx, store.Sessions, hashed.SessionID)
	sum := sha256.Sum256([]byte(secret))
	if strings.Contains(string(raw), "secret") || !strings.Contains(string(raw), hex.EncodeToString(sum[:])) {
		t.Errorf("hashed session leaks content: %s", raw)
	}
	sess, err := s.Session(ctx, "alice", hashed.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if len(sess.MessageHashes) != 1 || sess.MessageHashes[0].Role != "user" || len(sess.MessageHashes[0].SHA256) != 64 ||
		sess.Chosen != "openai/gpt-4o" || !sess.CreatedAt.Equal(now) || sess.Owner != "alice" || sess.PreviousSession != plain.SessionID {
		t.Errorf("session %+v", sess)
	}
	third := mustSelect(t, s, "alice", &routing.Request{Messages: userMsg("again"), LLMProviders: names("openai/gpt-4o"), PreviousSession: hashed.SessionID})
	chain, err := s.SessionChain(ctx, "alice", third.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if len(chain) != 3 || chain[0].ID != third.SessionID || chain[1].ID != hashed.SessionID || chain[2].ID != plain.SessionID {
		t.Errorf("chain %+v", chain)
	}
	// Another owner's session and an unknown id are not found, both as previous_session and
	// through the library.
	for _, tc := range []struct{ owner, id string }{{"bob", plain.SessionID}, {"alice", "sess_missing"}} {
		_, err := s.Select(ctx, tc.owner, &routing.Request{Messages: userMsg("x"), LLMProviders: names("a/b"), PreviousSession: tc.id})
		var nf *routing.NotFoundError
		if !errors.As(err, &nf) || nf.Field != "previous_session" || !errors.Is(err, routing.ErrNotFound) {
			t.Errorf("%+v: err = %v, want not found on previous_session", tc, err)
		}
		if _, err := s.Session(ctx, tc.owner, tc.id); !errors.Is(err, routing.ErrNotFound) {
			t.Errorf("%+v: Session err = %v", tc, err)
		}
		if _, err := s.SessionChain(ctx, tc.owner, tc.id); !errors.Is(err, routing.ErrNotFound) {
			t.Errorf("%+v: SessionChain err = %v", tc, err)
		}
	}
	// Validation failures store nothing.
	before, _ := st.List(ctx, store.Sessions, store.ListOptions{})
	s.Select(ctx, "alice", &routing.Request{Messages: userMsg("x")})
	after, _ := st.List(ctx, store.Sessions, store.ListOptions{})
	if len(before) != len(after) {
		t.Errorf("invalid request stored a session")
	}
}

func memstoreNew() *store.Store { return memstore.New() }

// TestTradeoffToleranceSources checks the order in which the tolerance is taken: the
// request's tradeoff_tolerance, else the trained router's learned default, else the
// selector's, and that the rule compares the routers' quality estimates in absolute points.
func TestTradeoffToleranceSources(t *testing.T) {
	fake := &fakeRouters{models: map[string]func(string) []routing.ModelProb{
		"alice/r1": func(string) []routing.ModelProb {
			// big is ranked first; mid is 0.06 below it, small 0.25 below.
			return []routing.ModelProb{{"acme/big", 0.7, 0.90}, {"acme/mid", 0.2, 0.84}, {"acme/small", 0.1, 0.65}}
		},
	}}
	s, _ := newSelector(t, routing.Options{CustomModels: fake})
	cands := func() []routing.Candidate {
		c := names("acme/big", "acme/mid", "acme/small")
		c[0].Price, c[1].Price, c[2].Price = fp(10), fp(3), fp(1)
		return c
	}
	pick := func(tol *float64) string {
		t.Helper()
		return mustSelect(t, s, "alice", &routing.Request{Messages: userMsg("hi"), LLMProviders: cands(),
			PreferenceID: "r1", Tradeoff: "cost", TradeoffTolerance: tol}).LLMLabel
	}
	// Default 0.05: only big qualifies.
	if got := pick(nil); got != "acme/big" {
		t.Errorf("default tolerance 0.05 picked %s", got)
	}
	// The router's learned default 0.1 replaces it: mid (0.06 below) qualifies.
	fake.tolerance = 0.1
	if got := pick(nil); got != "acme/mid" {
		t.Errorf("learned tolerance 0.1 picked %s", got)
	}
	// An operator's Options.Tolerance overrides the router's.
	s2, _ := newSelector(t, routing.Options{CustomModels: fake, Tolerance: 0.3})
	if got := mustSelect(t, s2, "alice", &routing.Request{Messages: userMsg("hi"), LLMProviders: cands(),
		PreferenceID: "r1", Tradeoff: "cost"}).LLMLabel; got != "acme/small" {
		t.Errorf("Options.Tolerance 0.3 picked %s", got)
	}
	// The request wins over all.
	if got := pick(fp(0.3)); got != "acme/small" {
		t.Errorf("request tolerance 0.3 picked %s", got)
	}
	if got := pick(fp(0)); got != "acme/big" {
		t.Errorf("request tolerance 0 picked %s", got)
	}
	// Bad values name the field.
	for _, body := range []string{
		`{"messages":[{"role":"user","content":"hi"}],"models":["a/b"],"tradeoff":"cost","tradeoff_tolerance":1.5}`,
		`{"messages":[{"role":"user","content":"hi"}],"models":["a/b"],"tradeoff":"cost","tradeoff_tolerance":"x"}`,
		`{"messages":[{"role":"user","content":"hi"}],"models":["a/b"],"tradeoff_tolerance":0.1}`,
	} {
		_, err := routing.ParseRequest([]byte(body))
		if !errors.Is(err, routing.ErrInvalid) || !strings.Contains(err.Error(), "tradeoff_tolerance") {
			t.Errorf("%s: err = %v, want a validation error naming tradeoff_tolerance", body, err)
		}
	}
}

// TestSessionsAreBounded reproduces the storage attack: a request with more candidates
// than allowed is refused; a session keeps only the list up to max_model_depth; sessions
// older than the retention are deleted.
func TestSessionsAreBounded(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s, st := newSelector(t, routing.Options{Now: clock, SessionRetention: 24 * time.Hour, Scorer: routing.DefaultScorer{}})
	var many []string
	for i := 0; i <= routing.MaxCandidates; i++ {
		many = append(many, fmt.Sprintf("p/m%d", i))
	}
	_, err := s.Select(context.Background(), "a", &routing.Request{Messages: userMsg("hi"), LLMProviders: names(many...)})
	if !errors.Is(err, routing.ErrInvalid) || !strings.Contains(err.Error(), "at most 256 candidates") {
		t.Fatalf("%d candidates: %v", len(many), err)
	}
	depth := 2
	old := mustSelect(t, s, "a", &routing.Request{Messages: userMsg("hi"), LLMProviders: names(many[:50]...), MaxModelDepth: &depth})
	sess, err := s.Session(context.Background(), "a", old.SessionID)
	if err != nil || len(sess.Ranked) != 2 {
		t.Fatalf("session keeps %d candidates (%v), want max_model_depth 2", len(sess.Ranked), err)
	}
	now = now.Add(20 * time.Hour)
	fresh := mustSelect(t, s, "a", &routing.Request{Messages: userMsg("hi"), LLMProviders: names(many[:3]...)})
	now = now.Add(5 * time.Hour) // old is 25 h old, fresh 5 h
	n, err := s.ExpireSessions(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("ExpireSessions = %d, %v; want 1", n, err)
	}
	if _, err := s.Session(context.Background(), "a", old.SessionID); !errors.Is(err, routing.ErrNotFound) {
		t.Errorf("expired session still found: %v", err)
	}
	if _, err := s.Session(context.Background(), "a", fresh.SessionID); err != nil {
		t.Errorf("fresh session lost: %v", err)
	}
	_ = st
}

// TestZeroCatalogPricesFromTheEmbeddedCatalogue: without Options.Catalog the embedded price
// catalogue prices the candidates, so tradeoff: cost saves money with no wiring.
func TestZeroCatalogPricesFromTheEmbeddedCatalogue(t *testing.T) {
	s, _ := newSelector(t, routing.Options{})
	tol := 0.2
	req := &routing.Request{Messages: userMsg("What is the capital of France?"), Models: names("openai/gpt-4o", "openai/gpt-4o-mini"),
		Tradeoff: "cost", TradeoffTolerance: &tol}
	if resp := mustSelect(t, s, "", req); resp.LLMLabel != "openai/gpt-4o-mini" {
		t.Fatalf("picked %s, want the cheaper openai/gpt-4o-mini", resp.LLMLabel)
	}
}
