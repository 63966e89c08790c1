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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// fakeImagesAPI is a scripted OpenAI images endpoint: n images of the model's kind
// (gpt-image: b64_json with usage; dall-e: url, or b64_json when asked, with a
// revised_prompt for dall-e-3); fail holds the statuses of the next calls; Azure
// deployments named "broken" always fail.
type fakeImagesAPI struct {
	srv   *httptest.Server
	mu    sync.Mutex
	fail  []int
	calls int
	paths []string
	last  map[string]any
	delay time.Duration // before each answer: the time a model takes to draw
}

func newFakeImagesAPI(t *testing.T) *fakeImagesAPI {
	u := &fakeImagesAPI{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.calls++
		u.paths = append(u.paths, r.URL.Path)
		if u.delay > 0 {
			select {
			case <-time.After(u.delay):
			case <-r.Context().Done():
				return
			}
		}
		if !strings.HasSuffix(r.URL.Path, "/images/generations") {
			w.WriteHeader(404)
			return
		}
		if len(u.fail) > 0 || strings.Contains(r.URL.Path, "/deployments/broken/") {
			status := 500
			if len(u.fail) > 0 {
				status, u.fail = u.fail[0], u.fail[1:]
			}
			w.WriteHeader(status)
			io.WriteString(w, `{"error":{"message":"scripted failure","type":"server_error"}}`)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		u.last = nil
		json.Unmarshal(raw, &u.last)
		n := 1
		if f, ok := u.last["n"].(float64); ok {
			n = int(f)
		}
		model, _ := u.last["model"].(string)
		var data []string
		for i := range n {
			switch {
			case strings.HasPrefix(model, "gpt-image"), u.last["response_format"] == "b64_json":
				data = append(data, fmt.Sprintf(`{"b64_json":"aW1hZ2U%d"}`, i))
			case model == "dall-e-3":
				data = append(data, fmt.Sprintf(`{"url":"https://img.example/%d.png","revised_prompt":"a detailed cat"}`, i))
			default:
				data = append(data, fmt.Sprintf(`{"url":"https://img.example/%d.png"}`, i))
			}
		}
		usage := ""
		if strings.HasPrefix(model, "gpt-image") {
			usage = `,"quality":"high","size":"1024x1024","usage":{"input_tokens":50,"input_tokens_details":{"text_tokens":40,"image_tokens":10},"output_tokens":4160,"total_tokens":4210}`
		}
		fmt.Fprintf(w, `{"created":1713833628,"data":[%s]%s}`, strings.Join(data, ","), usage)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func newImagesGateway(t *testing.T, api *fakeImagesAPI, obs *recordingObserver) *Gateway {
	env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": api.srv.URL + "/v1", "ANTHROPIC_API_KEY": "ak",
		"AZURE_API_KEY": "az", "AZURE_API_BASE": api.srv.URL}
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices: providers.DefaultCatalog(), Observer: obs,
		ModelGroups: map[string]ModelGroup{"painters": {Models: []string{"azure/broken", "openai/dall-e-3"}}},
		Sleep:       func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGenerateImages: the body sent (model, prompt, n, size, quality, fields passed
// through); a gpt-image answer's b64_json and usage passed back, priced by its tokens from
// the catalogue and billed to the budget; the call retried after a 503; the observer's
// record of operation image_generation.
func TestGenerateImages(t *testing.T) {
	api := newFakeImagesAPI(t)
	obs := &recordingObserver{}
	g := newImagesGateway(t, api, obs)
	budget := NewBudget(BudgetLimits{MaxCostUSD: 5})
	api.fail = []int{503}
	var req ImageGenerationRequest
	if err := json.Unmarshal([]byte(`{"model":"gpt-image-1","prompt":"a cat","n":2,"size":"1024x1024","quality":"high",
		"output_format":"webp","output_compression":70,"user":"u1","seed":42,"extra_body":{"a":1}}`), &req); err != nil {
		t.Fatal(err)
	}
	resp, err := g.GenerateImages(context.Background(), Scope{Owner: "k1", Budget: budget}, &req)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"model": "gpt-image-1", "prompt": "a cat", "n": 2.0, "size": "1024x1024", "quality": "high",
		"output_format": "webp", "output_compression": 70.0, "user": "u1", "seed": 42.0}
	for k, v := range want {
		if api.last[k] != v {
			t.Errorf("sent %s = %v, want %v", k, api.last[k], v)
		}
	}
	if eb, _ := api.last["extra_body"].(map[string]any); eb["a"] != 1.0 || len(api.last) != len(want)+1 || api.calls != 2 {
		t.Errorf("sent %v in %d calls", api.last, api.calls)
	}
	usd := 40*5e-6 + 10*1e-5 + 4160*4e-5 // gpt-image-1: text in, image in, image out
	if resp.Model != "openai/gpt-image-1" || resp.Created != 1713833628 || len(resp.Data) != 2 || resp.Data[1].B64JSON != "aW1hZ2U1" ||
		resp.Quality != "high" || resp.Usage.InputTokens != 50 || resp.Usage.OutputTokens != 4160 || resp.Usage.TotalTokens != 4210 ||
		resp.Usage.InputTokensDetails == nil || resp.Usage.InputTokensDetails.ImageTokens != 10 ||
		resp.Usage.Costs == nil || !resp.Usage.Costs.PriceKnown || math.Abs(resp.Usage.Costs.TotalTokensCost-usd) > 1e-9 {
		t.Fatalf("response %+v usage %+v", resp, resp.Usage.Costs)
	}
	if used := budget.Used(context.Background()); used.Calls != 1 || math.Abs(used.CostUSD-usd) > 1e-9 {
		t.Errorf("budget %+v, want %v charged", used, usd)
	}
	r := obs.take(t)
	if r.Operation != OperationImageGeneration || r.Outcome != RequestOK || r.Model != "openai/gpt-image-1" || len(r.Attempts) != 2 ||
		r.Usage.PromptTokens != 50 || r.Usage.CompletionTokens != 4160 || math.Abs(r.Usage.Costs.Spent()-usd) > 1e-9 {
		t.Errorf("observed %+v", r)
	}
}

// TestGenerateImagesTakesItsTime: an image takes longer than a chat answer and is paid for
// once drawn, so its one call may last the request's whole time (RequestTimeout) instead of
// a chat call's bound (AttemptTimeout), and it is made once, not cut off and started again.
func TestGenerateImagesTakesItsTime(t *testing.T) {
	api := newFakeImagesAPI(t)
	api.delay = 300 * time.Millisecond
	env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": api.srv.URL + "/v1"}
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices: providers.DefaultCatalog(), AttemptTimeout: 50 * time.Millisecond, RequestTimeout: 10 * time.Second,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := g.GenerateImages(context.Background(), Scope{Owner: "k1"}, &ImageGenerationRequest{Model: "gpt-image-1", Prompt: "a cat"})
	if err != nil || len(resp.Data) != 1 || api.calls != 1 {
		t.Fatalf("slow image: err %v, %d upstream calls, want one answer from one call", err, api.calls)
	}
	// A caller's own bound on a call (Scope.CallTimeout, a key's timeout) still holds.
	api.calls = 0
	_, err = g.GenerateImages(context.Background(), Scope{Owner: "k1", CallTimeout: 50 * time.Millisecond}, &ImageGenerationRequest{Model: "gpt-image-1", Prompt: "a cat"})
	if err == nil {
		t.Errorf("a 50 ms CallTimeout let a 300 ms image through")
	}
}

// TestGenerateImagesDallE: the default model is dall-e-2 (url answers, priced per image of
// its size); dall-e-3 is priced per image by quality and size, its revised_prompt passed
// back; b64_json when asked; a group's failing Azure member falls back to the next; an
// unpriced model is answered with price_known false.
func TestGenerateImagesDallE(t *testing.T) {
	api := newFakeImagesAPI(t)
	obs := &recordingObserver{}
	g := newImagesGateway(t, api, obs)
	ctx := context.Background()

	resp, err := g.GenerateImages(ctx, Scope{}, &ImageGenerationRequest{Prompt: "a cat", N: ptr(3), Size: "256x256"})
	if err != nil {
		t.Fatal(err)
	}
	if api.last["model"] != "dall-e-2" || resp.Model != "openai/dall-e-2" || len(resp.Data) != 3 || resp.Data[0].URL != "https://img.example/0.png" ||
		math.Abs(resp.Usage.Costs.TotalTokensCost-3*2.4414e-07*256*256) > 1e-9 || resp.Usage.InputTokens != 0 {
		t.Errorf("dall-e-2: %+v costs %+v", resp, resp.Usage.Costs)
	}
	obs.take(t)

	resp, err = g.GenerateImages(ctx, Scope{}, &ImageGenerationRequest{Model: "dall-e-3", Prompt: "a cat", Size: "1024x1792", Quality: "hd", Style: "vivid"})
	if err != nil {
		t.Fatal(err)
	}
	if api.last["style"] != "vivid" || api.last["quality"] != "hd" || resp.Data[0].RevisedPrompt != "a detailed cat" ||
		math.Abs(resp.Usage.Costs.TotalTokensCost-6.539e-08*1024*1792) > 1e-9 || !resp.Usage.Costs.PriceKnown {
		t.Errorf("dall-e-3: %+v costs %+v", resp, resp.Usage.Costs)
	}
	obs.take(t)

	resp, err = g.GenerateImages(ctx, Scope{}, &ImageGenerationRequest{Model: "openai/dall-e-2", Prompt: "a cat", ResponseFormat: "b64_json"})
	if err != nil || resp.Data[0].B64JSON != "aW1hZ2U0" || resp.Data[0].URL != "" {
		t.Errorf("b64_json: %+v %v", resp, err)
	}
	obs.take(t)

	api.paths = nil
	resp, err = g.GenerateImages(ctx, Scope{}, &ImageGenerationRequest{Model: "painters", Prompt: "a cat"})
	if err != nil || resp.Model != "openai/dall-e-3" || len(api.paths) < 2 || api.paths[0] != "/openai/deployments/broken/images/generations" ||
		api.paths[len(api.paths)-1] != "/v1/images/generations" {
		t.Fatalf("group: %+v %v via %v", resp, err, api.paths)
	}
	if r := obs.take(t); r.Model != "openai/dall-e-3" || len(r.Attempts) < 2 || r.Attempts[0].Model != "azure/broken" {
		t.Errorf("group observed %+v", r)
	}

	resp, err = g.GenerateImages(ctx, Scope{}, &ImageGenerationRequest{Model: "openai/my-painter", Prompt: "a cat"})
	if err != nil || resp.Usage.Costs.PriceKnown || resp.Usage.Costs.Spent() != 0 {
		t.Errorf("unpriced: %+v %v", resp, err)
	}
	obs.take(t)
}

// TestImageGenerationValidation: each refusal names its field, before any call; a key held
// to other models is refused.
func TestImageGenerationValidation(t *testing.T) {
	api := newFakeImagesAPI(t)
	g := newImagesGateway(t, api, &recordingObserver{})
	long := strings.Repeat("a", 1001)
	for _, tc := range []struct {
		body, field, says string
	}{
		{`{}`, "prompt", "required"},
		{`{"prompt":"  "}`, "prompt", "required"},
		{`{"prompt":"x","n":0}`, "n", "between 1 and 10"},
		{`{"prompt":"x","n":11}`, "n", "between 1 and 10"},
		{`{"prompt":"x","size":"big"}`, "size", "WIDTHxHEIGHT"},
		{`{"prompt":"x","quality":"ultra"}`, "quality", "must be one of"},
		{`{"prompt":"x","response_format":"png"}`, "response_format", "url, b64_json"},
		{`{"prompt":"x","style":"bold"}`, "style", "vivid, natural"},
		{`{"prompt":"x","background":"red"}`, "background", "must be one of"},
		{`{"prompt":"x","output_format":"gif"}`, "output_format", "png, jpeg, webp"},
		{`{"prompt":"x","moderation":"high"}`, "moderation", "low, auto"},
		{`{"prompt":"x","output_compression":101,"output_format":"jpeg"}`, "output_compression", "between 0 and 100"},
		{`{"prompt":"x","output_compression":50}`, "output_compression", "jpeg or webp"},
		{`{"prompt":"x","background":"transparent","output_format":"jpeg"}`, "background", "png or webp"},
		{`{"prompt":"x","partial_images":4}`, "partial_images", "between 0 and 3"},
		{`{"prompt":"x","stream":true}`, "stream", "not served"},
		{`{"prompt":"x","tags":[""]}`, "tags", "tag 0"},
		{`{"model":"dall-e-3","prompt":"x","n":2}`, "n", "n=1"},
		{`{"model":"dall-e-3","prompt":"x","size":"256x256"}`, "size", "1024x1792"},
		{`{"model":"dall-e-3","prompt":"x","quality":"high"}`, "quality", "standard or hd"},
		{`{"model":"dall-e-3","prompt":"x","background":"opaque"}`, "background", "gpt-image models only"},
		{`{"model":"dall-e-2","prompt":"` + long + `"}`, "prompt", "at most 1000"},
		{`{"model":"dall-e-2","prompt":"x","style":"vivid"}`, "style", "dall-e-3 only"},
		{`{"model":"dall-e-2","prompt":"x","quality":"hd"}`, "quality", "standard only"},
		{`{"model":"gpt-image-1","prompt":"x","response_format":"url"}`, "response_format", "b64_json"},
		{`{"model":"gpt-image-1","prompt":"x","style":"vivid"}`, "style", "dall-e-3 only"},
		{`{"model":"anthropic/claude-3-5-haiku-latest","prompt":"x"}`, "model", `provider "anthropic"`},
		{`{"model":"acme/painter","prompt":"x"}`, "model", "unknown provider"},
	} {
		var req ImageGenerationRequest
		if err := json.Unmarshal([]byte(tc.body), &req); err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		_, err := g.GenerateImages(context.Background(), Scope{}, &req)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field || !strings.Contains(ve.Error(), tc.says) {
			t.Errorf("%.80s: %v, want %s saying %q", tc.body, err, tc.field, tc.says)
		}
	}
	if api.calls != 0 {
		t.Errorf("%d calls for refused requests", api.calls)
	}

	held := NewBudget(BudgetLimits{AllowedModels: []string{"openai/dall-e-3"}})
	_, err := g.GenerateImages(context.Background(), Scope{Budget: held}, &ImageGenerationRequest{Model: "gpt-image-1", Prompt: "x"})
	if !errors.Is(err, ErrModelNotAllowed) || api.calls != 0 {
		t.Errorf("held key: %v after %d calls", err, api.calls)
	}
	if _, err := g.GenerateImages(context.Background(), Scope{Budget: held}, &ImageGenerationRequest{Model: "dall-e-3", Prompt: "x"}); err != nil {
		t.Errorf("allowed model: %v", err)
	}

	// A gpt-image-only field without a model picks gpt-image-1, as OpenAI does.
	if resp, err := g.GenerateImages(context.Background(), Scope{}, &ImageGenerationRequest{Prompt: "x", Background: "transparent"}); err != nil ||
		resp.Model != "openai/gpt-image-1" {
		t.Errorf("default gpt-image: %+v %v", resp, err)
	}
}
