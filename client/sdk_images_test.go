package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"

	"github.com/switchyard-ai/switchyard/client"
)

// imagesUpstream answers OpenAI's POST /images/generations as OpenAI does: gpt-image
// models b64_json images with usage, dall-e models URLs (b64_json when asked) with a
// revised prompt for dall-e-3; it keeps the bodies it was sent.
type imagesUpstream struct {
	mu     sync.Mutex
	bodies []map[string]any
	srv    *httptest.Server
}

func newImagesUpstream(t *testing.T) *imagesUpstream {
	u := &imagesUpstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/images/generations" || r.Header.Get("Authorization") != "Bearer sk-test" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		u.mu.Lock()
		u.bodies = append(u.bodies, body)
		u.mu.Unlock()
		n := 1
		if f, ok := body["n"].(float64); ok {
			n = int(f)
		}
		model, _ := body["model"].(string)
		data := make([]string, n)
		for i := range data {
			switch {
			case strings.HasPrefix(model, "gpt-image"), body["response_format"] == "b64_json":
				data[i] = `{"b64_json":"iVBORw0KGgo="}`
			default:
				data[i] = fmt.Sprintf(`{"url":"https://img.example/%d.png","revised_prompt":"a cat on a mat"}`, i)
			}
		}
		extra := ""
		if strings.HasPrefix(model, "gpt-image") {
			extra = `,"background":"opaque","output_format":"png","quality":"medium","size":"1024x1024",` +
				`"usage":{"input_tokens":20,"input_tokens_details":{"text_tokens":20,"image_tokens":0},"output_tokens":1056,"total_tokens":1076}`
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"created":1713833628,"data":[%s]%s}`, strings.Join(data, ","), extra)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *imagesUpstream) last() map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.bodies[len(u.bodies)-1]
}

// TestOfficialGoSDKImagesGenerate drives POST /v1/images/generations with the official Go
// SDK: dall-e-3 (url, revised prompt, the fields sent on), gpt-image-1 (b64_json and its
// usage), and refusals naming their field before any upstream call.
func TestOfficialGoSDKImagesGenerate(t *testing.T) {
	up := newImagesUpstream(t)
	_, base := realServerURL(t, envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.srv.URL}))
	ctx := context.Background()
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))

	res, err := c.Images.Generate(ctx, openai.ImageGenerateParams{Model: openai.ImageModelDallE3, Prompt: "a cat",
		Size: openai.ImageGenerateParamsSize1792x1024, Quality: openai.ImageGenerateParamsQualityHD, Style: openai.ImageGenerateParamsStyleNatural,
		User: openai.String("u-7")}, option.WithJSONSet("seed", 9))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 1 || res.Data[0].URL != "https://img.example/0.png" || res.Data[0].RevisedPrompt != "a cat on a mat" || res.Created != 1713833628 {
		t.Errorf("dall-e-3: %+v", res)
	}
	var ext struct {
		Model string `json:"model"`
		Usage struct {
			Costs struct {
				Total float64 `json:"total_tokens_cost"`
				Known bool    `json:"price_known"`
			} `json:"costs"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(res.RawJSON()), &ext); err != nil || ext.Model != "openai/dall-e-3" || !ext.Usage.Costs.Known ||
		math.Abs(ext.Usage.Costs.Total-6.539e-08*1792*1024) > 1e-12 {
		t.Errorf("extensions %s", res.RawJSON())
	}
	b := up.last()
	if b["model"] != "dall-e-3" || b["prompt"] != "a cat" || b["size"] != "1792x1024" || b["quality"] != "hd" || b["style"] != "natural" ||
		b["user"] != "u-7" || b["seed"] != 9.0 {
		t.Errorf("upstream got %v", b)
	}

	res, err = c.Images.Generate(ctx, openai.ImageGenerateParams{Model: openai.ImageModelGPTImage1, Prompt: "a cat", N: openai.Int(2),
		Quality: openai.ImageGenerateParamsQualityMedium, OutputFormat: openai.ImageGenerateParamsOutputFormatPNG})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 2 || res.Data[1].B64JSON != "iVBORw0KGgo=" || res.Usage.InputTokens != 20 || res.Usage.OutputTokens != 1056 ||
		res.Usage.TotalTokens != 1076 || res.Quality != "medium" {
		t.Errorf("gpt-image-1: %+v", res)
	}

	var apiErr *openai.Error
	calls := len(up.bodies)
	for _, tc := range []struct {
		p     openai.ImageGenerateParams
		param string
	}{
		{openai.ImageGenerateParams{Prompt: ""}, "prompt"},
		{openai.ImageGenerateParams{Prompt: "x", Model: openai.ImageModelDallE3, N: openai.Int(2)}, "n"},
		{openai.ImageGenerateParams{Prompt: "x", Model: openai.ImageModelGPTImage1, ResponseFormat: openai.ImageGenerateParamsResponseFormatURL}, "response_format"},
		{openai.ImageGenerateParams{Prompt: "x", Model: openai.ImageModelDallE2, Size: openai.ImageGenerateParamsSize1792x1024}, "size"},
		{openai.ImageGenerateParams{Prompt: "x", Model: "anthropic/claude-3-5-haiku-latest"}, "model"},
	} {
		_, err := c.Images.Generate(ctx, tc.p)
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != tc.param {
			t.Errorf("want a 400 naming %s, got %v", tc.param, err)
		}
	}
	if n := len(up.bodies); n != calls {
		t.Errorf("upstream called %d more times: refusals must not reach it", n-calls)
	}
}

// TestClientGenerateImages: the Go client's GenerateImages sends the fields and extras,
// reads the images with the model and cost, and surfaces a refusal as an *Error naming
// the field.
func TestClientGenerateImages(t *testing.T) {
	up := newImagesUpstream(t)
	c, _ := realServerURL(t, envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.srv.URL}))
	ctx := context.Background()
	res, err := c.GenerateImages(ctx, &client.ImageRequest{Prompt: "a cat", N: 2, Size: "512x512", ResponseFormat: "b64_json",
		Extra: map[string]any{"seed": 5}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Model != "openai/dall-e-2" || len(res.Data) != 2 || res.Data[0].B64JSON == "" || res.Usage.Costs == nil ||
		!res.Usage.Costs.PriceKnown || math.Abs(res.Usage.Costs.TotalTokensCost-2*6.86e-08*512*512) > 1e-12 {
		t.Errorf("images %+v", res)
	}
	if b := up.last(); b["model"] != "dall-e-2" || b["n"] != 2.0 || b["size"] != "512x512" || b["seed"] != 5.0 {
		t.Errorf("upstream got %v", b)
	}
	_, err = c.GenerateImages(ctx, &client.ImageRequest{Model: "dall-e-3", Prompt: "x", N: 3})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || !strings.Contains(apiErr.Message, "n") {
		t.Errorf("refusal: %v", err)
	}
}
