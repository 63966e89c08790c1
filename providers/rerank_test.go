package providers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// planetDocs are the documents of the rerank fixtures (testdata/rerank).
var planetDocs = []string{
	"Mercury is the smallest planet and the closest to the Sun.",
	"Jupiter has 95 officially recognised moons, Ganymede being the largest.",
	"The Moon is Earth's only natural satellite.",
	"Saturn has the most known moons of any planet: more than 140 are confirmed.",
	"Mars has two small moons, Phobos and Deimos.",
}

// rerankUpstream serves one rerank route: a request to path with the bearer key gets
// answer (with status); it keeps the last body and counts the calls.
type rerankUpstream struct {
	srv    *httptest.Server
	mu     sync.Mutex
	body   []byte
	calls  int
	path   string
	status int
	header http.Header
	answer string
}

func newRerankUpstream(t *testing.T, path, key, answer string) *rerankUpstream {
	t.Helper()
	u := &rerankUpstream{path: path, answer: answer, status: 200}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.calls++
		if r.URL.Path != u.path || r.Header.Get("Authorization") != "Bearer "+key || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(404)
			fmt.Fprintf(w, `{"message":"no route %s"}`, r.URL.Path)
			return
		}
		u.body, _ = io.ReadAll(r.Body)
		for k, vs := range u.header {
			w.Header()[k] = vs
		}
		w.WriteHeader(u.status)
		io.WriteString(w, u.answer)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// sameJSON reports whether a and b are the same JSON document.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// TestRerankWireFixtures: each preset's rerank call is the documented request, to the
// documented route with the bearer key (the body checked field for field against the
// fixture), and its documented answer is read: results most relevant first, the usage
// as billed (Cohere's search units; Jina's and Voyage's tokens).
func TestRerankWireFixtures(t *testing.T) {
	for _, c := range []struct {
		preset, keyEnv, baseEnv, base, path, fixture string
		req                                          providers.RerankRequest
		want                                         []providers.RerankResult
		usage                                        providers.RerankUsage
		id, model                                    string
	}{
		{preset: "cohere", keyEnv: "CO_API_KEY", baseEnv: "COHERE_BASE_URL", path: "/v2/rerank", fixture: "cohere-v2",
			req:  providers.RerankRequest{Model: "rerank-v3.5", Query: "Which planet has the most known moons?", Documents: planetDocs, TopN: 3, MaxTokensPerDoc: 512},
			want: []providers.RerankResult{{Index: 3, RelevanceScore: 0.9871263}, {Index: 1, RelevanceScore: 0.6120487}, {Index: 4, RelevanceScore: 0.10934461}},
			// Cohere reports no tokens: counted locally, the search unit as billed.
			usage: providers.RerankUsage{SearchUnits: 1, TokensEstimated: true}, id: "4c3f0d8e-5a51-4f8e-9d3b-2f6c1b7e9a10"},
		{preset: "jina", keyEnv: "JINA_API_KEY", baseEnv: "JINA_BASE_URL", base: "/v1", path: "/v1/rerank", fixture: "jina",
			req:   providers.RerankRequest{Model: "jina-reranker-v2-base-multilingual", Query: "Which planet has the most known moons?", Documents: planetDocs, TopN: 2},
			want:  []providers.RerankResult{{Index: 3, RelevanceScore: 0.85321044921875}, {Index: 1, RelevanceScore: 0.44128417968750}},
			usage: providers.RerankUsage{Tokens: 161}, model: "jina-reranker-v2-base-multilingual"},
		{preset: "voyage", keyEnv: "VOYAGE_API_KEY", baseEnv: "VOYAGE_BASE_URL", base: "/v1", path: "/v1/rerank", fixture: "voyage",
			req:   providers.RerankRequest{Model: "rerank-2.5", Query: "Which planet has the most known moons?", Documents: planetDocs, TopN: 2},
			want:  []providers.RerankResult{{Index: 3, RelevanceScore: 0.90234375}, {Index: 1, RelevanceScore: 0.5078125}},
			usage: providers.RerankUsage{Tokens: 137}, model: "rerank-2.5"},
	} {
		t.Run(c.preset, func(t *testing.T) {
			up := newRerankUpstream(t, c.path, "key-"+c.preset, testdata(t, "rerank/"+c.fixture+"-response.json"))
			reg := providers.FromEnv(envOf(map[string]string{c.keyEnv: "key-" + c.preset, c.baseEnv: up.srv.URL + c.base}), providers.Options{})
			p, err := reg.Lookup(c.preset)
			if err != nil {
				t.Fatal(err)
			}
			if !providers.ServesRerank(p) {
				t.Fatalf("%s does not serve rerank", c.preset)
			}
			res, err := p.(providers.Reranker).Rerank(context.Background(), &c.req)
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, up.body, []byte(testdata(t, "rerank/"+c.fixture+"-request.json"))) {
				t.Errorf("sent %s\nwant %s", up.body, testdata(t, "rerank/"+c.fixture+"-request.json"))
			}
			if !reflect.DeepEqual(res.Results, c.want) || res.ID != c.id || res.Model != c.model {
				t.Errorf("answer %+v", res)
			}
			u := res.Usage
			if u.SearchUnits != c.usage.SearchUnits || u.SearchUnitsEstimated || u.TokensEstimated != c.usage.TokensEstimated ||
				!c.usage.TokensEstimated && u.Tokens != c.usage.Tokens || c.usage.TokensEstimated && u.Tokens < 50 {
				t.Errorf("usage %+v, want %+v", u, c.usage)
			}
		})
	}
}

