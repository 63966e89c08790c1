package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// fakeRerankUpstream answers Cohere's /v2/rerank (one search unit) and Jina's /v1/rerank
// (a token a word): a document's score is its length over 1,000, most relevant first.
type fakeRerankUpstream struct {
	mu    sync.Mutex
	calls map[string]int
}

func (u *fakeRerankUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.calls[r.URL.Path]++
	u.mu.Unlock()
	var req struct {
		Query     string   `json:"query"`
		Documents []string `json:"documents"`
		TopN      int      `json:"top_n"`
	}
	if r.URL.Path != "/v2/rerank" && r.URL.Path != "/v1/rerank" || json.NewDecoder(r.Body).Decode(&req) != nil {
		w.WriteHeader(404)
		return
	}
	order := make([]int, len(req.Documents))
	for i := range order {
		order[i] = i
	}
	for i := range order { // by length, longest first (few documents: a plain sort)
		for j := i + 1; j < len(order); j++ {
			if len(req.Documents[order[j]]) > len(req.Documents[order[i]]) {
				order[i], order[j] = order[j], order[i]
			}
		}
	}
	if req.TopN > 0 {
		order = order[:req.TopN]
	}
	var results []string
	for _, i := range order {
		results = append(results, fmt.Sprintf(`{"index":%d,"relevance_score":%g}`, i, float64(len(req.Documents[i]))/1000))
	}
	if r.URL.Path == "/v2/rerank" {
		fmt.Fprintf(w, `{"id":"co-7","results":[%s],"meta":{"billed_units":{"search_units":1}}}`, strings.Join(results, ","))
		return
	}
	tokens := len(strings.Fields(req.Query)) * len(req.Documents)
	for _, d := range req.Documents {
		tokens += len(strings.Fields(d))
	}
	fmt.Fprintf(w, `{"usage":{"total_tokens":%d},"results":[%s]}`, tokens, strings.Join(results, ","))
}

// rerankServer is a server whose cohere and jina presets call one fake upstream, with
// openai for chat, the usage log, and the model group "rerankers".
func rerankServer(t *testing.T) (*httptest.Server, *Server, *fakeRerankUpstream) {
	t.Helper()
	up := &fakeRerankUpstream{calls: map[string]int{}}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	env := map[string]string{"COHERE_API_KEY": "co", "COHERE_BASE_URL": ups.URL, "JINA_API_KEY": "jn", "JINA_BASE_URL": ups.URL + "/v1",
		"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": ups.URL + "/v1"}
	st := newTestStore(t)
	rec := usagelog.New(usagelog.Options{})
	g, err := completions.New(completions.Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices: providers.DefaultCatalog(), Store: st, Observer: rec,
		ModelGroups: map[string]completions.ModelGroup{"rerankers": {Models: []string{"cohere/rerank-v3.5", "jina/jina-reranker-v2-base-multilingual"}}}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st}, nil)
	for _, o := range []Option{Completions(g), Usage(rec)} {
		if err := o(s); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, s, up
}

const rerankBody = `{"model":"rerank-v3.5","query":"most moons","documents":["Mars has two moons.",{"text":"Saturn has the most known moons."},"Venus has none."],"top_n":2,"return_documents":true}`

