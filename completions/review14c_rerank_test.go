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
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// r14Reranker is a providers.Reranker of a library user's own (the interface is public and
// Options.Providers takes any Provider): it answers results as scripted.
type r14Reranker struct {
	results []providers.RerankResult
	usage   providers.RerankUsage
}

func (r *r14Reranker) Name() string { return "acme" }
func (r *r14Reranker) Complete(context.Context, *providers.Request) (*providers.Response, error) {
	return nil, &providers.Error{Provider: "acme", Kind: providers.KindBadRequest, Message: "no chat"}
}
func (r *r14Reranker) Stream(context.Context, *providers.Request) (providers.Stream, error) {
	return nil, &providers.Error{Provider: "acme", Kind: providers.KindBadRequest, Message: "no chat"}
}
func (r *r14Reranker) Rerank(_ context.Context, req *providers.RerankRequest) (*providers.RerankResponse, error) {
	return &providers.RerankResponse{Results: r.results, Usage: r.usage}, nil
}

func r14CustomGateway(t *testing.T, rr *r14Reranker) (*Gateway, *recordingLedger, *recordingObserver) {
	t.Helper()
	ledger, observed := &recordingLedger{}, &recordingObserver{}
	g, err := New(Options{Providers: providers.NewRegistry(rr), Prices: providers.DefaultCatalog(), Ledger: ledger, Observer: observed,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return g, ledger, observed
}

var r14Docs = []RerankDocument{"Mars has two moons.", "Saturn has the most known moons.", "Venus has none."}

// A Reranker's NaN score (Go's adapters cannot decode one; a library user's Reranker can
// return one) reaches the answer, which then cannot be encoded: the server's writeJSON
// fails after the call was charged. checkRanking checks the indexes of such Rerankers but
// not their scores.
func TestReview14cCustomRerankerNaNScoreReachesTheAnswer(t *testing.T) {
	rr := &r14Reranker{results: []providers.RerankResult{{Index: 0, RelevanceScore: 0.4}, {Index: 1, RelevanceScore: math.NaN()}, {Index: 2, RelevanceScore: 0.1}}}
	g, _, _ := r14CustomGateway(t, rr)
	resp, err := g.Rerank(context.Background(), Scope{}, &RerankRequest{Model: "acme/rr-1", Query: "moons", Documents: r14Docs})
	if err != nil {
		return // refused: fine
	}
	if _, err := json.Marshal(resp); err != nil {
		t.Errorf("the answer (results %+v) cannot be encoded: %v", resp.Results, err)
	}
}

// A Reranker that ignores top_n: the gateway passes every result on, more than top_n.
func TestReview14cCustomRerankerMoreResultsThanTopN(t *testing.T) {
	rr := &r14Reranker{results: []providers.RerankResult{{Index: 1, RelevanceScore: 0.9}, {Index: 0, RelevanceScore: 0.5}, {Index: 2, RelevanceScore: 0.1}}}
	g, _, _ := r14CustomGateway(t, rr)
	resp, err := g.Rerank(context.Background(), Scope{}, &RerankRequest{Model: "acme/rr-1", Query: "moons", Documents: r14Docs, TopN: intp(1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 1 {
		t.Errorf("top_n 1 answered with %d results: %+v", len(resp.Results), resp.Results)
	}
}

// A Reranker that names a document twice: Gateway.Rerank charges the call (budget, ledger)
// and then fails with a plain error (not one of its documented errors), and the observer —
// the usage log and the metrics — never hears of the request.
func TestReview14cCustomRerankerBadIndexChargedButNotObserved(t *testing.T) {
	rr := &r14Reranker{results: []providers.RerankResult{{Index: 1, RelevanceScore: 0.9}, {Index: 1, RelevanceScore: 0.5}}, usage: providers.RerankUsage{Tokens: 40}}
	g, ledger, observed := r14CustomGateway(t, rr)
	budget := NewBudget(BudgetLimits{})
	_, err := g.Rerank(context.Background(), Scope{Owner: "k", Budget: budget}, &RerankRequest{Model: "acme/rr-1", Query: "moons", Documents: r14Docs})
	if err == nil {
		t.Fatal("a ranking naming document 1 twice was accepted")
	}
	var af *AllFailedError
	if !errors.As(err, &af) {
		t.Errorf("error %T %v is none of Rerank's documented errors (*AllFailedError for an upstream's failure)", err, err)
	}
	charged := len(ledger.all()) > 0 || budget.Used(context.Background()).Calls > 0
	observed.mu.Lock()
	n := len(observed.got)
	observed.mu.Unlock()
	if charged && n == 0 {
		t.Errorf("the call was charged (ledger %d entries, budget %+v) but no request was observed (usage log, metrics)", len(ledger.all()), budget.Used(context.Background()))
	}
}

// An upstream that answers 200 with a ranking the adapter refuses (here: fewer results
// than top_n, search units billed) is retried on the same model — each retry a call Cohere
// bills — and none of what was billed reaches the budget or the ledger.
func TestReview14cMalformedRankingBilledUpstreamButNotCharged(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		mu.Lock()
		calls++
		mu.Unlock()
		fmt.Fprint(w, `{"id":"co-1","results":[{"index":0,"relevance_score":0.9}],"meta":{"billed_units":{"search_units":1}}}`)
	}))
	t.Cleanup(up.Close)
	env := map[string]string{"COHERE_API_KEY": "co", "COHERE_BASE_URL": up.URL}
	ledger := &recordingLedger{}
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}), Prices: providers.DefaultCatalog(),
		Ledger: ledger, Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	budget := NewBudget(BudgetLimits{})
	_, err = g.Rerank(context.Background(), Scope{Owner: "k", Budget: budget}, &RerankRequest{Model: "cohere/rerank-v3.5", Query: "moons", Documents: r14Docs, TopN: intp(2)})
	if err == nil {
		t.Fatal("a ranking with 1 result for top_n 2 was accepted")
	}
	mu.Lock()
	n := calls
	mu.Unlock()
	if used := budget.Used(context.Background()); used.CostUSD == 0 || len(ledger.all()) == 0 {
		t.Errorf("cohere answered (and billed 1 search unit) %d times; budget %+v, ledger %d entries: none of it charged", n, used, len(ledger.all()))
	}
}

