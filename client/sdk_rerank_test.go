package client_test

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

	"github.com/switchyard-ai/switchyard/client"
)

// rerankUpstream is a scripted Cohere (POST /v2/rerank) and Voyage AI (POST /v1/rerank,
// top_k and data) at once: a document's score is its length over 1,000, most relevant
// first; Voyage reports a token a word. It keeps the last body of each route.
type rerankUpstream struct {
	srv  *httptest.Server
	mu   sync.Mutex
	last map[string]map[string]any
}

func newRerankUpstream(t *testing.T) *rerankUpstream {
	u := &rerankUpstream{last: map[string]map[string]any{}}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		json.Unmarshal(raw, &body)
		u.mu.Lock()
		u.last[r.URL.Path] = body
		u.mu.Unlock()
		var req struct {
			Query     string   `json:"query"`
			Documents []string `json:"documents"`
			TopN      int      `json:"top_n"`
			TopK      int      `json:"top_k"`
		}
		json.Unmarshal(raw, &req)
		order := make([]int, len(req.Documents))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return len(req.Documents[b]) - len(req.Documents[a]) })
		if n := max(req.TopN, req.TopK); n > 0 {
			order = order[:n]
		}
		var results []string
		for _, i := range order {
			results = append(results, fmt.Sprintf(`{"index":%d,"relevance_score":%g}`, i, float64(len(req.Documents[i]))/1000))
		}
		switch r.URL.Path {
		case "/v2/rerank":
			fmt.Fprintf(w, `{"id":"c1","results":[%s],"meta":{"api_version":{"version":"2"},"billed_units":{"search_units":1}}}`, strings.Join(results, ","))
		case "/v1/rerank":
			tokens := len(strings.Fields(req.Query)) * len(req.Documents)
			for _, d := range req.Documents {
				tokens += len(strings.Fields(d))
			}
			fmt.Fprintf(w, `{"object":"list","data":[%s],"model":"rerank-2.5","usage":{"total_tokens":%d}}`, strings.Join(results, ","), tokens)
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *rerankUpstream) env() map[string]string {
	return map[string]string{"CO_API_KEY": "co-test", "COHERE_BASE_URL": u.srv.URL, "VOYAGE_API_KEY": "pa-test", "VOYAGE_BASE_URL": u.srv.URL + "/v1",
		"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": u.srv.URL + "/v1"}
}

var passages = []string{"Mars has two moons.", "Saturn has the most known moons of any planet.", "Venus has none.", "Jupiter has ninety-five moons."}

// TestRerankWithTheClient: the Go client's Rerank against a real server: a bare Cohere name
// reaches Cohere's /v2/rerank, Voyage's model its /v1/rerank with top_k; the results come
// back most relevant first with their documents and their cost; refusals are *client.Error
// values naming the field.
func TestRerankWithTheClient(t *testing.T) {
	up := newRerankUpstream(t)
	c, _ := realServerURL(t, envGateway(t, up.env()))
	ctx := context.Background()
	res, err := c.Rerank(ctx, &client.RerankRequest{Model: "rerank-v3.5", Query: "most moons", Documents: passages, TopN: 2, ReturnDocuments: true})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Indexes()) != "[1 3]" || res.Results[0].Document == nil || res.Results[0].Document.Text != passages[1] || res.Model != "cohere/rerank-v3.5" ||
		res.Meta.BilledUnits.SearchUnits != 1 || res.Usage.Costs == nil || math.Abs(res.Usage.Costs.TotalTokensCost-0.002) > 1e-12 {
		t.Errorf("cohere: %+v", res)
	}
	if sent := up.last["/v2/rerank"]; sent["model"] != "rerank-v3.5" || sent["top_n"] != float64(2) || sent["return_documents"] != nil {
		t.Errorf("cohere was sent %v", sent)
	}
	res, err = c.Rerank(ctx, &client.RerankRequest{Model: "voyage/rerank-2.5", Query: "most moons", Documents: passages, TopN: 3})
	if err != nil {
		t.Fatal(err)
	}
	tokens := 2 * len(passages) // the query's two words for each passage, then the passages'
	for _, p := range passages {
		tokens += len(strings.Fields(p))
	}
	if fmt.Sprint(res.Indexes()) != "[1 3 0]" || res.Results[0].Document != nil || res.Model != "voyage/rerank-2.5" || res.Usage.TotalTokens != tokens ||
		res.Meta.BilledUnits.TotalTokens != tokens || math.Abs(res.Usage.Costs.TotalTokensCost-float64(tokens)*5e-8) > 1e-15 {
		t.Errorf("voyage: %+v", res)
	}
	if sent := up.last["/v1/rerank"]; sent["top_k"] != float64(3) || sent["top_n"] != nil || sent["return_documents"] != false {
		t.Errorf("voyage was sent %v", sent)
	}
	for _, tc := range []struct {
		req           client.RerankRequest
		status        int
		param, saying string
	}{
		{client.RerankRequest{Model: "rerank-v3.5", Query: "q", Documents: []string{}}, 400, "documents", "empty"},
		{client.RerankRequest{Model: "rerank-v3.5", Documents: passages}, 400, "query", "required"},
		{client.RerankRequest{Model: "openai/gpt-4o", Query: "q", Documents: passages}, 400, "model", "no rerank API"},
		{client.RerankRequest{Model: "acme-rerank", Query: "q", Documents: passages}, 404, "model", "acme-rerank"},
		{client.RerankRequest{Model: "voyage/rerank-2.5", Query: "q", Documents: passages, MaxTokensPerDoc: 100}, 400, "max_tokens_per_doc", "voyage"},
	} {
		_, err := c.Rerank(ctx, &tc.req)
		var apiErr *client.Error
		if !errors.As(err, &apiErr) || apiErr.Status != tc.status || apiErr.Param != tc.param || !strings.Contains(apiErr.Message, tc.saying) {
			t.Errorf("%+v: %v, want %d %q saying %q", tc.req, err, tc.status, tc.param, tc.saying)
		}
	}
}

// TestRerankOverPlainHTTP: the request as LiteLLM's proxy and Cohere's SDKs send it —
// documents as objects, on Cohere's own path /v2/rerank — answered in Cohere's shape (the
// official OpenAI SDKs have no rerank).
func TestRerankOverPlainHTTP(t *testing.T) {
	up := newRerankUpstream(t)
	_, base := realServerURL(t, envGateway(t, up.env()))
	req, _ := http.NewRequest("POST", base+"/v2/rerank", strings.NewReader(
		`{"model":"cohere/rerank-v3.5","query":"most moons","documents":[{"text":"Venus has none."},{"text":"Jupiter has ninety-five moons."}],"top_n":1,"return_documents":true,"rank_fields":["text"]}`))
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %v %v", resp.StatusCode, got, err)
	}
	results, _ := got["results"].([]any)
	first, _ := results[0].(map[string]any)
	if len(results) != 1 || first["index"] != float64(1) || fmt.Sprint(first["document"]) != "map[text:Jupiter has ninety-five moons.]" ||
		got["id"] != "c1" || fmt.Sprint(got["meta"]) != "map[api_version:map[version:2] billed_units:map[search_units:1]]" {
		t.Errorf("answer %v", got)
	}
	if sent := fmt.Sprint(up.last["/v2/rerank"]["documents"]); sent != "[Venus has none. Jupiter has ninety-five moons.]" {
		t.Errorf("documents sent as %s", sent)
	}
}
