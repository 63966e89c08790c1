package providers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestOpenAIEmbed: the body OpenAI's embeddings API takes (model, input, dimensions, user;
// no encoding_format, so every compatible server answers floats), vectors put back in the
// inputs' order whatever the order of data, usage read; token-id inputs sent as arrays.
func TestOpenAIEmbed(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer sk-test" {
			w.WriteHeader(404)
			return
		}
		got = nil
		json.NewDecoder(r.Body).Decode(&got)
		fmt.Fprint(w, `{"object":"list","data":[{"object":"embedding","index":1,"embedding":[0.5,-0.25]},{"object":"embedding","index":0,"embedding":[0.125,1e-3]}],`+
			`"model":"text-embedding-3-small","usage":{"prompt_tokens":7,"total_tokens":7}}`)
	}))
	defer srv.Close()
	o := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-test"})
	res, err := o.Embed(context.Background(), &providers.EmbeddingRequest{Model: "text-embedding-3-small", Input: []string{"a cat", "a dog"}, Dimensions: 2, User: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Vectors) != 2 || !slices.Equal(res.Vectors[0], []float32{0.125, 0.001}) || !slices.Equal(res.Vectors[1], []float32{0.5, -0.25}) ||
		res.Usage.PromptTokens != 7 || res.UsageEstimated || res.Model != "text-embedding-3-small" {
		t.Errorf("response %+v", res)
	}
	if got["model"] != "text-embedding-3-small" || got["dimensions"] != float64(2) || got["user"] != "u1" || got["encoding_format"] != nil ||
		fmt.Sprint(got["input"]) != "[a cat a dog]" {
		t.Errorf("body %v", got)
	}
	res, err = o.Embed(context.Background(), &providers.EmbeddingRequest{Model: "text-embedding-3-small", Tokens: [][]int{{1, 2}, {3}}})
	if err != nil || res.UsageEstimated {
		t.Fatal(res, err)
	}
	if fmt.Sprint(got["input"]) != "[[1 2] [3]]" {
		t.Errorf("token ids sent as %v", got["input"])
	}
}

// TestEmbedMalformedAnswers: an answer whose vectors do not match the inputs is a broken
// answer refused (KindBadResponse: another deployment, not a retry of the one that billed
// it), not vectors in the wrong places.
func TestEmbedMalformedAnswers(t *testing.T) {
	for name, body := range map[string]string{
		"too few":      `{"data":[{"index":0,"embedding":[1]}]}`,
		"repeated":     `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]}`,
		"out of range": `{"data":[{"index":0,"embedding":[1]},{"index":2,"embedding":[2]}]}`,
		"empty":        `{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[]}]}`,
		"not json":     `{"data":`,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) }))
		o := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL, APIKey: "k"})
		_, err := o.Embed(context.Background(), &providers.EmbeddingRequest{Model: "m", Input: []string{"a", "b"}})
		want := providers.KindBadResponse // a whole answer refused: not retried on the model
		if name == "not json" {
			want = providers.KindStreamBroken
		}
		if providers.KindOf(err) != want {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
		srv.Close()
	}
}

// TestEmbedUpstreamErrors: an upstream's errors keep their kinds (a 429 is rate limited
// with its Retry-After, a 404 an unknown model), and a provider without a key fails before
// any call.
func TestEmbedUpstreamErrors(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if strings.Contains(r.URL.Path, "embeddings") && calls == 1 {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(429)
			io.WriteString(w, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
			return
		}
		w.WriteHeader(404)
		io.WriteString(w, `{"error":{"message":"The model does not exist","type":"invalid_request_error","code":"model_not_found"}}`)
	}))
	defer srv.Close()
	o := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL, APIKey: "k"})
	_, err := o.Embed(context.Background(), &providers.EmbeddingRequest{Model: "m", Input: []string{"a"}})
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.KindRateLimited || pe.RetryAfter.Seconds() != 2 {
		t.Errorf("429: %v", err)
	}
	if _, err := o.Embed(context.Background(), &providers.EmbeddingRequest{Model: "m", Input: []string{"a"}}); providers.KindOf(err) != providers.KindModelNotFound {
		t.Errorf("404: %v", err)
	}
	nokey := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL})
	if _, err := nokey.Embed(context.Background(), &providers.EmbeddingRequest{Model: "m", Input: []string{"a"}}); providers.KindOf(err) != providers.KindAuth || calls != 2 {
		t.Errorf("no key: %v after %d calls", err, calls)
	}
}