// TestRerankSortsAndChecksAnswers: an answer out of order is sorted most relevant first
// (equal scores in the documents' order); one whose results do not match the documents is
// a broken response (retried, then the next model), not a wrong ranking.
func TestRerankSortsAndChecksAnswers(t *testing.T) {
	up := newRerankUpstream(t, "/rerank", "k", `{"results":[{"index":0,"relevance_score":0.1},{"index":2,"relevance_score":0.5},{"index":1,"relevance_score":0.5}],"usage":{"total_tokens":9}}`)
	o := providers.NewOpenAI(providers.Config{Name: "tei", BaseURL: up.srv.URL, APIKey: "k", Rerank: providers.RerankCohere})
	req := &providers.RerankRequest{Model: "bge-reranker-v2-m3", Query: "q", Documents: []string{"a", "b", "c"}}
	res, err := o.Rerank(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Results) != "[{1 0.5} {2 0.5} {0 0.1}]" || res.Usage.Tokens != 9 || res.Usage.TokensEstimated {
		t.Errorf("%+v", res)
	}
	for name, body := range map[string]string{
		"too few":        `{"results":[{"index":0,"relevance_score":0.1}]}`,
		"repeated":       `{"results":[{"index":0,"relevance_score":0.1},{"index":0,"relevance_score":0.2},{"index":1,"relevance_score":0.3}]}`,
		"out of range":   `{"results":[{"index":0,"relevance_score":0.1},{"index":1,"relevance_score":0.2},{"index":3,"relevance_score":0.3}]}`,
		"no score":       `{"results":[{"index":0},{"index":1,"relevance_score":0.2},{"index":2,"relevance_score":0.3}]}`,
		"no index":       `{"results":[{"relevance_score":0.1},{"index":1,"relevance_score":0.2},{"index":2,"relevance_score":0.3}]}`,
		"not json":       `{"results":`,
		"a wrong answer": `{"object":"list","data":[]}`,
	} {
		up.mu.Lock()
		up.answer = body
		up.mu.Unlock()
		want := providers.KindBadResponse // a whole answer refused: not retried on the model
		if name == "not json" {
			want = providers.KindStreamBroken
		}
		if _, err := o.Rerank(context.Background(), req); providers.KindOf(err) != want {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
}

// TestRerankUpstreamErrors: the rerank APIs' failures are classified as the other calls'
// (a 429 is rate limited with its Retry-After, a 5xx overloaded, a 401 an auth failure, a
// 400 a bad request), so that the gateway retries and falls back; their messages are read
// from Cohere's {"message"} and Jina's and Voyage's {"detail"}.
func TestRerankUpstreamErrors(t *testing.T) {
	up := newRerankUpstream(t, "/v2/rerank", testKey, "")
	o := providers.NewOpenAI(providers.Config{Name: "cohere", BaseURL: up.srv.URL, APIKey: testKey, Rerank: providers.RerankCohere, RerankPath: "/v2/rerank"})
	req := &providers.RerankRequest{Model: "rerank-v3.5", Query: "q", Documents: []string{"a"}}
	for _, c := range []struct {
		status     int
		retryAfter string
		body       string
		kind       providers.ErrorKind
		msg        string
	}{
		{429, "3", `{"message":"You are using a Trial key, which is limited to 10 API calls / minute."}`, providers.KindRateLimited, "Trial key"},
		{503, "", `{"message":"service unavailable"}`, providers.KindOverloaded, "unavailable"},
		{500, "", `{"detail":"Internal Server Error"}`, providers.KindOverloaded, "Internal Server Error"},
		{401, "", `{"detail":"Unauthorized: invalid API key"}`, providers.KindAuth, "invalid API key"},
		{400, "", `{"message":"invalid request: list of documents must not be empty"}`, providers.KindBadRequest, "documents must not be empty"},
		{422, "", `{"detail":[{"loc":["body","top_k"],"msg":"Input should be a valid integer","type":"int_parsing"}]}`, providers.KindBadRequest, "valid integer"},
	} {
		up.mu.Lock()
		up.status, up.answer, up.header = c.status, c.body, http.Header{}
		if c.retryAfter != "" {
			up.header.Set("Retry-After", c.retryAfter)
		}
		up.mu.Unlock()
		_, err := o.Rerank(context.Background(), req)
		var pe *providers.Error
		if !errors.As(err, &pe) || pe.Kind != c.kind || pe.StatusCode != c.status || !strings.Contains(pe.Message, c.msg) {
			t.Errorf("%d: %v, want %s saying %q", c.status, err, c.kind, c.msg)
			continue
		}
		if c.retryAfter != "" && pe.RetryAfter != 3*time.Second {
			t.Errorf("429: Retry-After %v", pe.RetryAfter)
		}
	}
}

// TestRerankRefusesWhatItCannotSend: nothing is sent for a provider without a rerank API,
// without its key, or for max_tokens_per_doc to an API that does not take it.
func TestRerankRefusesWhatItCannotSend(t *testing.T) {
	up := newRerankUpstream(t, "/rerank", testKey, `{}`)
	req := &providers.RerankRequest{Model: "m", Query: "q", Documents: []string{"a"}}
	for name, c := range map[string]struct {
		cfg  providers.Config
		req  providers.RerankRequest
		kind providers.ErrorKind
		msg  string
	}{
		"no rerank API":      {providers.Config{Name: "openai", BaseURL: up.srv.URL, APIKey: testKey}, *req, providers.KindBadRequest, "no rerank API"},
		"no key":             {providers.Config{Name: "jina", BaseURL: up.srv.URL, Rerank: providers.RerankJina, KeyEnv: "JINA_API_KEY"}, *req, providers.KindAuth, "JINA_API_KEY"},
		"max_tokens_per_doc": {providers.Config{Name: "voyage", BaseURL: up.srv.URL, APIKey: testKey, Rerank: providers.RerankVoyage}, providers.RerankRequest{Model: "m", Query: "q", Documents: []string{"a"}, MaxTokensPerDoc: 100}, providers.KindBadRequest, "max_tokens_per_doc"},
	} {
		_, err := providers.NewOpenAI(c.cfg).Rerank(context.Background(), &c.req)
		var pe *providers.Error
		if !errors.As(err, &pe) || pe.Kind != c.kind || !strings.Contains(pe.Message, c.msg) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if up.calls != 0 {
		t.Errorf("%d calls upstream", up.calls)
	}
	if providers.ServesRerank(providers.NewOpenAI(providers.Config{Name: "openai"})) || providers.ServesRerank(providers.NewAnthropic(providers.Config{})) {
		t.Error("a provider without a rerank API serves rerank")
	}
}

// TestRerankCountsWhatIsNotReported: a server in Cohere's shape that reports neither
// search units nor tokens (self-hosted) gets both estimated: the tokens as Voyage AI
// defines them (the query's times the documents, plus the documents'), at four bytes a
// token; the search units by Cohere's rule (100 documents a unit, a document of more than
// 500 tokens with the query one per 500).
func TestRerankCountsWhatIsNotReported(t *testing.T) {
	docs := make([]string, 150)
	results := make([]string, len(docs))
	for i := range docs {
		docs[i] = "tok"
		results[i] = fmt.Sprintf(`{"index":%d,"relevance_score":%g}`, i, 1/float64(i+1))
	}
	up := newRerankUpstream(t, "/rerank", "k", `{"results":[`+strings.Join(results, ",")+`]}`)
	o := providers.NewOpenAI(providers.Config{Name: "vllm", BaseURL: up.srv.URL, APIKey: "k", Rerank: providers.RerankCohere})
	res, err := o.Rerank(context.Background(), &providers.RerankRequest{Model: "bge-reranker-v2-m3", Query: "q", Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	// "q" is a token, "tok" one (four bytes a token).
	if u := res.Usage; u.SearchUnits != 2 || !u.SearchUnitsEstimated || u.Tokens != 150*(1+1) || !u.TokensEstimated || !u.Estimated() {
		t.Errorf("150 short documents: %+v", u)
	}
	// One document of 2,100 tokens (8,400 bytes) counts as five (of 500 tokens each).
	long := strings.Repeat("planet ", 1200)
	docs = append(docs[:98:98], long)
	up.mu.Lock()
	up.answer = `{"results":[` + strings.Join(results[:99], ",") + `]}`
	up.mu.Unlock()
	res, err = o.Rerank(context.Background(), &providers.RerankRequest{Model: "m", Query: "q", Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.SearchUnits != 2 {
		t.Errorf("98 short documents and one of 2,100 tokens: %d search units, want 2", res.Usage.SearchUnits)
	}
	docs = append(docs[:94:94], long)
	up.mu.Lock()
	up.answer = `{"results":[` + strings.Join(results[:95], ",") + `]}`
	up.mu.Unlock()
	if res, err = o.Rerank(context.Background(), &providers.RerankRequest{Model: "m", Query: "q", Documents: docs}); err != nil || res.Usage.SearchUnits != 1 {
		t.Errorf("94 short documents and one of 2,100 tokens: %+v %v, want 1 search unit", res, err)
	}
}

// TestRerankPresets: Cohere's preset serves rerank only (its key from COHERE_API_KEY, else
// CO_API_KEY); Jina's and Voyage's serve embeddings and rerank; none of them chat.
func TestRerankPresets(t *testing.T) {
	reg := providers.FromEnv(envOf(map[string]string{"CO_API_KEY": "co", "JINA_API_KEY": "jn", "VOYAGE_API_KEY": "vo", "OPENAI_API_KEY": "sk"}), providers.Options{})
	for _, c := range []struct {
		name                string
		chat, embed, rerank bool
	}{
		{"cohere", false, false, true}, {"jina", false, true, true}, {"voyage", false, true, true}, {"openai", true, true, false},
	} {
		p, err := reg.Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if providers.ServesChat(p) != c.chat || providers.ServesEmbeddings(p) != c.embed || providers.ServesRerank(p) != c.rerank || !providers.IsConfigured(p) {
			t.Errorf("%s: chat %v embeddings %v rerank %v configured %v", c.name, providers.ServesChat(p), providers.ServesEmbeddings(p), providers.ServesRerank(p), providers.IsConfigured(p))
		}
	}
	// COHERE_API_KEY wins over CO_API_KEY.
	up := newRerankUpstream(t, "/v2/rerank", "main", `{"results":[{"index":0,"relevance_score":1}],"meta":{"billed_units":{"search_units":1}}}`)
	reg = providers.FromEnv(envOf(map[string]string{"COHERE_API_KEY": "main", "CO_API_KEY": "other", "COHERE_BASE_URL": up.srv.URL}), providers.Options{})
	p, _ := reg.Lookup("cohere")
	if _, err := p.(providers.Reranker).Rerank(context.Background(), &providers.RerankRequest{Model: "rerank-v3.5", Query: "q", Documents: []string{"a"}}); err != nil {
		t.Errorf("COHERE_API_KEY: %v", err)
	}
}

// TestRerankFromConfigFile: an OpenAI-format provider of the configuration file may serve
// rerank in one of the three shapes at {base_url}/rerank (a self-hosted reranker); a wrong
// shape, or rerank on another format, is refused naming the entry.
func TestRerankFromConfigFile(t *testing.T) {
	up := newRerankUpstream(t, "/v1/rerank", "tk", `{"results":[{"index":0,"relevance_score":0.7}],"usage":{"total_tokens":4}}`)
	fc, err := providers.ParseConfig([]byte(`{"providers":[{"name":"infinity","format":"openai","base_url":"` + up.srv.URL + `/v1","api_key":"tk","rerank":"cohere"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	reg := providers.FromEnv(nil, providers.Options{})
	if err := reg.Configure(fc, nil, providers.Options{}); err != nil {
		t.Fatal(err)
	}
	p, _ := reg.Lookup("infinity")
	res, err := p.(providers.Reranker).Rerank(context.Background(), &providers.RerankRequest{Model: "mixedbread-ai/mxbai-rerank-xsmall-v1", Query: "q", Documents: []string{"a"}})
	if err != nil || res.Usage.Tokens != 4 || !providers.ServesChat(p) {
		t.Fatalf("%+v %v", res, err)
	}
	for doc, field := range map[string]string{
		`{"providers":[{"name":"x","format":"openai","base_url":"http://h","rerank":"tei"}]}`:    "providers[0].rerank",
		`{"providers":[{"name":"x","format":"gemini","base_url":"http://h","rerank":"cohere"}]}`: "providers[0].rerank",
		`{"providers":[{"name":"anthropic","rerank":"cohere"}]}`:                                 "providers[0].rerank",
	} {
		var ce *providers.ConfigError
		if _, err := providers.ParseConfig([]byte(doc)); !errors.As(err, &ce) || ce.Field != field {
			t.Errorf("%s: %v", doc, err)
		}
	}
}

// TestCatalogRerankPrices: the catalogue's rerank models are kept apart from its chat
// models and priced as billed: Cohere's by the search unit (a call reporting none counts
// as one query), Jina AI's and Voyage AI's by the token; a model it does not list has an
// unknown price, never a guess.
func TestCatalogRerankPrices(t *testing.T) {
	cat := providers.DefaultCatalog()
	for _, c := range []struct {
		model string
		u     providers.RerankUsage
		usd   float64
		known bool
	}{
		{"cohere/rerank-v3.5", providers.RerankUsage{SearchUnits: 2, Tokens: 900}, 0.004, true},
		{"cohere/rerank-v3.5", providers.RerankUsage{Tokens: 900}, 0.002, true},
		{"cohere/rerank-english-v3.0", providers.RerankUsage{SearchUnits: 1}, 0.002, true},
		{"voyage/rerank-2.5", providers.RerankUsage{Tokens: 1_000_000}, 0.05, true},
		{"voyage/rerank-2.5-lite", providers.RerankUsage{Tokens: 1_000_000}, 0.02, true},
		{"jina/jina-reranker-v2-base-multilingual", providers.RerankUsage{Tokens: 1_000_000}, 0.018, true},
		{"jina/jina-reranker-m0", providers.RerankUsage{Tokens: 1_000_000}, 0, false},
		{"openai/gpt-4o", providers.RerankUsage{Tokens: 1_000_000}, 0, false},
	} {
		got := cat.RerankCost(c.model, c.u)
		if got.Known != c.known || math.Abs(got.TotalUSD-c.usd) > 1e-12 || got.InputUSD != got.TotalUSD || got.OutputUSD != 0 {
			t.Errorf("%s %+v: %+v, want %v known %v", c.model, c.u, got, c.usd, c.known)
		}
	}
	if _, ok := cat.Lookup("cohere/rerank-v3.5"); ok {
		t.Error("a rerank model priced as a chat model")
	}
	if got := fmt.Sprint(cat.RerankModels("jina"), cat.RerankModels("voyage")); got != "[jina/jina-reranker-v2-base-multilingual] [voyage/rerank-2 voyage/rerank-2-lite voyage/rerank-2.5 voyage/rerank-2.5-lite]" {
		t.Errorf("rerank models %s", got)
	}
	if got := cat.RerankModels("cohere"); len(got) != 5 || got[4] != "cohere/rerank-v3.5" {
		t.Errorf("cohere's rerank models %v", got)
	}
	if len(cat.ChatModels("cohere")) != 0 || len(cat.EmbeddingModels("voyage")) == 0 {
		t.Errorf("chat models of cohere %v", cat.ChatModels("cohere"))
	}
	// An override file's rerank entries replace the embedded ones.
	o, err := providers.ParseCatalog([]byte(`{"rerank-v3.5":{"litellm_provider":"cohere","mode":"rerank","input_cost_per_query":0.001,"input_cost_per_token":0}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c := cat.WithOverrides(o).RerankCost("cohere/rerank-v3.5", providers.RerankUsage{SearchUnits: 3}); math.Abs(c.TotalUSD-0.003) > 1e-12 {
		t.Errorf("overridden %+v", c)
	}
}

// TestJinaEmbed: Jina AI's preset serves its OpenAI-compatible embeddings at
// {base}/embeddings with the bearer key (and so its models' vectors through /v1/embeddings).
func TestJinaEmbed(t *testing.T) {
	up := newRerankUpstream(t, "/v1/embeddings", "jina_test", `{"model":"jina-embeddings-v3","object":"list","usage":{"total_tokens":3,"prompt_tokens":3},"data":[{"object":"embedding","index":0,"embedding":[0.5,-0.5]}]}`)
	reg := providers.FromEnv(envOf(map[string]string{"JINA_API_KEY": "jina_test", "JINA_BASE_URL": up.srv.URL + "/v1"}), providers.Options{})
	p, _ := reg.Lookup("jina")
	res, err := p.(providers.Embedder).Embed(context.Background(), &providers.EmbeddingRequest{Model: "jina-embeddings-v3", Input: []string{"a cat"}, Dimensions: 2})
	if err != nil || res.Usage.PromptTokens != 3 || fmt.Sprint(res.Vectors) != "[[0.5 -0.5]]" {
		t.Fatalf("%+v %v", res, err)
	}
	if !strings.Contains(string(up.body), `"dimensions":2`) {
		t.Errorf("sent %s", up.body)
	}
}
