package completions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// fakeRerankAPI is a scripted rerank endpoint in Cohere's v2 shape (cohere: meta.billed_units
// with one search unit) or Jina's (usage.total_tokens, one token a word of the query and the
// documents): a document's score is its length over 1,000; fail holds the statuses of the
// next calls (a 429 without Retry-After), then it answers.
type fakeRerankAPI struct {
	srv    *httptest.Server
	cohere bool
	mu     sync.Mutex
	fail   []int
	calls  int
	last   map[string]any
}

func newFakeRerankAPI(t *testing.T, cohere bool) *fakeRerankAPI {
	u := &fakeRerankAPI{cohere: cohere}
	path := "/v1/rerank"
	if cohere {
		path = "/v2/rerank"
	}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.calls++
		if r.URL.Path != path {
			w.WriteHeader(404)
			io.WriteString(w, `{"message":"no such route"}`)
			return
		}
		if len(u.fail) > 0 {
			status := u.fail[0]
			u.fail = u.fail[1:]
			w.WriteHeader(status)
			io.WriteString(w, `{"message":"scripted failure"}`)
			return
		}
		var req struct {
			Query     string   `json:"query"`
			Documents []string `json:"documents"`
			TopN      int      `json:"top_n"`
		}
		raw, _ := io.ReadAll(r.Body)
		json.Unmarshal(raw, &req)
		u.last = nil
		json.Unmarshal(raw, &u.last)
		idx := make([]int, len(req.Documents))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return len(req.Documents[b]) - len(req.Documents[a]) })
		if req.TopN > 0 {
			idx = idx[:min(req.TopN, len(idx))]
		}
		var results []string
		tokens := len(strings.Fields(req.Query)) * len(req.Documents)
		for _, d := range req.Documents {
			tokens += len(strings.Fields(d))
		}
		for _, i := range idx {
			results = append(results, fmt.Sprintf(`{"index":%d,"relevance_score":%g}`, i, float64(len(req.Documents[i]))/1000))
		}
		if u.cohere {
			fmt.Fprintf(w, `{"id":"co-1","results":[%s],"meta":{"api_version":{"version":"2"},"billed_units":{"search_units":1}}}`, strings.Join(results, ","))
			return
		}
		fmt.Fprintf(w, `{"model":"jina-reranker-v2-base-multilingual","usage":{"total_tokens":%d},"results":[%s]}`, tokens, strings.Join(results, ","))
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *fakeRerankAPI) script(statuses ...int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.fail, u.calls = statuses, 0
}

type rerankHarness struct {
	g              *Gateway
	cohere, jina   *fakeRerankAPI
	ledger         *recordingLedger
	observed       *recordingObserver
	openaiRequests int
}

// newRerankHarness is a gateway with cohere and jina (scripted), openai and anthropic
// (chat, never called), and the model group "rerank" of cohere's then jina's model.
func newRerankHarness(t *testing.T, cache CacheDriver) *rerankHarness {
	h := &rerankHarness{cohere: newFakeRerankAPI(t, true), jina: newFakeRerankAPI(t, false), ledger: &recordingLedger{}, observed: &recordingObserver{}}
	openai := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.openaiRequests++; w.WriteHeader(500) }))
	t.Cleanup(openai.Close)
	env := map[string]string{"COHERE_API_KEY": "co-key", "COHERE_BASE_URL": h.cohere.srv.URL, "JINA_API_KEY": "jina-key", "JINA_BASE_URL": h.jina.srv.URL + "/v1",
		"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": openai.URL, "ANTHROPIC_API_KEY": "ak"}
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices: providers.DefaultCatalog(), Ledger: h.ledger, Observer: h.observed, Cache: CacheOptions{Driver: cache},
		ModelGroups: map[string]ModelGroup{"rerank": {Models: []string{"cohere/rerank-v3.5", "jina/jina-reranker-v2-base-multilingual"}}},
		Sleep:       func(context.Context, time.Duration) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	h.g = g
	return h
}

var moonDocs = []RerankDocument{"Mars has two moons.", "Saturn has the most known moons of any planet.", "Venus has none.", "Jupiter has ninety-five moons."}