// A Cohere-shaped self-hosted server (a providers-config entry with "rerank": "cohere",
// vLLM's or Infinity's route) bills nothing and reports tokens: the answer's
// meta.billed_units still says a search unit was billed — the gateway's own estimate —
// while the README and billedUnits say a local count is no bill (estimated tokens are left
// out of billed_units).
func TestReview14cSelfHostedRerankerEstimatedSearchUnitsShownAsBilled(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		fmt.Fprint(w, `{"id":"rerank-1","model":"BAAI/bge-reranker-v2-m3","results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.2},{"index":2,"relevance_score":0.1}],"usage":{"total_tokens":31}}`)
	}))
	t.Cleanup(up.Close)
	fc, err := providers.ParseConfig([]byte(`{"providers":[{"name":"local","format":"openai","base_url":"` + up.URL + `","rerank":"cohere","key_optional":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	reg := providers.NewRegistry()
	if err := reg.Configure(fc, func(string) string { return "" }, providers.Options{}); err != nil {
		t.Fatal(err)
	}
	g, err := New(Options{Providers: reg, Prices: providers.DefaultCatalog(), Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := g.Rerank(context.Background(), Scope{}, &RerankRequest{Model: "local/BAAI/bge-reranker-v2-m3", Query: "moons", Documents: r14Docs})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Meta.BilledUnits.SearchUnits != 0 {
		t.Errorf("billed_units %+v: search units the upstream never billed (estimated %v)", resp.Meta.BilledUnits, resp.Usage.Estimated)
	}
}