// TestGeminiEmbed: Gemini's batchEmbedContents body (one request per input, the model as
// models/<id>, outputDimensionality), its vectors, the key header; token counts from
// usageMetadata when sent, else counted locally; token-id inputs refused.
func TestGeminiEmbed(t *testing.T) {
	var got struct {
		Requests []struct {
			Model   string `json:"model"`
			Content struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"content"`
			OutputDimensionality int `json:"outputDimensionality"`
		} `json:"requests"`
	}
	usage := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1beta/models/gemini-embedding-001:batchEmbedContents" || r.Header.Get("X-Goog-Api-Key") != "g-key" {
			w.WriteHeader(404)
			io.WriteString(w, `{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}`)
			return
		}
		json.NewDecoder(r.Body).Decode(&got)
		fmt.Fprintf(w, `{"embeddings":[{"values":[0.1,0.2,0.3]},{"values":[0.4,0.5,0.6]}]%s}`, usage)
	}))
	defer srv.Close()
	g := providers.NewGemini(providers.Config{BaseURL: srv.URL, APIKey: "g-key"})
	req := &providers.EmbeddingRequest{Model: "gemini-embedding-001", Input: []string{"hello world", "good night"}, Dimensions: 3}
	res, err := g.Embed(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Requests) != 2 || got.Requests[1].Model != "models/gemini-embedding-001" || got.Requests[1].Content.Parts[0].Text != "good night" ||
		got.Requests[0].OutputDimensionality != 3 {
		t.Errorf("body %+v", got)
	}
	if len(res.Vectors) != 2 || !slices.Equal(res.Vectors[1], []float32{0.4, 0.5, 0.6}) || !res.UsageEstimated || res.Usage.PromptTokens < 4 {
		t.Errorf("response %+v", res)
	}
	usage = `,"usageMetadata":{"promptTokenCount":9}`
	if res, err = g.Embed(context.Background(), req); err != nil || res.UsageEstimated || res.Usage.PromptTokens != 9 {
		t.Errorf("with usageMetadata: %+v %v", res, err)
	}
	if _, err := g.Embed(context.Background(), &providers.EmbeddingRequest{Model: "gemini-embedding-001", Tokens: [][]int{{1}}}); providers.KindOf(err) != providers.KindBadRequest {
		t.Errorf("token ids: %v", err)
	}
	if _, ok := any(providers.NewAnthropic(providers.Config{})).(providers.Embedder); ok {
		t.Error("the Anthropic adapter claims embeddings")
	}
}

// TestCatalogEmbeddingModels: the embedded catalogue prices embedding models apart from
// chat models and lists them per provider.
func TestCatalogEmbeddingModels(t *testing.T) {
	cat := providers.DefaultCatalog()
	c := cat.EmbeddingCost("openai/text-embedding-3-small", providers.Usage{PromptTokens: 1_000_000})
	if !c.Known || c.TotalUSD != 0.02 {
		t.Errorf("text-embedding-3-small: %+v", c)
	}
	if c := cat.EmbeddingCost("gemini/gemini-embedding-001", providers.Usage{PromptTokens: 1_000_000}); !c.Known || c.TotalUSD != 0.15 {
		t.Errorf("gemini-embedding-001: %+v", c)
	}
	if !slices.Contains(cat.EmbeddingModels("openai"), "openai/text-embedding-3-large") || !slices.Contains(cat.EmbeddingModels("mistral"), "mistral/mistral-embed") {
		t.Errorf("embedding models: %v %v", cat.EmbeddingModels("openai"), cat.EmbeddingModels("mistral"))
	}
	if slices.Contains(cat.ChatModels("openai"), "openai/text-embedding-3-small") {
		t.Error("an embedding model is listed as a chat model")
	}
	if _, ok := cat.Lookup("openai/text-embedding-3-small"); ok {
		t.Error("an embedding model is priced as a chat model")
	}
}

// TestGeminiEmbedBatchesInOrder: more than 100 inputs go to Gemini in batches of 100, some
// at once; the vectors come back in the inputs' order however the batches finish, and one
// batch failing fails the request with that batch's error.
func TestGeminiEmbedBatchesInOrder(t *testing.T) {
	var mu sync.Mutex
	calls, inFlight, most := 0, 0, 0
	failSecond := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Requests []struct {
				Content struct {
					Parts []struct{ Text string } `json:"parts"`
				} `json:"content"`
			} `json:"requests"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		calls++
		inFlight++
		most = max(most, inFlight)
		fail := failSecond && body.Requests[0].Content.Parts[0].Text == "t100"
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		// Each batch waits (up to a second) for another to be in flight: batches sent one
		// after the other never meet, batches sent together always do.
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			mu.Lock()
			met := most >= 2
			mu.Unlock()
			if met {
				break
			}
		}
		if len(body.Requests) > 100 {
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"code":400,"message":"at most 100 requests can be in one batch","status":"INVALID_ARGUMENT"}}`)
			return
		}
		if fail {
			w.WriteHeader(429)
			io.WriteString(w, `{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}`)
			return
		}
		first, _ := strconv.Atoi(strings.TrimPrefix(body.Requests[0].Content.Parts[0].Text, "t"))
		if first == 0 {
			time.Sleep(20 * time.Millisecond) // the first batch answers late (order is by position, not time)
		}
		var vs []string
		for _, q := range body.Requests {
			n, _ := strconv.Atoi(strings.TrimPrefix(q.Content.Parts[0].Text, "t"))
			vs = append(vs, fmt.Sprintf(`{"values":[%d]}`, n))
		}
		fmt.Fprintf(w, `{"embeddings":[%s]}`, strings.Join(vs, ","))
	}))
	defer srv.Close()
	g := providers.NewGemini(providers.Config{BaseURL: srv.URL, APIKey: "k"})
	in := make([]string, 250)
	for i := range in {
		in[i] = fmt.Sprintf("t%d", i)
	}
	res, err := g.Embed(context.Background(), &providers.EmbeddingRequest{Model: "gemini-embedding-001", Input: in})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range res.Vectors {
		if len(v) != 1 || v[0] != float32(i) {
			t.Fatalf("vector %d is %v", i, v)
		}
	}
	if calls != 3 || most < 2 {
		t.Errorf("%d calls, at most %d at once: want 3 batches, some at once", calls, most)
	}
	failSecond = true
	_, err = g.Embed(context.Background(), &providers.EmbeddingRequest{Model: "gemini-embedding-001", Input: in})
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.KindRateLimited {
		t.Fatalf("a batch rate limited: %v", err)
	}
	// The batches answered before the failure (billed by Google) are carried with it.
	if pe.Usage != nil && pe.Usage.PromptTokens <= 0 {
		t.Errorf("usage of the answered batches %+v", pe.Usage)
	}
}

// TestGeminiEmbedFailureCarriesBilledBatches: batches Gemini answered before another
// failed are billed by Google: the failure carries their tokens for the gateway to record.
func TestGeminiEmbedFailureCarriesBilledBatches(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Requests []struct {
				Content struct {
					Parts []struct{ Text string } `json:"parts"`
				} `json:"content"`
			} `json:"requests"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		if body.Requests[0].Content.Parts[0].Text == "w200" {
			w.WriteHeader(503)
			io.WriteString(w, `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`)
			return
		}
		var vs []string
		for range body.Requests {
			vs = append(vs, `{"values":[1]}`)
		}
		fmt.Fprintf(w, `{"embeddings":[%s],"usageMetadata":{"promptTokenCount":%d}}`, strings.Join(vs, ","), 2*len(body.Requests))
	}))
	defer srv.Close()
	in := make([]string, 250)
	for i := range in {
		in[i] = fmt.Sprintf("w%d", i)
	}
	_, err := providers.NewGemini(providers.Config{BaseURL: srv.URL, APIKey: "k"}).Embed(context.Background(), &providers.EmbeddingRequest{Model: "gemini-embedding-001", Input: in})
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.KindOverloaded || pe.Usage == nil || pe.Usage.PromptTokens != 400 {
		t.Fatalf("%v (usage %+v): want the overload with the 2 answered batches' 400 tokens", err, pe)
	}
}

