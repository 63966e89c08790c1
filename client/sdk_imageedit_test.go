package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
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

// imageEditUpstream answers OpenAI's POST /images/edits as OpenAI does (gpt-image:
// b64_json with usage; dall-e-2: url, or b64_json when asked), keeping the form it got.
type imageEditUpstream struct {
	mu     sync.Mutex
	calls  int
	fields map[string][]string
	files  map[string][][]byte
	srv    *httptest.Server
}

func newImageEditUpstream(t *testing.T) *imageEditUpstream {
	u := &imageEditUpstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.calls++
		if r.URL.Path != "/images/edits" || r.Header.Get("Authorization") != "Bearer sk-test" || r.ParseMultipartForm(32<<20) != nil {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		u.fields, u.files = r.MultipartForm.Value, map[string][][]byte{}
		for name, fhs := range r.MultipartForm.File {
			for _, fh := range fhs {
				f, _ := fh.Open()
				b, _ := io.ReadAll(f)
				f.Close()
				u.files[name] = append(u.files[name], b)
			}
		}
		model := r.FormValue("model")
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(model, "gpt-image") {
			io.WriteString(w, `{"created":1713833630,"data":[{"b64_json":"ZWRpdGVk"}],"quality":"low","size":"1024x1024",`+
				`"usage":{"input_tokens":300,"input_tokens_details":{"text_tokens":20,"image_tokens":280},"output_tokens":272,"total_tokens":572}}`)
			return
		}
		if r.FormValue("response_format") == "b64_json" {
			io.WriteString(w, `{"created":1713833630,"data":[{"b64_json":"ZWRpdGVk"}]}`)
			return
		}
		fmt.Fprintf(w, `{"created":1713833630,"data":[{"url":"https://img.example/edit.png"}]}`)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func editPNG(t *testing.T, w, h int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewNRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestOfficialGoSDKImagesEdit drives POST /v1/images/edits with the official Go SDK:
// gpt-image-1 with two images (image[]) and a mask, its usage and cost; dall-e-2 with one
// image and its URL; refusals naming their field before any upstream call.
func TestOfficialGoSDKImagesEdit(t *testing.T) {
	up := newImageEditUpstream(t)
	_, base := realServerURL(t, envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.srv.URL}))
	ctx := context.Background()
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	a, b, mask := editPNG(t, 8, 8), editPNG(t, 12, 12), editPNG(t, 8, 8)
	res, err := c.Images.Edit(ctx, openai.ImageEditParams{Model: openai.ImageModelGPTImage1, Prompt: "put them together",
		Image:         openai.ImageEditParamsImageUnion{OfFileArray: []io.Reader{openai.File(bytes.NewReader(a), "a.png", "image/png"), openai.File(bytes.NewReader(b), "b.png", "image/png")}},
		Mask:          openai.File(bytes.NewReader(mask), "mask.png", "image/png"),
		Quality:       openai.ImageEditParamsQualityLow,
		InputFidelity: openai.ImageEditParamsInputFidelityHigh})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 1 || res.Data[0].B64JSON != "ZWRpdGVk" || res.Usage.InputTokens != 300 || res.Usage.TotalTokens != 572 ||
		res.Usage.InputTokensDetails.ImageTokens != 280 || res.Created != 1713833630 {
		t.Errorf("gpt-image-1: %+v", res)
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
	usd := 20*5e-6 + 280*1e-5 + 272*4e-5
	if err := json.Unmarshal([]byte(res.RawJSON()), &ext); err != nil || ext.Model != "openai/gpt-image-1" || !ext.Usage.Costs.Known ||
		math.Abs(ext.Usage.Costs.Total-usd) > 1e-9 {
		t.Errorf("extensions %s", res.RawJSON())
	}
	if f := up.files["image[]"]; len(f) != 2 || !bytes.Equal(f[0], a) || !bytes.Equal(f[1], b) || len(up.files["mask"]) != 1 ||
		up.fields["prompt"][0] != "put them together" || up.fields["input_fidelity"][0] != "high" || up.fields["quality"][0] != "low" {
		t.Errorf("upstream got %v with %d images", up.fields, len(up.files["image[]"]))
	}

	res, err = c.Images.Edit(ctx, openai.ImageEditParams{Prompt: "a hat", Size: openai.ImageEditParamsSize256x256,
		Image: openai.ImageEditParamsImageUnion{OfFile: openai.File(bytes.NewReader(a), "cat.png", "image/png")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 1 || res.Data[0].URL != "https://img.example/edit.png" || up.fields["model"][0] != "dall-e-2" || len(up.files["image"]) != 1 {
		t.Errorf("dall-e-2: %+v sent %v", res, up.fields)
	}

	var apiErr *openai.Error
	calls := up.calls
	wide := editPNG(t, 16, 8)
	for _, tc := range []struct {
		p     openai.ImageEditParams
		param string
	}{
		{openai.ImageEditParams{Prompt: "", Image: openai.ImageEditParamsImageUnion{OfFile: openai.File(bytes.NewReader(a), "a.png", "image/png")}}, "prompt"},
		{openai.ImageEditParams{Prompt: "x", Model: openai.ImageModelDallE2, Image: openai.ImageEditParamsImageUnion{OfFile: openai.File(bytes.NewReader(wide), "w.png", "image/png")}}, "image"},
		{openai.ImageEditParams{Prompt: "x", Model: openai.ImageModelGPTImage1, ResponseFormat: openai.ImageEditParamsResponseFormatURL,
			Image: openai.ImageEditParamsImageUnion{OfFile: openai.File(bytes.NewReader(a), "a.png", "image/png")}}, "response_format"},
		{openai.ImageEditParams{Prompt: "x", Model: "anthropic/claude-3-5-haiku-latest", Image: openai.ImageEditParamsImageUnion{OfFile: openai.File(bytes.NewReader(a), "a.png", "image/png")}}, "model"},
	} {
		_, err := c.Images.Edit(ctx, tc.p)
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != tc.param {
			t.Errorf("want a 400 naming %s, got %v", tc.param, err)
		}
	}
	if up.calls != calls {
		t.Errorf("upstream called %d more times: refusals must not reach it", up.calls-calls)
	}
}

// TestClientEditImages: the Go client's EditImages sends the image, mask and fields as a
// form and reads the edited images with the model and cost; a refusal is an *Error naming
// the field.
func TestClientEditImages(t *testing.T) {
	up := newImageEditUpstream(t)
	c, _ := realServerURL(t, envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.srv.URL}))
	ctx := context.Background()
	img, mask := editPNG(t, 8, 8), editPNG(t, 8, 8)
	res, err := c.EditImages(ctx, &client.ImageEditRequest{Prompt: "a hat", Size: "512x512", ResponseFormat: "b64_json",
		Images: []client.ImageFile{{Name: "cat.png", Data: img}}, Mask: &client.ImageFile{Name: "mask.png", Data: mask}, Extra: map[string]string{"seed": "5"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Model != "openai/dall-e-2" || len(res.Data) != 1 || res.Data[0].B64JSON == "" || res.Usage.Costs == nil ||
		!res.Usage.Costs.PriceKnown || math.Abs(res.Usage.Costs.TotalTokensCost-6.86e-08*512*512) > 1e-12 {
		t.Errorf("edit %+v", res)
	}
	if !bytes.Equal(up.files["image"][0], img) || !bytes.Equal(up.files["mask"][0], mask) || up.fields["seed"][0] != "5" || up.fields["size"][0] != "512x512" {
		t.Errorf("upstream got %v", up.fields)
	}
	_, err = c.EditImages(ctx, &client.ImageEditRequest{Prompt: "x"})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || !strings.Contains(apiErr.Message, "image") {
		t.Errorf("refusal: %v", err)
	}
}