// TestRerankRoute: POST /v1/rerank (and /v2/rerank, Cohere's own path) answers Cohere's
// shape — results most relevant first with their documents, meta.billed_units — with the
// gateway's model and usage.costs; refusals name their field in OpenAI's envelope (400),
// an unknown model is a 404.
func TestRerankRoute(t *testing.T) {
	hs, _, up := rerankServer(t)
	for _, path := range []string{"/v1/rerank", "/v2/rerank"} {
		resp, b := do2(t, "POST", hs.URL+path, testKey, rerankBody, map[string]string{"X-Switchyard-Tags": "rag"})
		var got completions.RerankResponse
		if err := json.Unmarshal(b, &got); err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		if got.ID != "co-7" || got.Model != "cohere/rerank-v3.5" || len(got.Results) != 2 || got.Results[0].Index != 1 || got.Results[0].Document == nil ||
			got.Results[0].Document.Text != "Saturn has the most known moons." || got.Results[1].Index != 0 || got.Meta.BilledUnits.SearchUnits != 1 ||
			got.Usage.Costs == nil || math.Abs(got.Usage.Costs.TotalTokensCost-0.002) > 1e-12 || !got.Usage.Costs.PriceKnown {
			t.Errorf("%s: %s", path, b)
		}
	}
	if up.calls["/v2/rerank"] != 2 {
		t.Errorf("upstream calls %v", up.calls)
	}
	docs := make([]string, completions.MaxRerankDocuments+1)
	for i := range docs {
		docs[i] = `"d"`
	}
	for _, tc := range []struct {
		body, param, says string
		status            int
	}{
		{`{"model":"rerank-v3.5","query":"q","documents":[]}`, "documents", "must not be empty", 400},
		{`{"model":"rerank-v3.5","query":"q"}`, "documents", "required", 400},
		{`{"model":"rerank-v3.5","query":"q","documents":[` + strings.Join(docs, ",") + `]}`, "documents", "at most 1000", 400},
		{`{"model":"rerank-v3.5","query":"q","documents":["a",""]}`, "documents[1]", "must not be empty", 400},
		{`{"model":"rerank-v3.5","query":"","documents":["a"]}`, "query", "required", 400},
		{`{"model":"rerank-v3.5","documents":["a"]}`, "query", "required", 400},
		{`{"model":"rerank-v3.5","query":"q","documents":["a"],"top_n":0}`, "top_n", "at least 1", 400},
		{`{"model":"rerank-v3.5","query":"q","documents":["a"],"top_n":"2"}`, "top_n", "integer", 400},
		{`{"model":"rerank-v3.5","query":"q","documents":[1]}`, "documents", "string", 400},
		{`{"model":"rerank-v3.5","query":"q","documents":[{"title":"x"}]}`, "documents[0]", "text", 400},
		{`{"model":"rerank-v3.5","query":"q","rank_fields":["body"],"documents":[{"title":"x"}]}`, "documents[0]", "rank_fields", 400},
		{`{"model":"rerank-v3.5","query":["q"],"documents":["a"]}`, "query", "string", 400},
		{`{"model":"openai/gpt-4o","query":"q","documents":["a"]}`, "model", "no rerank API", 400},
		{`{"model":"acme-rerank","query":"q","documents":["a"]}`, "", "acme-rerank", 404},
	} {
		resp, b := do2(t, "POST", hs.URL+"/v1/rerank", testKey, tc.body, nil)
		code := ""
		if tc.status == 404 {
			code = "model_not_found"
		}
		e := wantOpenAIError(t, tc.body[:min(len(tc.body), 90)], resp, b, tc.status, "invalid_request_error", code)
		if tc.param != "" && (e.Param == nil || *e.Param != tc.param) || !strings.Contains(e.Message, tc.says) {
			t.Errorf("%.90s: param %v message %q, want %q saying %q", tc.body, e.Param, e.Message, tc.param, tc.says)
		}
	}
	if up.calls["/v2/rerank"] != 2 || up.calls["/v1/chat/completions"] != 0 {
		t.Errorf("refused requests reached the upstream: %v", up.calls)
	}
}

