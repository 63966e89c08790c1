package completions

import (
	"bytes"
	"context"
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
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// testPNG encodes a w x h transparent PNG (an edit's image or mask).
func testPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewNRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fakeImageEditAPI is a scripted OpenAI POST /images/edits: it reads the multipart form
// (its fields and files), answers as OpenAI does (gpt-image: b64_json with usage; dall-e-2:
// url or b64_json when asked) and refuses a body that is not a form.
type fakeImageEditAPI struct {
	srv    *httptest.Server
	mu     sync.Mutex
	calls  int
	fields map[string][]string
	files  map[string][][]byte
	names  map[string][]string
}

func newFakeImageEditAPI(t *testing.T) *fakeImageEditAPI {
	u := &fakeImageEditAPI{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.calls++
		if !strings.HasSuffix(r.URL.Path, "/images/edits") {
			w.WriteHeader(404)
			return
		}
		if err := r.ParseMultipartForm(64 << 20); err != nil {
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, err.Error())
			return
		}
		u.fields, u.files, u.names = r.MultipartForm.Value, map[string][][]byte{}, map[string][]string{}
		for name, fhs := range r.MultipartForm.File {
			for _, fh := range fhs {
				f, _ := fh.Open()
				b, _ := io.ReadAll(f)
				f.Close()
				u.files[name] = append(u.files[name], b)
				u.names[name] = append(u.names[name], fh.Filename)
			}
		}
		model := r.FormValue("model")
		n := 1
		fmt.Sscan(r.FormValue("n"), &n)
		var data []string
		for i := range n {
			if strings.HasPrefix(model, "gpt-image") || r.FormValue("response_format") == "b64_json" {
				data = append(data, fmt.Sprintf(`{"b64_json":"ZWRpdA%d"}`, i))
			} else {
				data = append(data, fmt.Sprintf(`{"url":"https://img.example/e%d.png"}`, i))
			}
		}
		usage := ""
		if strings.HasPrefix(model, "gpt-image") {
			usage = `,"quality":"high","size":"1024x1024","usage":{"input_tokens":350,"input_tokens_details":{"text_tokens":30,"image_tokens":320},"output_tokens":4160,"total_tokens":4510}`
		}
		fmt.Fprintf(w, `{"created":1713833629,"data":[%s]%s}`, strings.Join(data, ","), usage)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func newImageEditGateway(t *testing.T, api *fakeImageEditAPI, obs *recordingObserver) *Gateway {
	env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": api.srv.URL + "/v1", "ANTHROPIC_API_KEY": "ak"}
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices: providers.DefaultCatalog(), Observer: obs, Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestEditImages: gpt-image-1 with two images and a mask: the multipart form sent upstream
// (image[] twice with their bytes and names, the mask, the text fields and a passed-through
// field), the answer's images and usage, priced by its tokens, billed to the budget and
// observed as operation image_edit.
func TestEditImages(t *testing.T) {
	api := newFakeImageEditAPI(t)
	obs := &recordingObserver{}
	g := newImageEditGateway(t, api, obs)
	budget := NewBudget(BudgetLimits{MaxCostUSD: 5})
	img1, img2, mask := testPNG(t, 8, 8), []byte("RIFF\x10\x00\x00\x00WEBPVP8 fake"), testPNG(t, 8, 8)
	n, comp := 2, 60
	req := &ImageEditRequest{Model: "gpt-image-1", Prompt: "add a hat", N: &n, Size: "1024x1024", Quality: "high",
		OutputFormat: "webp", OutputCompression: &comp, InputFidelity: "high", Background: "opaque", User: "u1",
		Images: []ImageFile{{Filename: "cat.png", ContentType: "image/png", Data: img1}, {Filename: "hat.webp", ContentType: "image/webp", Data: img2}},
		Mask:   &ImageFile{Filename: "mask.png", ContentType: "image/png", Data: mask}, Extra: [][2]string{{"moderation", "low"}}}
	resp, err := g.EditImages(context.Background(), Scope{Owner: "k1", Budget: budget}, req)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"model": "gpt-image-1", "prompt": "add a hat", "n": "2", "size": "1024x1024", "quality": "high",
		"output_format": "webp", "output_compression": "60", "input_fidelity": "high", "background": "opaque", "user": "u1", "moderation": "low"} {
		if got := api.fields[k]; len(got) != 1 || got[0] != v {
			t.Errorf("sent %s = %v, want %q", k, got, v)
		}
	}
	if f := api.files["image[]"]; len(f) != 2 || !bytes.Equal(f[0], img1) || !bytes.Equal(f[1], img2) || api.names["image[]"][1] != "hat.webp" {
		t.Errorf("sent images %d %v", len(f), api.names)
	}
	if f := api.files["mask"]; len(f) != 1 || !bytes.Equal(f[0], mask) {
		t.Errorf("sent mask %v", api.names)
	}
	usd := 30*5e-6 + 320*1e-5 + 4160*4e-5
	if resp.Model != "openai/gpt-image-1" || resp.Created != 1713833629 || len(resp.Data) != 2 || resp.Data[1].B64JSON != "ZWRpdA1" ||
		resp.Usage.InputTokens != 350 || resp.Usage.TotalTokens != 4510 || resp.Usage.InputTokensDetails == nil ||
		resp.Usage.InputTokensDetails.ImageTokens != 320 || resp.Usage.Costs == nil || !resp.Usage.Costs.PriceKnown ||
		math.Abs(resp.Usage.Costs.TotalTokensCost-usd) > 1e-9 {
		t.Fatalf("response %+v costs %+v", resp, resp.Usage.Costs)
	}
	if used := budget.Used(context.Background()); used.Calls != 1 || math.Abs(used.CostUSD-usd) > 1e-9 {
		t.Errorf("budget %+v, want %v", used, usd)
	}
	r := obs.take(t)
	if r.Operation != OperationImageEdit || r.Outcome != RequestOK || r.Model != "openai/gpt-image-1" || math.Abs(r.Usage.Costs.Spent()-usd) > 1e-9 {
		t.Errorf("observed %+v", r)
	}
}

// TestEditImagesDallE2: the default model (dall-e-2) with one square PNG sends it as
// image (not image[]), passes response_format on and is priced per image of its size.
func TestEditImagesDallE2(t *testing.T) {
	api := newFakeImageEditAPI(t)
	g := newImageEditGateway(t, api, &recordingObserver{})
	img := testPNG(t, 16, 16)
	resp, err := g.EditImages(context.Background(), Scope{}, &ImageEditRequest{Prompt: "a hat", Size: "512x512", ResponseFormat: "url",
		Images: []ImageFile{{Filename: "cat.png", Data: img}}})
	if err != nil {
		t.Fatal(err)
	}
	if f := api.files["image"]; len(f) != 1 || !bytes.Equal(f[0], img) || len(api.files["image[]"]) != 0 || api.fields["model"][0] != "dall-e-2" ||
		api.fields["response_format"][0] != "url" {
		t.Errorf("sent %v %v", api.fields, api.names)
	}
	if resp.Model != "openai/dall-e-2" || resp.Data[0].URL != "https://img.example/e0.png" || resp.Usage.Costs == nil ||
		!resp.Usage.Costs.PriceKnown || math.Abs(resp.Usage.Costs.TotalTokensCost-6.86e-08*512*512) > 1e-12 {
		t.Errorf("response %+v costs %+v", resp, resp.Usage.Costs)
	}
}

// TestImageEditValidation: each refusal names its field, and none reaches the upstream.
func TestImageEditValidation(t *testing.T) {
	api := newFakeImageEditAPI(t)
	g := newImageEditGateway(t, api, &recordingObserver{})
	sq, wide := testPNG(t, 8, 8), testPNG(t, 16, 8)
	pngf := func(b []byte) []ImageFile { return []ImageFile{{Filename: "a.png", Data: b}} }
	big := append(append([]byte{}, sq...), make([]byte, 4<<20)...)
	seventeen := make([]ImageFile, 17)
	for i := range seventeen {
		seventeen[i] = ImageFile{Filename: "a.png", Data: sq}
	}
	one := 1
	for _, tc := range []struct {
		name  string
		req   ImageEditRequest
		field string
	}{
		{"no prompt", ImageEditRequest{Images: pngf(sq)}, "prompt"},
		{"no image", ImageEditRequest{Prompt: "x"}, "image"},
		{"dall-e-2 two images", ImageEditRequest{Prompt: "x", Model: "dall-e-2", Images: append(pngf(sq), pngf(sq)...)}, "image"},
		{"dall-e-2 jpeg", ImageEditRequest{Prompt: "x", Model: "dall-e-2", Images: []ImageFile{{Data: []byte("\xff\xd8\xff\xe0jpeg")}}}, "image"},
		{"dall-e-2 not square", ImageEditRequest{Prompt: "x", Model: "dall-e-2", Images: pngf(wide)}, "image"},
		{"dall-e-2 4 MB", ImageEditRequest{Prompt: "x", Model: "dall-e-2", Images: pngf(big)}, "image"},
		{"dall-e-2 prompt", ImageEditRequest{Prompt: strings.Repeat("x", 1001), Images: pngf(sq)}, "prompt"},
		{"dall-e-2 mask size", ImageEditRequest{Prompt: "x", Images: pngf(sq), Mask: &ImageFile{Data: testPNG(t, 4, 4)}}, "mask"},
		{"dall-e-2 input_fidelity", ImageEditRequest{Prompt: "x", Model: "dall-e-2", Images: pngf(sq), InputFidelity: "high"}, "input_fidelity"},
		{"gpt-image 17 images", ImageEditRequest{Prompt: "x", Model: "gpt-image-1", Images: seventeen}, "image"},
		{"gpt-image gif", ImageEditRequest{Prompt: "x", Model: "gpt-image-1", Images: []ImageFile{{Data: []byte("GIF89a....")}}}, "image"},
		{"mask not png", ImageEditRequest{Prompt: "x", Model: "gpt-image-1", Images: pngf(sq), Mask: &ImageFile{Data: []byte("\xff\xd8\xff")}}, "mask"},
		{"gpt-image response_format", ImageEditRequest{Prompt: "x", Model: "gpt-image-1", Images: pngf(sq), ResponseFormat: "url"}, "response_format"},
		{"input_fidelity value", ImageEditRequest{Prompt: "x", Model: "gpt-image-1", Images: pngf(sq), InputFidelity: "max"}, "input_fidelity"},
		{"n", ImageEditRequest{Prompt: "x", Model: "gpt-image-1", Images: pngf(sq), N: func() *int { n := 11; return &n }()}, "n"},
		{"dall-e-3", ImageEditRequest{Prompt: "x", Model: "dall-e-3", Images: pngf(sq), N: &one}, "model"},
		{"anthropic", ImageEditRequest{Prompt: "x", Model: "anthropic/claude-3-5-haiku-latest", Images: pngf(sq)}, "model"},
	} {
		_, err := g.EditImages(context.Background(), Scope{}, &tc.req)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%s: want a refusal naming %s, got %v", tc.name, tc.field, err)
		}
	}
	if api.calls != 0 {
		t.Errorf("upstream called %d times", api.calls)
	}
}
