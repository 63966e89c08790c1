package providers_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// imagesUpstream is a fake OpenAI images endpoint: it records the path, query, headers and
// body of the last call and answers with answer.
func imagesUpstream(t *testing.T, answer string) (srv *httptest.Server, last func() (path, query string, h http.Header, body map[string]any)) {
	var path, query string
	var hdr http.Header
	var body map[string]any
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, query, hdr = r.URL.Path, r.URL.RawQuery, r.Header.Clone()
		raw, _ := io.ReadAll(r.Body)
		body = nil
		json.Unmarshal(raw, &body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	return srv, func() (string, string, http.Header, map[string]any) { return path, query, hdr, body }
}

// TestOpenAIGenerateImages: the JSON body OpenAI's images API takes (known fields when set,
// unknown ones passed through, nothing unset), the images and gpt-image's usage read back;
// Azure OpenAI posts to the deployment's path with its api-version and api-key.
func TestOpenAIGenerateImages(t *testing.T) {
	answer := `{"created":1713833628,"background":"opaque","output_format":"png","quality":"high","size":"1024x1024",
		"data":[{"b64_json":"aGVsbG8="},{"url":"https://img.example/2.png","revised_prompt":"a red cat"}],
		"usage":{"input_tokens":50,"input_tokens_details":{"text_tokens":40,"image_tokens":10},"output_tokens":4160,"total_tokens":4210}}`
	srv, last := imagesUpstream(t, answer)
	p := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-test"})
	comp := 80
	res, err := p.GenerateImages(context.Background(), &providers.ImageRequest{Model: "gpt-image-1", Prompt: "a cat", N: 2, Size: "1024x1024",
		Quality: "high", OutputFormat: "webp", OutputCompression: &comp, User: "u1",
		Extra: map[string]json.RawMessage{"seed": json.RawMessage(`7`), "prompt": json.RawMessage(`"overridden"`)}})
	if err != nil {
		t.Fatal(err)
	}
	path, _, h, body := last()
	want := map[string]any{"model": "gpt-image-1", "prompt": "a cat", "n": 2.0, "size": "1024x1024", "quality": "high",
		"output_format": "webp", "output_compression": 80.0, "user": "u1", "seed": 7.0}
	if path != "/v1/images/generations" || h.Get("Authorization") != "Bearer sk-test" || len(body) != len(want) {
		t.Fatalf("sent %s %v %v", path, h, body)
	}
	for k, v := range want {
		if body[k] != v {
			t.Errorf("body[%s] = %v, want %v", k, body[k], v)
		}
	}
	if res.Created != 1713833628 || len(res.Data) != 2 || res.Data[0].B64JSON != "aGVsbG8=" || res.Data[1].URL != "https://img.example/2.png" ||
		res.Data[1].RevisedPrompt != "a red cat" || res.Quality != "high" || res.Size != "1024x1024" || res.Usage == nil ||
		res.Usage.InputTokens != 50 || res.Usage.InputTokensDetails.ImageTokens != 10 || res.Usage.OutputTokens != 4160 {
		t.Errorf("answer %+v usage %+v", res, res.Usage)
	}

	az := providers.NewAzure(providers.AzureConfig{Config: providers.Config{BaseURL: srv.URL, APIKey: "az-key"}, APIVersion: "2025-04-01-preview"})
	if !providers.ServesImages(az) || !providers.ServesImages(p) {
		t.Fatal("OpenAI-format adapters serve images")
	}
	if _, err := az.GenerateImages(context.Background(), &providers.ImageRequest{Model: "my-dalle", Prompt: "a cat"}); err != nil {
		t.Fatal(err)
	}
	path, query, h, body := last()
	if path != "/openai/deployments/my-dalle/images/generations" || query != "api-version=2025-04-01-preview" || h.Get("Api-Key") != "az-key" ||
		body["model"] != "my-dalle" || body["n"] != nil || body["size"] != nil {
		t.Errorf("azure sent %s?%s %v %v", path, query, h, body)
	}
}

// TestOpenAIGenerateImagesBadAnswer: an answer without images is a bad response.
func TestOpenAIGenerateImagesBadAnswer(t *testing.T) {
	for _, answer := range []string{`{"created":1,"data":[]}`, `{"created":1,"data":[{"revised_prompt":"x"}]}`} {
		srv, _ := imagesUpstream(t, answer)
		p := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL, APIKey: "k"})
		_, err := p.GenerateImages(context.Background(), &providers.ImageRequest{Model: "dall-e-2", Prompt: "x"})
		var pe *providers.Error
		if !errors.As(err, &pe) || pe.Kind != providers.KindBadResponse {
			t.Errorf("%s: %v", answer, err)
		}
	}
}

// TestImageCost: the embedded catalogue prices gpt-image answers by their tokens, dall-e-3
// per image by quality and size, dall-e-2 per image by size, Azure deployments by Azure's
// entries; an unlisted model or size is an unknown price.
func TestImageCost(t *testing.T) {
	c := providers.DefaultCatalog()
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	cases := []struct {
		name  string
		model string
		u     providers.ImageUsage
		usd   float64
		known bool
	}{
		// 40 text tokens at $5/M, 10 image tokens at $10/M, 4160 image tokens out at $40/M.
		{"gpt-image-1 tokens", "openai/gpt-image-1", providers.ImageUsage{InputTokens: 50, InputTextTokens: 40, InputImageTokens: 10, OutputTokens: 4160, Images: 1},
			40*5e-6 + 10*1e-5 + 4160*4e-5, true},
		{"gpt-image-1 no details", "openai/gpt-image-1", providers.ImageUsage{InputTokens: 50, OutputTokens: 1000, Images: 1}, 50*5e-6 + 1000*4e-5, true},
		{"dall-e-3 hd tall", "openai/dall-e-3", providers.ImageUsage{Images: 1, Size: "1024x1792", Quality: "hd"}, 6.539e-08 * 1024 * 1792, true},
		{"dall-e-3 default", "openai/dall-e-3", providers.ImageUsage{Images: 1}, 3.81469e-08 * 1024 * 1024, true},
		{"dall-e-2 two small", "openai/dall-e-2", providers.ImageUsage{Images: 2, Size: "256x256"}, 2 * 2.4414e-07 * 256 * 256, true},
		{"dall-e-2 default", "openai/dall-e-2", providers.ImageUsage{Images: 3}, 3 * 1.9e-08 * 1024 * 1024, true},
		{"azure dall-e-3", "azure/dall-e-3", providers.ImageUsage{Images: 1, Size: "1792x1024", Quality: "standard"}, 4.359e-08 * 1792 * 1024, true},
		{"unknown model", "openai/my-painter", providers.ImageUsage{Images: 1}, 0, false},
		{"unknown size", "openai/dall-e-3", providers.ImageUsage{Images: 1, Size: "640x480"}, 0.04, true}, // the model's per-image price
	}
	for _, tc := range cases {
		got := c.ImageCost(tc.model, tc.u)
		if got.Known != tc.known || !near(got.TotalUSD, tc.usd) || !near(got.InputUSD+got.OutputUSD, got.TotalUSD) {
			t.Errorf("%s: %+v, want %v known %v", tc.name, got, tc.usd, tc.known)
		}
	}
	// Image models stay out of the chat catalogue.
	if _, ok := c.Lookup("openai/dall-e-3"); ok {
		t.Error("dall-e-3 is priced as a chat model")
	}
}