// TestRerankWithVirtualKeys: a virtual key issued for one rerank model calls it (bare or
// full name) and is refused (403) the others and a group holding one; its spend and the
// usage log count the calls (operation rerank); GET /v1/models lists rerank models.
func TestRerankWithVirtualKeys(t *testing.T) {
	hs, s, up := rerankServer(t)
	vk := issue(t, s, `{"name":"rag","models":["jina-reranker-v2-base-multilingual"],"max_budget_usd":1}`)
	body := `{"model":"jina/jina-reranker-v2-base-multilingual","query":"most moons","documents":["Mars has two moons.","Venus has none."]}`
	if resp, b := do2(t, "POST", hs.URL+"/v1/rerank", vk.Key, body, nil); resp.StatusCode != 200 {
		t.Fatalf("allowed model: %d %s", resp.StatusCode, b)
	}
	for _, model := range []string{"rerank-v3.5", "cohere/rerank-v3.5", "rerankers"} {
		resp, b := do2(t, "POST", hs.URL+"/v1/rerank", vk.Key, `{"model":"`+model+`","query":"q","documents":["a"]}`, nil)
		wantOpenAIError(t, model+" not allowed", resp, b, 401, "key_model_access_denied", "401")
	}
	if up.calls["/v2/rerank"] != 0 {
		t.Errorf("cohere called %d times for a key held to jina", up.calls["/v2/rerank"])
	}
	info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID)
	want := 11 * 1.8e-8 // 2 words × 2 documents + 7 words of documents, at jina's rate
	if math.Abs(info.Spend.CostUSD-want) > 1e-15 || info.Spend.Requests != 1 {
		t.Errorf("spend %+v, want %v in 1 request", info.Spend, want)
	}
	if u, raw, ok := answeredAfterRefused(t, s, vk.Key); !ok || u.Operation != "rerank" ||
		u.Model != "jina/jina-reranker-v2-base-multilingual" || u.TotalTokens != 11 || !u.PriceKnown {
		t.Errorf("usage log %s", raw)
	}
	// The model list names the rerank models a key may call, and one resolves by its bare name.
	resp, b := do2(t, "GET", hs.URL+"/v1/models", testKey, "", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"cohere/rerank-v3.5"`) || !strings.Contains(string(b), `"jina/jina-reranker-v2-base-multilingual"`) {
		t.Errorf("models: %s", b)
	}
	if resp, b := do2(t, "GET", hs.URL+"/v1/models", vk.Key, "", nil); strings.Contains(string(b), `"cohere/rerank-v3.5"`) || resp.StatusCode != 200 {
		t.Errorf("a key held to jina lists %s", b)
	}
	if resp, b := do2(t, "GET", hs.URL+"/v1/models/rerank-v3.5", testKey, "", nil); resp.StatusCode != 200 || !strings.Contains(string(b), `"id":"cohere/rerank-v3.5"`) {
		t.Errorf("models/rerank-v3.5: %d %s", resp.StatusCode, b)
	}
	if r := do(t, s, "POST", "/api/v1/keys", testKey, `{"name":"typo","models":["cohere/rerank-v9"]}`); r.status != http.StatusUnprocessableEntity {
		t.Errorf("a key for a rerank model the catalogue does not list: %d %s", r.status, r.raw)
	}
}

// TestRerankInOpenAPI: both routes are documented with the request's and the answer's
// schemas (documents as strings or objects with a text; results, meta, usage), and a real
// answer matches its documented schema.
func TestRerankInOpenAPI(t *testing.T) {
	hs, _, _ := rerankServer(t)
	resp, err := http.Get(hs.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	indented, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var compact bytes.Buffer
	if err := json.Compact(&compact, indented); err != nil {
		t.Fatal(err)
	}
	raw := compact.Bytes()
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]struct {
					Schema json.RawMessage `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/v1/rerank", "/v2/rerank"} {
		op, ok := doc.Paths[path]["post"]
		if !ok {
			t.Fatalf("%s undocumented", path)
		}
		req := string(op.RequestBody.Content["application/json"].Schema)
		for _, want := range []string{"documents", "top_n", "return_documents", "max_tokens_per_doc", `"maxItems":1000`, `"oneOf"`} {
			if !strings.Contains(req, want) {
				t.Errorf("%s: request schema lacks %s: %s", path, want, req)
			}
		}
		for _, status := range []string{"200", "400", "401", "404"} {
			if op.Responses[status] == nil {
				t.Errorf("%s: no %s answer documented", path, status)
			}
		}
		if r := string(op.Responses["401"]); !strings.Contains(r, "key_model_access_denied") || !strings.Contains(r, "missing or invalid API key") {
			t.Errorf("%s: the 401 %s does not document both the key's and the model's refusal", path, r)
		}
		if ok := strings.Contains(string(op.Responses["200"]), "relevance_score") || strings.Contains(string(op.Responses["200"]), "RerankResponse"); !ok {
			t.Errorf("%s: 200 answer %s", path, op.Responses["200"])
		}
	}
	check := documentedSchemas(t, hs.URL)
	_, b := do2(t, "POST", hs.URL+"/v1/rerank", testKey, rerankBody, nil)
	check("/v1/rerank", "post", b)
	_, b = do2(t, "POST", hs.URL+"/v2/rerank", testKey, `{"model":"jina/jina-reranker-v2-base-multilingual","query":"q","documents":["a b","c"]}`, nil)
	check("/v2/rerank", "post", b)
}