// TestVoyageEmbed: Voyage AI (a preset: VOYAGE_API_KEY) answers OpenAI's embeddings shape
// with usage.total_tokens only, which is the prompt's count; its models are priced from the
// catalogue's voyage/ entries.
func TestVoyageEmbed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer pa-test" {
			w.WriteHeader(401)
			return
		}
		io.WriteString(w, `{"object":"list","data":[{"object":"embedding","embedding":[0.25,0.5],"index":0}],"model":"voyage-3.5","usage":{"total_tokens":6}}`)
	}))
	defer srv.Close()
	reg := providers.FromEnv(func(k string) string {
		return map[string]string{"VOYAGE_API_KEY": "pa-test", "VOYAGE_BASE_URL": srv.URL + "/v1"}[k]
	}, providers.Options{})
	p, err := reg.Lookup("voyage")
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.(providers.Embedder).Embed(context.Background(), &providers.EmbeddingRequest{Model: "voyage-3.5", Input: []string{"a cat sat"}})
	if err != nil || res.Usage.PromptTokens != 6 || res.UsageEstimated || len(res.Vectors) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	if c := providers.DefaultCatalog().EmbeddingCost("voyage/voyage-3.5", providers.Usage{PromptTokens: 1_000_000}); !c.Known || c.TotalUSD != 0.06 {
		t.Errorf("voyage-3.5 priced %+v", c)
	}
}
