package server

import (
	"encoding/json"
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

// fakeImagesUpstream answers OpenAI's /v1/images/generations: a dall-e-3 url image, and
// counts the calls.
type fakeImagesUpstream struct {
	mu    sync.Mutex
	calls int
	last  map[string]any
}

func (u *fakeImagesUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls++
	if r.URL.Path != "/v1/images/generations" {
		w.WriteHeader(404)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	u.last = nil
	json.Unmarshal(raw, &u.last)
	io.WriteString(w, `{"created":1713833628,"data":[{"url":"https://img.example/0.png","revised_prompt":"a calm cat"}]}`)
}

// imagesServer is a server whose openai provider calls a fake images upstream, with the
// usage log.
func imagesServer(t *testing.T) (*httptest.Server, *Server, *fakeImagesUpstream) {
	t.Helper()
	up := &fakeImagesUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": ups.URL + "/v1"}
	st := newTestStore(t)
	rec := usagelog.New(usagelog.Options{})
	g, err := completions.New(completions.Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices: providers.DefaultCatalog(), Store: st, Observer: rec})
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

// TestImageGenerationRoute: POST /v1/images/generations answers OpenAI's shape with the
// gateway's model and usage.costs (dall-e-3 hd priced per image), passes unknown fields
// through; a refusal names its field in OpenAI's envelope; a virtual key is held to its
// models and charged what the answer cost; the usage log records operation
// image_generation; the OpenAPI document has the route.
func TestImageGenerationRoute(t *testing.T) {
	hs, s, up := imagesServer(t)
	vk := issue(t, s, `{"name":"art","models":["openai/dall-e-3"],"max_budget_usd":1}`)
	body := `{"model":"dall-e-3","prompt":"a cat","quality":"hd","size":"1792x1024","seed":3}`
	resp, b := do2(t, "POST", hs.URL+"/v1/images/generations", vk.Key, body, nil)
	var got completions.ImageGenerationResponse
	if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil {
		t.Fatalf("images: %d %s", resp.StatusCode, b)
	}
	want := 6.539e-08 * 1792 * 1024
	if got.Model != "openai/dall-e-3" || len(got.Data) != 1 || got.Data[0].URL != "https://img.example/0.png" || got.Data[0].RevisedPrompt != "a calm cat" ||
		got.Usage.Costs == nil || !got.Usage.Costs.PriceKnown || math.Abs(got.Usage.Costs.TotalTokensCost-want) > 1e-12 {
		t.Errorf("answer %s", b)
	}
	if up.last["seed"] != 3.0 || up.last["model"] != "dall-e-3" {
		t.Errorf("sent %v", up.last)
	}
	resp, b = do2(t, "POST", hs.URL+"/v1/images/generations", vk.Key, `{"model":"dall-e-3","prompt":"a cat","n":2}`, nil)
	if e := wantOpenAIError(t, "n for dall-e-3", resp, b, 400, "invalid_request_error", ""); e.Param == nil || *e.Param != "n" {
		t.Errorf("param %v", e.Param)
	}
	calls := up.calls
	resp, b = do2(t, "POST", hs.URL+"/v1/images/generations", vk.Key, `{"model":"gpt-image-1","prompt":"a cat"}`, nil)
	wantOpenAIError(t, "a model the key may not call", resp, b, 401, "key_model_access_denied", "401")
	if up.calls != calls {
		t.Error("a refused model was called")
	}
	info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID)
	if math.Abs(info.Spend.CostUSD-want) > 1e-12 || info.Spend.Requests != 1 {
		t.Errorf("spend %+v, want %v in 1 request", info.Spend, want)
	}
	if u, raw, ok := answeredAfterRefused(t, s, vk.Key); !ok || u.Operation != "image_generation" ||
		u.Model != "openai/dall-e-3" || !u.PriceKnown {
		t.Errorf("usage log %s", raw)
	}

	doc, err := http.Get(hs.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer doc.Body.Close()
	raw, _ := io.ReadAll(doc.Body)
	var spec struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	json.Unmarshal(raw, &spec)
	if op := string(spec.Paths["/v1/images/generations"]["post"]); !strings.Contains(op, `"prompt"`) || !strings.Contains(op, `"revised_prompt"`) || !strings.Contains(op, `"b64_json"`) {
		t.Errorf("openapi: %.300s", op)
	}
}

// answeredAfterRefused reads key's request history (/api/v1/usage/requests) and returns
// its one answered request, the oldest, after checking every later one is a refusal
// recorded with its request id (outcome error, no attempt: see
// TestRequestIDOnGatewayAnswers); ok is false, with the raw history, when it is not so.
func answeredAfterRefused(t *testing.T, s http.Handler, key string) (answered usagelog.Request, raw string, ok bool) {
	t.Helper()
	r := do(t, s, "GET", "/api/v1/usage/requests", key, "")
	var usage struct {
		Data []usagelog.Request `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.raw), &usage); err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, u := range usage.Data {
		if u.Outcome == "error" && len(u.Attempts) == 0 && u.RequestID != "" {
			refused++
		}
	}
	if len(usage.Data) == 0 || refused != len(usage.Data)-1 {
		return usagelog.Request{}, r.raw, false
	}
	return usage.Data[len(usage.Data)-1], r.raw, true
}
