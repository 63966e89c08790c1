package completions

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// fakeEmbeddingsAPI is a scripted OpenAI-format embeddings endpoint: each input's vector is
// [len(text), index, 0.5]; fail holds the statuses of the next calls (then it answers).
type fakeEmbeddingsAPI struct {
	srv   *httptest.Server
	mu    sync.Mutex
	fail  []int
	calls int
	last  map[string]any
}

func newFakeEmbeddingsAPI(t *testing.T) *fakeEmbeddingsAPI {
	u := &fakeEmbeddingsAPI{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.calls++
		if r.URL.Path != "/v1/embeddings" {
			w.WriteHeader(404)
			io.WriteString(w, `{"error":{"message":"no such route","type":"invalid_request_error"}}`)
			return
		}
		if len(u.fail) > 0 {
			status := u.fail[0]
			u.fail = u.fail[1:]
			w.WriteHeader(status)
			io.WriteString(w, `{"error":{"message":"scripted failure","type":"server_error"}}`)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		raw, _ := io.ReadAll(r.Body)
		json.Unmarshal(raw, &req)
		json.Unmarshal(raw, &u.last)
		var data []string
		tokens := 0
		for i, s := range req.Input {
			data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":[%d,%d,0.5]}`, i, len(s), i))
			tokens += len(strings.Fields(s))
		}
		fmt.Fprintf(w, `{"object":"list","data":[%s],"model":%q,"usage":{"prompt_tokens":%d,"total_tokens":%d}}`, strings.Join(data, ","), req.Model, tokens, tokens)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *fakeEmbeddingsAPI) script(statuses ...int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.fail, u.calls = statuses, 0
}

type embedHarness struct {
	g               *Gateway
	openai, mistral *fakeEmbeddingsAPI
	ledger          *recordingLedger
	observed        *recordingObserver
}

func newEmbedHarness(t *testing.T) *embedHarness {
	h := &embedHarness{openai: newFakeEmbeddingsAPI(t), mistral: newFakeEmbeddingsAPI(t), ledger: &recordingLedger{}, observed: &recordingObserver{}}
	env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": h.openai.srv.URL + "/v1",
		"MISTRAL_API_KEY": "mk", "MISTRAL_BASE_URL": h.mistral.srv.URL + "/v1", "ANTHROPIC_API_KEY": "ak"}
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices: providers.DefaultCatalog(), Ledger: h.ledger, Observer: h.observed,
		ModelGroups: map[string]ModelGroup{"embed": {Models: []string{"openai/text-embedding-3-small", "mistral/mistral-embed"}}},
		Sleep:       func(context.Context, time.Duration) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	h.g = g
	return h
}

// TestEmbedAnswersWithUsageCostsAndRecords: a bare OpenAI model name reaches OpenAI; the
// vectors come back in order with the usage, its cost from the catalogue's embedding
// prices, and the call is billed to the budget, written to the ledger and observed as an
// embeddings request.
func TestEmbedAnswersWithUsageCostsAndRecords(t *testing.T) {
	h := newEmbedHarness(t)
	budget := NewBudget(BudgetLimits{})
	resp, err := h.g.Embed(context.Background(), Scope{Owner: "k1", Budget: budget},
		&EmbeddingsRequest{Model: "text-embedding-3-small", Input: EmbeddingInput{Texts: []string{"one two three", "four"}}, Dimensions: intp(3)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Object != "list" || resp.Model != "openai/text-embedding-3-small" || len(resp.Data) != 2 ||
		resp.Data[1].Index != 1 || resp.Data[1].Object != "embedding" || fmt.Sprint(resp.Data[1].Embedding.Values) != "[4 1 0.5]" {
		t.Fatalf("response %+v", resp)
	}
	if u := resp.Usage; u.PromptTokens != 4 || u.TotalTokens != 4 || u.Estimated || u.Costs == nil || !u.Costs.PriceKnown || math.Abs(u.Costs.TotalTokensCost-4*0.02/1e6) > 1e-15 {
		t.Errorf("usage %+v costs %+v", u, u.Costs)
	}
	if h.openai.last["dimensions"] != float64(3) || h.openai.last["model"] != "text-embedding-3-small" {
		t.Errorf("sent %v", h.openai.last)
	}
	if used := budget.Used(context.Background()); used.Calls != 1 || used.Tokens != 4 {
		t.Errorf("budget %+v", used)
	}
	if e := h.ledger.all(); len(e) != 1 || e[0].Model != "openai/text-embedding-3-small" || e[0].Owner != "k1" || e[0].Usage.PromptTokens != 4 {
		t.Errorf("ledger %+v", e)
	}
	r := h.observed.take(t)
	if r.Operation != OperationEmbeddings || r.Outcome != RequestOK || r.Model != "openai/text-embedding-3-small" || r.Usage.PromptTokens != 4 || len(r.Attempts) != 1 {
		t.Errorf("observed %+v", r)
	}
}

// TestEmbedRetriesAndGroupMembers: a failing model is retried; a model group's next
// member (a deployment of the same model) answers when the first keeps failing; a model
// never falls back to another on its own.
func TestEmbedRetriesAndGroupMembers(t *testing.T) {
	h := newEmbedHarness(t)
	req := &EmbeddingsRequest{Model: "openai/text-embedding-3-small", Input: EmbeddingInput{Texts: []string{"hi"}}}
	h.openai.script(503)
	resp, err := h.g.Embed(context.Background(), Scope{}, req)
	if err != nil || h.openai.calls != 2 {
		t.Fatalf("retry: %+v %v after %d calls", resp, err, h.openai.calls)
	}
	h.openai.script(500, 500, 500, 500, 500, 500)
	_, err = h.g.Embed(context.Background(), Scope{}, req)
	var af *AllFailedError
	if !errors.As(err, &af) || h.mistral.calls != 0 {
		t.Fatalf("a single model failing: %v (mistral called %d times)", err, h.mistral.calls)
	}
	h.openai.script(500, 500, 500, 500, 500, 500)
	resp, err = h.g.Embed(context.Background(), Scope{}, &EmbeddingsRequest{Model: "embed", Input: EmbeddingInput{Texts: []string{"hi"}}})
	if err != nil || resp.Model != "mistral/mistral-embed" {
		t.Fatalf("group: %+v %v", resp, err)
	}
}

// TestEmbedRefusesBadRequests: each malformed request is a validation error naming the
// field, and nothing is sent upstream.
func TestEmbedRefusesBadRequests(t *testing.T) {
	h := newEmbedHarness(t)
	many := make([]string, MaxEmbeddingInputs+1)
	for i := range many {
		many[i] = "x"
	}
	texts := func(s ...string) EmbeddingInput { return EmbeddingInput{Texts: s} }
	for _, c := range []struct {
		req   EmbeddingsRequest
		field string
		msg   string
	}{
		{EmbeddingsRequest{Input: texts("a")}, "model", "required"},
		{EmbeddingsRequest{Model: "openai/text-embedding-3-small"}, "input", "required"},
		{EmbeddingsRequest{Model: "openai/text-embedding-3-small", Input: EmbeddingInput{Texts: []string{}}}, "input", "empty"},
		{EmbeddingsRequest{Model: "openai/text-embedding-3-small", Input: texts(many...)}, "input", "at most 2048"},
		{EmbeddingsRequest{Model: "openai/text-embedding-3-small", Input: texts("a", "")}, "input[1]", "empty"},
		{EmbeddingsRequest{Model: "openai/text-embedding-3-small", Input: EmbeddingInput{Tokens: [][]int{{1, -2}}}}, "input[0]", "negative"},
		{EmbeddingsRequest{Model: "openai/text-embedding-3-small", Input: texts("a"), EncodingFormat: "int8"}, "encoding_format", "float or base64"},
		{EmbeddingsRequest{Model: "openai/text-embedding-3-small", Input: texts("a"), Dimensions: intp(0)}, "dimensions", "at least 1"},
		{EmbeddingsRequest{Model: "anthropic/claude-sonnet-4-5", Input: texts("a")}, "model", "no embeddings API"},
		{EmbeddingsRequest{Model: "claude-sonnet-4-5", Input: texts("a")}, "model", "no embeddings API"},
		{EmbeddingsRequest{Model: "acme-embed-v9", Input: texts("a")}, "model", "does not exist"},
		{EmbeddingsRequest{Model: "nope/x", Input: texts("a")}, "model", "unknown provider"},
	} {
		_, err := h.g.Embed(context.Background(), Scope{}, &c.req)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field || !strings.Contains(ve.Error(), c.msg) {
			t.Errorf("%+v: %v, want %s: …%s…", c.req.Model, err, c.field, c.msg)
		}
	}
	if h.openai.calls != 0 {
		t.Errorf("%d calls upstream", h.openai.calls)
	}
	b := NewBudget(BudgetLimits{AllowedModels: []string{"mistral/mistral-embed"}})
	if _, err := h.g.Embed(context.Background(), Scope{Budget: b}, &EmbeddingsRequest{Model: "text-embedding-3-small", Input: texts("a")}); !errors.Is(err, ErrModelNotAllowed) {
		t.Errorf("outside the allow-list: %v", err)
	}
}

// TestEmbeddingWireForms: the four input forms OpenAI takes decode, and a base64 vector is
// the little-endian float32s of the numbers (what OpenAI's Node SDK asks for and decodes).
func TestEmbeddingWireForms(t *testing.T) {
	for body, want := range map[string]string{
		`"hello"`:     "texts [hello]",
		`["a","b"]`:   "texts [a b]",
		`[1,2,3]`:     "tokens [[1 2 3]]",
		`[[1,2],[3]]`: "tokens [[1 2] [3]]",
		`[]`:          "texts []",
	} {
		var in EmbeddingInput
		if err := json.Unmarshal([]byte(body), &in); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		got := fmt.Sprintf("texts %v", in.Texts)
		if in.Tokens != nil {
			got = fmt.Sprintf("tokens %v", in.Tokens)
		}
		if got != want {
			t.Errorf("%s: %s, want %s", body, got, want)
		}
	}
	for _, bad := range []string{`{}`, `3`, `[true]`, `[{"a":1}]`} {
		var in EmbeddingInput
		if err := json.Unmarshal([]byte(bad), &in); err == nil {
			t.Errorf("%s accepted: %+v", bad, in)
		}
	}
	v := EmbeddingVector{Values: []float32{0.25, -1.5, 3e-7}, Base64: true}
	b, _ := json.Marshal(v)
	var s string
	json.Unmarshal(b, &s)
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(raw) != 12 || math.Float32frombits(binary.LittleEndian.Uint32(raw[4:])) != -1.5 {
		t.Fatalf("base64 %s: %v", b, err)
	}
	var back EmbeddingVector
	if err := json.Unmarshal(b, &back); err != nil || fmt.Sprint(back.Values) != fmt.Sprint(v.Values) {
		t.Errorf("round trip %v %v", back, err)
	}
	v.Base64 = false
	if b, _ := json.Marshal(v); string(b) != "[0.25,-1.5,3e-07]" {
		t.Errorf("floats %s", b)
	}
	// The server writes an answer with WriteJSON: the same document json.Marshal writes.
	costs := Costs{InputTokensCost: 1e-7, TotalTokensCost: 1e-7, PriceKnown: true}
	big := make([]Embedding, 6) // past the writer's 32 KiB flushes
	for i := range big {
		v := make([]float32, 3072)
		for j := range v {
			v[j] = float32(i*3072+j%977) / 977
		}
		big[i] = Embedding{Object: "embedding", Index: i, Embedding: EmbeddingVector{Values: v}}
	}
	for _, b64 := range []bool{false, true, false} {
		resp := &EmbeddingsResponse{Object: "list", Model: "openai/text-embedding-3-small",
			Data:  []Embedding{{Object: "embedding", Index: 0, Embedding: EmbeddingVector{Values: []float32{0.5, -2}, Base64: b64}}, {Object: "embedding", Index: 1, Embedding: EmbeddingVector{Values: []float32{1e-9}, Base64: b64}}},
			Usage: EmbeddingsUsage{PromptTokens: 5, TotalTokens: 5, Estimated: true, Costs: &costs}}
		if !b64 && big != nil {
			resp.Data, big = big, nil
		}
		var buf strings.Builder
		if err := resp.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		a := []byte(buf.String())
		m, _ := json.Marshal(resp)
		var x, y any
		if err := json.Unmarshal(a, &x); err != nil {
			t.Fatalf("WriteJSON wrote invalid JSON %s: %v", a, err)
		}
		json.Unmarshal(m, &y)
		if fmt.Sprint(x) != fmt.Sprint(y) {
			t.Errorf("WriteJSON %s\njson.Marshal %s", a, m)
		}
	}
}

// TestEmbeddingModelsAreKnown: the configured providers' catalogued embedding models are
// listed and known (the metrics give known models their own label), chat models are not.
func TestEmbeddingModelsAreKnown(t *testing.T) {
	h := newEmbedHarness(t)
	if !h.g.HasEmbeddingModel("openai/text-embedding-3-small") || !h.g.HasEmbeddingModel("mistral/mistral-embed") || h.g.HasEmbeddingModel("openai/gpt-4o") {
		t.Errorf("embedding models %v", h.g.EmbeddingModels())
	}
	if id, ok := h.g.ResolveEmbeddingModel("text-embedding-3-large"); !ok || id != "openai/text-embedding-3-large" {
		t.Errorf("resolve: %q %v", id, ok)
	}
}

// TestEmbedRecordsBilledPartsOfAFailure: a Gemini request whose later batch failed after
// others were answered records those (billed) tokens in the ledger, as an incomplete call,
// and in the failed request's record: its attempt's usage and the request's.
func TestEmbedRecordsBilledPartsOfAFailure(t *testing.T) {
	g, ledger, in := geminiBatchGateway(t, "bad", true)
	observed := &recordingObserver{}
	g.opts.Observer = observed
	if _, err := g.Embed(context.Background(), Scope{}, &EmbeddingsRequest{Model: "gemini/gemini-embedding-001", Input: EmbeddingInput{Texts: in}}); err == nil {
		t.Fatal("want the failure")
	}
	e := ledger.all()
	if len(e) != 1 || e[0].Complete || e[0].Usage.PromptTokens != 300 || !e[0].Cost.PriceKnown {
		t.Errorf("ledger %+v", e)
	}
	r := observed.take(t)
	if r.Outcome != RequestFailed || r.Usage.PromptTokens != 300 || r.Usage.Costs.Spent() != e[0].Cost.Spent() {
		t.Errorf("recorded %s with usage %+v, want a failure carrying the 300 tokens billed", r.Outcome, r.Usage)
	}
	if len(r.Attempts) != 1 || r.Attempts[0].Usage == nil || r.Attempts[0].Usage.PromptTokens != 300 {
		t.Errorf("attempts %+v, want the failed one to carry the 300 tokens billed", r.Attempts)
	}
}

// geminiBatchGateway is a gateway (no retries, a recording ledger) whose gemini provider is
// a scripted batchEmbedContents: the batch starting with input "w100" fails with a 400
// carrying message, the others answer — with usageMetadata, 3 tokens an input, when
// reported. It returns the gateway, its ledger and 150 inputs w0…w149 (two batches).
func geminiBatchGateway(t *testing.T, message string, reported bool) (*Gateway, *recordingLedger, []string) {
	t.Helper()
	gemini := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Requests []struct {
				Content struct {
					Parts []struct{ Text string } `json:"parts"`
				} `json:"content"`
			} `json:"requests"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		if body.Requests[0].Content.Parts[0].Text == "w100" {
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"code":400,"message":%q,"status":"INVALID_ARGUMENT"}}`, message)
			return
		}
		var vs []string
		for range body.Requests {
			vs = append(vs, `{"values":[1]}`)
		}
		usage := ""
		if reported {
			usage = fmt.Sprintf(`,"usageMetadata":{"promptTokenCount":%d}`, 3*len(body.Requests))
		}
		fmt.Fprintf(w, `{"embeddings":[%s]%s}`, strings.Join(vs, ","), usage)
	}))
	t.Cleanup(gemini.Close)
	ledger := &recordingLedger{}
	g, err := New(Options{Providers: fakeRegistry{"gemini": providers.NewGemini(providers.Config{BaseURL: gemini.URL, APIKey: "k"})},
		Prices: providers.DefaultCatalog(), Ledger: ledger, DefaultMaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	in := make([]string, 150)
	for i := range in {
		in[i] = fmt.Sprintf("w%d", i)
	}
	return g, ledger, in
}