// TestRerankAnswersWithUsageCostsAndRecords: a bare Cohere model name reaches cohere; the
// results come back most relevant first, at most top_n, with their documents when asked;
// the search unit Cohere billed is priced from the catalogue ($0.002 a query), and the call
// is billed to the budget, written to the ledger and observed as a rerank request.
func TestRerankAnswersWithUsageCostsAndRecords(t *testing.T) {
	h := newRerankHarness(t, nil)
	budget := NewBudget(BudgetLimits{})
	resp, err := h.g.Rerank(context.Background(), Scope{Owner: "k1", Budget: budget},
		&RerankRequest{Model: "rerank-v3.5", Query: "most moons", Documents: moonDocs, TopN: intp(2), ReturnDocuments: true, Tags: []string{"rag"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Model != "cohere/rerank-v3.5" || resp.ID != "co-1" || len(resp.Results) != 2 || resp.Results[0].Index != 1 || resp.Results[1].Index != 3 ||
		resp.Results[0].RelevanceScore != 0.046 || resp.Results[0].Document == nil || resp.Results[0].Document.Text != string(moonDocs[1]) {
		t.Fatalf("response %+v", resp)
	}
	if m := resp.Meta.BilledUnits; m.SearchUnits != 1 || m.TotalTokens != 0 {
		t.Errorf("billed units %+v", m)
	}
	if u := resp.Usage; u.TotalTokens <= 0 || !u.Estimated || u.Costs == nil || !u.Costs.PriceKnown || math.Abs(u.Costs.TotalTokensCost-0.002) > 1e-12 {
		t.Errorf("usage %+v costs %+v", u, u.Costs)
	}
	if h.cohere.last["model"] != "rerank-v3.5" || h.cohere.last["top_n"] != float64(2) || h.cohere.last["return_documents"] != nil || h.cohere.last["query"] != "most moons" {
		t.Errorf("sent %v", h.cohere.last)
	}
	if used := budget.Used(context.Background()); used.Calls != 1 || used.Tokens != int64(resp.Usage.TotalTokens) || math.Abs(used.CostUSD-0.002) > 1e-12 {
		t.Errorf("budget %+v", used)
	}
	if e := h.ledger.all(); len(e) != 1 || e[0].Model != "cohere/rerank-v3.5" || e[0].Owner != "k1" || !e[0].Estimated || !e[0].Complete || e[0].Tags[0] != "rag" {
		t.Errorf("ledger %+v", e)
	}
	r := h.observed.take(t)
	if r.Operation != OperationRerank || r.Outcome != RequestOK || r.Model != "cohere/rerank-v3.5" || r.Provider != "cohere" || len(r.Attempts) != 1 ||
		math.Abs(r.Usage.Costs.TotalTokensCost-0.002) > 1e-12 {
		t.Errorf("observed %+v", r)
	}
	// Without top_n every document is ranked; Jina's tokens price the call by the token.
	resp, err = h.g.Rerank(context.Background(), Scope{}, &RerankRequest{Model: "jina/jina-reranker-v2-base-multilingual", Query: "most moons", Documents: moonDocs})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 4 || resp.Results[3].Index != 2 || resp.Results[0].Document != nil || resp.Meta.BilledUnits.TotalTokens != 28 || resp.Usage.TotalTokens != 28 ||
		resp.Usage.Estimated || math.Abs(resp.Usage.Costs.TotalTokensCost-28*1.8e-8) > 1e-15 || h.jina.last["return_documents"] != false {
		t.Errorf("jina: %+v %+v (sent %v)", resp, resp.Usage.Costs, h.jina.last)
	}
}

// TestRerankFallsBackAndRetries: a model that fails is retried (a 5xx); in a model group,
// the next model answers after a 429 or a run of 5xx (the attempts say so, and the answer
// is priced as the model that gave it); a model alone that keeps failing fails the request.
func TestRerankFallsBackAndRetries(t *testing.T) {
	h := newRerankHarness(t, nil)
	req := func(model string) *RerankRequest {
		return &RerankRequest{Model: model, Query: "most moons", Documents: moonDocs, TopN: intp(1)}
	}
	h.cohere.script(503)
	resp, err := h.g.Rerank(context.Background(), Scope{}, req("cohere/rerank-v3.5"))
	if err != nil || h.cohere.calls != 2 || resp.Model != "cohere/rerank-v3.5" {
		t.Fatalf("retry: %+v %v after %d calls", resp, err, h.cohere.calls)
	}
	for _, statuses := range [][]int{{429}, {500, 502, 503}} {
		h.cohere.script(statuses...)
		h.jina.script()
		resp, err = h.g.Rerank(context.Background(), Scope{}, req("rerank"))
		if err != nil || resp.Model != "jina/jina-reranker-v2-base-multilingual" || h.cohere.calls != len(statuses) || h.jina.calls != 1 {
			t.Fatalf("group after %v: %+v %v (cohere called %d times)", statuses, resp, err, h.cohere.calls)
		}
		if resp.Usage.Costs == nil || math.Abs(resp.Usage.Costs.TotalTokensCost-float64(resp.Usage.TotalTokens)*1.8e-8) > 1e-15 || resp.Results[0].Index != 1 {
			t.Errorf("group after %v: %+v %+v", statuses, resp.Results, resp.Usage.Costs)
		}
	}
	h.observed.got = nil
	h.cohere.script(429)
	h.g.Rerank(context.Background(), Scope{}, req("rerank"))
	if r := h.observed.take(t); len(r.Attempts) != 2 || r.Attempts[0].Kind != "rate_limited" || r.Attempts[1].Outcome != OutcomeOK {
		t.Errorf("attempts %+v", r.Attempts)
	}
	h.cohere.script(500, 500, 500, 500, 500, 500)
	h.jina.script()
	_, err = h.g.Rerank(context.Background(), Scope{}, req("cohere/rerank-v3.5"))
	var af *AllFailedError
	if !errors.As(err, &af) || h.jina.calls != 0 {
		t.Fatalf("a single model failing: %v (jina called %d times)", err, h.jina.calls)
	}
	h.observed.got = nil
	h.cohere.script(500, 500, 500, 500, 500, 500)
	h.g.Rerank(context.Background(), Scope{}, req("cohere/rerank-v3.5"))
	if r := h.observed.take(t); r.Operation != OperationRerank || r.Outcome != RequestFailed || r.Requested != "cohere/rerank-v3.5" {
		t.Errorf("failure observed as %+v", r)
	}
}

// TestRerankRefusesBadRequests: each malformed request is a validation error naming the
// field, and nothing is sent upstream; a key held to other models is refused.
func TestRerankRefusesBadRequests(t *testing.T) {
	h := newRerankHarness(t, nil)
	many := make([]RerankDocument, MaxRerankDocuments+1)
	for i := range many {
		many[i] = "x"
	}
	ok := func(r RerankRequest) RerankRequest {
		if r.Model == "" {
			r.Model = "cohere/rerank-v3.5"
		}
		if r.Query == "" {
			r.Query = "q"
		}
		if r.Documents == nil {
			r.Documents = []RerankDocument{"a"}
		}
		return r
	}
	for _, c := range []struct {
		req   RerankRequest
		field string
		msg   string
	}{
		{RerankRequest{Query: "q", Documents: moonDocs}, "model", "required"},
		{RerankRequest{Model: "cohere/rerank-v3.5", Documents: moonDocs}, "query", "required"},
		{RerankRequest{Model: "cohere/rerank-v3.5", Query: " \n", Documents: moonDocs}, "query", "required"},
		{RerankRequest{Model: "cohere/rerank-v3.5", Query: "q"}, "documents", "required"},
		{ok(RerankRequest{Documents: []RerankDocument{}}), "documents", "must not be empty"},
		{ok(RerankRequest{Documents: many}), "documents", "at most 1000 documents, got 1001"},
		{ok(RerankRequest{Documents: []RerankDocument{"a", " "}}), "documents[1]", "must not be empty"},
		{ok(RerankRequest{TopN: intp(0)}), "top_n", "at least 1"},
		{ok(RerankRequest{MaxTokensPerDoc: intp(-3)}), "max_tokens_per_doc", "at least 1"},
		{ok(RerankRequest{Tags: []string{"bad tag"}}), "tags", "tag 0"},
		{ok(RerankRequest{Model: "openai/gpt-4o"}), "model", "no rerank API"},
		{ok(RerankRequest{Model: "claude-sonnet-4-5"}), "model", "no rerank API"},
		{ok(RerankRequest{Model: "acme-rerank-v9"}), "model", "does not exist"},
		{ok(RerankRequest{Model: "nope/x"}), "model", "unknown provider"},
		{ok(RerankRequest{Model: "rerank"}), "", ""}, // the group: valid
	} {
		_, err := h.g.Rerank(context.Background(), Scope{}, &c.req)
		if c.field == "" {
			if err != nil {
				t.Errorf("%+v: %v", c.req.Model, err)
			}
			continue
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field || !strings.Contains(ve.Error(), c.msg) {
			t.Errorf("%s %q: %v, want %s: …%s…", c.req.Model, c.req.Query, err, c.field, c.msg)
		}
	}
	if _, err := h.g.Rerank(context.Background(), Scope{}, &RerankRequest{Model: "acme-rerank-v9", Query: "q", Documents: moonDocs}); !errors.Is(err, ErrUnknownModel) {
		t.Errorf("an unknown bare name: %v", err)
	}
	if h.cohere.calls != 1 || h.openaiRequests != 0 {
		t.Errorf("%d calls to cohere, %d to openai (only the group's was expected)", h.cohere.calls, h.openaiRequests)
	}
	h.cohere.script()
	// A key held to jina's model may not call cohere's, by either name, nor the group.
	b := NewBudget(BudgetLimits{AllowedModels: []string{"jina-reranker-v2-base-multilingual"}})
	for _, m := range []string{"cohere/rerank-v3.5", "rerank-v3.5", "rerank"} {
		if _, err := h.g.Rerank(context.Background(), Scope{Budget: b}, &RerankRequest{Model: m, Query: "q", Documents: moonDocs}); !errors.Is(err, ErrModelNotAllowed) {
			t.Errorf("%s outside the allow-list: %v", m, err)
		}
	}
	if _, err := h.g.Rerank(context.Background(), Scope{Budget: b}, &RerankRequest{Model: "jina/jina-reranker-v2-base-multilingual", Query: "q", Documents: moonDocs}); err != nil {
		t.Errorf("the allowed model: %v", err)
	}
	if h.cohere.calls != 0 || b.Used(context.Background()).Calls != 1 {
		t.Errorf("cohere called %d times, budget %+v", h.cohere.calls, b.Used(context.Background()))
	}
	// A spent budget is refused before any call.
	spent := NewBudget(BudgetLimits{MaxCalls: 1})
	h.g.Rerank(context.Background(), Scope{Budget: spent}, &RerankRequest{Model: "cohere/rerank-v3.5", Query: "q", Documents: moonDocs})
	if _, err := h.g.Rerank(context.Background(), Scope{Budget: spent}, &RerankRequest{Model: "cohere/rerank-v3.5", Query: "q", Documents: moonDocs}); !errors.Is(err, ErrBudgetExceeded) || h.cohere.calls != 1 {
		t.Errorf("spent budget: %v after %d calls", err, h.cohere.calls)
	}
}

// TestRerankWireForms: documents are strings or objects (with a text, or the fields
// rank_fields names), anything else is a type error (named "documents"); the answer is Cohere's shape with the
// gateway's extensions.
func TestRerankWireForms(t *testing.T) {
	var req RerankRequest
	if err := json.Unmarshal([]byte(`{"model":"m","query":"q","documents":["a",{"text":"b","title":"t"}],"top_n":1,"return_documents":true,"rank_fields":["text"]}`), &req); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(req.Documents) != "[a b]" || *req.TopN != 1 || !req.ReturnDocuments {
		t.Errorf("%+v", req)
	}
	for _, bad := range []string{`[1]`, `[null, ["a"]]`, `"a"`} {
		var r RerankRequest
		err := json.Unmarshal([]byte(`{"documents":`+bad+`}`), &r)
		var ute *json.UnmarshalTypeError
		if !errors.As(err, &ute) || ute.Field != "documents" {
			t.Errorf("%s: %v", bad, err)
		}
	}
	// An object without a text string decodes (rank_fields may name its fields) and is
	// refused by validation, naming the document.
	for _, bad := range []string{`[{"title":"x"}]`, `[{"text":3}]`} {
		var r RerankRequest
		if err := json.Unmarshal([]byte(`{"model":"m","query":"q","documents":`+bad+`}`), &r); err != nil {
			t.Fatalf("%s: %v", bad, err)
		}
		_, err := r.validate()
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "documents[0]" {
			t.Errorf("%s: %v", bad, err)
		}
	}
	costs := Costs{InputTokensCost: 0.002, TotalTokensCost: 0.002, PriceKnown: true}
	b, _ := json.Marshal(RerankResponse{ID: "x", Model: "cohere/rerank-v3.5", Results: []RerankResult{{Index: 2, RelevanceScore: 0.5, Document: &RerankResultDocument{Text: "t"}}},
		Meta: RerankMeta{BilledUnits: RerankBilledUnits{SearchUnits: 1}}, Usage: RerankUsage{TotalTokens: 7, Estimated: true, Costs: &costs}})
	want := `{"id":"x","results":[{"index":2,"relevance_score":0.5,"document":{"text":"t"}}],"meta":{"billed_units":{"search_units":1}},"model":"cohere/rerank-v3.5",` +
		`"usage":{"total_tokens":7,"estimated":true,"costs":{"input_tokens_cost":0.002,"output_tokens_cost":0,"total_tokens_cost":0.002,"price_known":true}}}`
	if string(b) != want {
		t.Errorf("answer\n%s\nwant\n%s", b, want)
	}
}

// TestRerankCache: with the response cache on, the same request of the same key is
// answered from it (no call, nothing charged, what it saved said); another top_n is
// another ranking, while return_documents is not (the documents come from the request).
func TestRerankCache(t *testing.T) {
	h := newRerankHarness(t, &MemoryCache{})
	req := func(topN int, docs bool) *RerankRequest {
		return &RerankRequest{Model: "rerank-v3.5", Query: "most moons", Documents: moonDocs, TopN: intp(topN), ReturnDocuments: docs}
	}
	first, err := h.g.Rerank(context.Background(), Scope{Owner: "k"}, req(2, false))
	if err != nil || first.Cache == nil || first.Cache.Result != CacheMiss || first.Cache.Key == "" {
		t.Fatalf("%+v %v", first, err)
	}
	h.g.cacheWrites.wg.Wait()
	budget := NewBudget(BudgetLimits{})
	hit, err := h.g.Rerank(context.Background(), Scope{Owner: "k", Budget: budget}, req(2, true))
	if err != nil {
		t.Fatal(err)
	}
	if hit.Cache.Result != CacheHit || math.Abs(hit.Cache.SavedUSD-0.002) > 1e-12 || hit.Usage.Costs.TotalTokensCost != 0 || !hit.Usage.Costs.PriceKnown ||
		hit.Model != "cohere/rerank-v3.5" || hit.Meta.BilledUnits != (RerankBilledUnits{}) || hit.Results[0].Index != 1 || hit.Results[0].Document.Text != string(moonDocs[1]) ||
		hit.Usage.TotalTokens != first.Usage.TotalTokens || h.cohere.calls != 1 || budget.Used(context.Background()).Calls != 0 {
		t.Errorf("hit %+v %+v after %d calls", hit, hit.Usage.Costs, h.cohere.calls)
	}
	if other, _ := h.g.Rerank(context.Background(), Scope{Owner: "k"}, req(3, false)); other.Cache.Result != CacheMiss || h.cohere.calls != 2 {
		t.Errorf("another top_n: %+v", other.Cache)
	}
	if other, _ := h.g.Rerank(context.Background(), Scope{Owner: "another key"}, req(2, false)); other.Cache.Result != CacheMiss {
		t.Errorf("another key: %+v", other.Cache)
	}
	observed := h.observed.got[len(h.observed.got)-3]
	if observed.Cache != CacheHit || observed.Operation != OperationRerank || math.Abs(observed.SavedUSD-0.002) > 1e-12 {
		t.Errorf("observed hit %+v", observed)
	}
}

// TestRerankModelsAreKnown: the configured providers' catalogued rerank models are listed
// and known (the metrics give them their own label) and their bare names resolve; a rerank
// model is no chat model, and a chat request to a rerank-only provider is refused saying
// where it serves; cohere's catalogued embedding models are not served here.
func TestRerankModelsAreKnown(t *testing.T) {
	h := newRerankHarness(t, nil)
	if !h.g.HasRerankModel("cohere/rerank-v3.5") || !h.g.HasRerankModel("jina/jina-reranker-v2-base-multilingual") || h.g.HasRerankModel("voyage/rerank-2.5") ||
		h.g.HasRerankModel("openai/gpt-4o") {
		t.Errorf("rerank models %v", h.g.RerankModels())
	}
	if id, ok := h.g.ResolveRerankModel("rerank-english-v3.0"); !ok || id != "cohere/rerank-english-v3.0" {
		t.Errorf("resolve: %q %v", id, ok)
	}
	if id, ok := h.g.ResolveRerankModel("rerank-v4.0-pro"); !ok || id != "cohere/rerank-v4.0-pro" {
		t.Errorf("resolve a Cohere model the catalogue lacks: %q %v", id, ok)
	}
	if _, ok := h.g.ResolveModel("cohere/rerank-v3.5"); ok {
		t.Error("a rerank model taken as a chat model")
	}
	_, err := h.g.Complete(context.Background(), Scope{}, userReq("hi", "cohere/command-r"))
	var ve *ValidationError
	if !errors.As(err, &ve) || !strings.Contains(ve.Error(), `provider "cohere" serves rerank (POST /v1/rerank) only`) {
		t.Errorf("chat to cohere: %v", err)
	}
	_, err = h.g.Complete(context.Background(), Scope{}, userReq("hi", "jina/jina-reranker-v2-base-multilingual"))
	if !errors.As(err, &ve) || !strings.Contains(ve.Error(), "serves embeddings (POST /v1/embeddings) and rerank (POST /v1/rerank) only") {
		t.Errorf("chat to jina: %v", err)
	}
	if slices.ContainsFunc(h.g.EmbeddingModels(), func(m string) bool { return strings.HasPrefix(m, "cohere/") }) {
		t.Errorf("cohere's embedding models listed: %v", h.g.EmbeddingModels())
	}
	if _, err := h.g.Embed(context.Background(), Scope{}, &EmbeddingsRequest{Model: "cohere/embed-english-v3.0", Input: EmbeddingInput{Texts: []string{"a"}}}); !errors.As(err, &ve) || !strings.Contains(ve.Error(), "no embeddings API") {
		t.Errorf("embeddings from cohere: %v", err)
	}
	b := NewBudget(BudgetLimits{AllowedModels: []string{"rerank-v3.5"}})
	if !h.g.Allows(Scope{Budget: b}, "cohere/rerank-v3.5") || h.g.Allows(Scope{Budget: b}, "jina/jina-reranker-v2-base-multilingual") {
		t.Error("a key allowed a bare rerank name")
	}
}

// TestRerankFallbacksPassOverMaxTokensPerDoc: a request with max_tokens_per_doc whose
// model fails goes on to the fallbacks that take the option (Cohere's rerank API), passing
// over those whose rerank API has none (Jina's) without an attempt, as other fallbacks
// that cannot take a request are; without the option the same fallback is tried.
func TestRerankFallbacksPassOverMaxTokensPerDoc(t *testing.T) {
	h := newRerankHarness(t, nil)
	scope := Scope{Owner: "k1", Fallbacks: map[string][]string{"cohere/rerank-v3.5": {"jina/jina-reranker-v2-base-multilingual", "cohere/rerank-english-v3.0"}}}
	req := &RerankRequest{Model: "cohere/rerank-v3.5", Query: "most moons", Documents: moonDocs, TopN: intp(1), MaxTokensPerDoc: intp(256)}
	h.cohere.script(401)
	h.jina.script()
	resp, err := h.g.Rerank(context.Background(), scope, req)
	if err != nil || resp.Model != "cohere/rerank-english-v3.0" || h.jina.calls != 0 || h.cohere.last["max_tokens_per_doc"] != float64(256) {
		t.Fatalf("max_tokens_per_doc: %+v %v (jina called %d times, cohere sent %v)", resp, err, h.jina.calls, h.cohere.last)
	}
	r := h.observed.take(t)
	if len(r.Attempts) != 2 || r.Attempts[0].Model != "cohere/rerank-v3.5" || r.Attempts[1].Model != "cohere/rerank-english-v3.0" {
		t.Errorf("attempts %+v: want the model asked, then the Cohere fallback (Jina's passed over)", r.Attempts)
	}
	// Without max_tokens_per_doc Jina's model is the first fallback.
	req.MaxTokensPerDoc = nil
	h.cohere.script(401)
	if resp, err = h.g.Rerank(context.Background(), scope, req); err != nil || resp.Model != "jina/jina-reranker-v2-base-multilingual" || h.jina.calls != 1 {
		t.Fatalf("without max_tokens_per_doc: %+v %v (jina called %d times)", resp, err, h.jina.calls)
	}
}
