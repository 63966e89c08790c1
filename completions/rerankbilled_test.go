package completions

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestRerankRefusedButBilledIsRecorded: a ranking the gateway refuses (Cohere answered one
// result where top_n asked two) after the upstream billed it (billed_units: one search
// unit) is charged to the budget and the ledger, and the record says so too: its failed
// attempt carries that usage and its cost, and a request that then fails carries it as
// its usage; one a group's next member answered keeps it on the refused attempt.
func TestRerankRefusedButBilledIsRecorded(t *testing.T) {
	cohere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"co-1","results":[{"index":0,"relevance_score":0.9}],"meta":{"billed_units":{"search_units":1}}}`)
	}))
	t.Cleanup(cohere.Close)
	jina := newFakeRerankAPI(t, false)
	env := map[string]string{"COHERE_API_KEY": "co-key", "COHERE_BASE_URL": cohere.URL, "JINA_API_KEY": "jina-key", "JINA_BASE_URL": jina.srv.URL + "/v1"}
	ledger, observed := &recordingLedger{}, &recordingObserver{}
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices: providers.DefaultCatalog(), Ledger: ledger, Observer: observed,
		ModelGroups: map[string]ModelGroup{"rerank": {Models: []string{"cohere/rerank-v3.5", "jina/jina-reranker-v2-base-multilingual"}}},
		Sleep:       func(context.Context, time.Duration) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	const searchUnit = 0.002 // the catalogue's rerank-v3.5 price of a search
	budget := NewBudget(BudgetLimits{})
	req := func(model string) *RerankRequest {
		return &RerankRequest{Model: model, Query: "most moons", Documents: moonDocs, TopN: intp(2)}
	}
	if _, err := g.Rerank(context.Background(), Scope{Owner: "k1", Budget: budget}, req("cohere/rerank-v3.5")); err == nil {
		t.Fatal("a ranking of one result where two were asked was taken")
	}
	if used := budget.Used(context.Background()); math.Abs(used.CostUSD-searchUnit) > 1e-12 {
		t.Errorf("budget charged %v, want the search unit billed (%v)", used.CostUSD, searchUnit)
	}
	if e := ledger.all(); len(e) != 1 || math.Abs(e[0].Cost.Spent()-searchUnit) > 1e-12 || e[0].Complete {
		t.Errorf("ledger %+v, want the search unit billed, as a part", e)
	}
	r := observed.take(t)
	if r.Outcome != RequestFailed || len(r.Attempts) != 1 {
		t.Fatalf("observed %s with %d attempts, want a failure of one", r.Outcome, len(r.Attempts))
	}
	if a := r.Attempts[0]; a.Usage == nil || math.Abs(a.Usage.Costs.Spent()-searchUnit) > 1e-12 {
		t.Errorf("the refused attempt carries %+v (estimated %v), want the search unit billed", a.Usage, a.Estimated)
	}
	if math.Abs(r.Usage.Costs.Spent()-searchUnit) > 1e-12 {
		t.Errorf("the failed request's usage %+v (estimated %v), want what its refused attempt was billed", r.Usage, r.UsageEstimated)
	}

	resp, err := g.Rerank(context.Background(), Scope{Owner: "k1"}, req("rerank"))
	if err != nil || resp.Model != "jina/jina-reranker-v2-base-multilingual" {
		t.Fatalf("the group's next member: %+v %v", resp, err)
	}
	r = observed.take(t)
	if len(r.Attempts) != 2 || r.Attempts[0].Outcome != OutcomeError || r.Attempts[0].Usage == nil ||
		math.Abs(r.Attempts[0].Usage.Costs.Spent()-searchUnit) > 1e-12 {
		t.Errorf("attempts %+v, want cohere's refused attempt to carry the search unit it billed", r.Attempts)
	}
}
