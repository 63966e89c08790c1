package providers_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestOpenAIEditImages: the multipart form OpenAI's image edits take (text fields, a JSON
// string extra as its text and another as its JSON, one image as image, several as
// image[], the mask with its type), at OpenAI's path and an Azure deployment's; a bad
// answer is KindBadResponse; Anthropic has no image edit API.
func TestOpenAIEditImages(t *testing.T) {
	var path, query string
	var hdr http.Header
	var form map[string][]string
	var files map[string][]string // field -> file contents
	answer := `{"created":5,"data":[{"b64_json":"eA=="}],"usage":{"input_tokens":3,"output_tokens":4,"total_tokens":7}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, query, hdr = r.URL.Path, r.URL.RawQuery, r.Header.Clone()
		form, files = nil, map[string][]string{}
		if err := r.ParseMultipartForm(1 << 20); err == nil {
			form = r.MultipartForm.Value
			for name, fhs := range r.MultipartForm.File {
				for _, fh := range fhs {
					f, _ := fh.Open()
					b, _ := io.ReadAll(f)
					f.Close()
					files[name] = append(files[name], string(b)+"|"+fh.Header.Get("Content-Type"))
				}
			}
		}
		io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	p := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-test"})
	req := &providers.ImageEditRequest{ImageRequest: providers.ImageRequest{Model: "gpt-image-1", Prompt: "a hat", N: 2, Quality: "low",
		Extra: map[string]json.RawMessage{"moderation": json.RawMessage(`"low"`), "seed": json.RawMessage(`7`)}},
		Images:        []providers.ImageFile{{Filename: "a.png", ContentType: "image/png", Data: []byte("A")}, {Filename: "b.webp", ContentType: "image/webp", Data: []byte("B")}},
		Mask:          &providers.ImageFile{Data: []byte("M")},
		InputFidelity: "high"}
	res, err := p.EditImages(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"model": "gpt-image-1", "prompt": "a hat", "n": "2", "quality": "low", "moderation": "low", "seed": "7", "input_fidelity": "high"}
	if path != "/v1/images/edits" || hdr.Get("Authorization") != "Bearer sk-test" || len(form) != len(want) {
		t.Fatalf("sent %s %v %v", path, hdr, form)
	}
	for k, v := range want {
		if got := form[k]; len(got) != 1 || got[0] != v {
			t.Errorf("form[%s] = %v, want %q", k, got, v)
		}
	}
	if im := files["image[]"]; len(im) != 2 || im[0] != "A|image/png" || im[1] != "B|image/webp" || len(files["mask"]) != 1 || files["mask"][0] != "M|image/png" {
		t.Errorf("files %v", files)
	}
	if res.Created != 5 || res.Data[0].B64JSON != "eA==" || res.Usage == nil || res.Usage.TotalTokens != 7 {
		t.Errorf("answer %+v", res)
	}

	az := providers.NewAzure(providers.AzureConfig{Config: providers.Config{BaseURL: srv.URL, APIKey: "az-key"}, APIVersion: "2025-04-01-preview"})
	if !providers.ServesImageEdits(az) || !providers.ServesImageEdits(p) {
		t.Fatal("OpenAI-format adapters edit images")
	}
	if _, err := az.EditImages(context.Background(), &providers.ImageEditRequest{ImageRequest: providers.ImageRequest{Model: "my-edit", Prompt: "x"},
		Images: []providers.ImageFile{{Data: []byte("A")}}}); err != nil {
		t.Fatal(err)
	}
	if path != "/openai/deployments/my-edit/images/edits" || query != "api-version=2025-04-01-preview" || hdr.Get("Api-Key") != "az-key" ||
		len(files["image"]) != 1 || form["model"][0] != "my-edit" {
		t.Errorf("azure sent %s?%s %v %v", path, query, form, files)
	}
	if providers.ServesImageEdits(providers.NewAnthropic(providers.Config{Name: "anthropic", APIKey: "k"})) {
		t.Error("anthropic has no image edits")
	}

	answer = `{"created":1,"data":[]}`
	_, err = p.EditImages(context.Background(), req)
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.KindBadResponse {
		t.Errorf("no image: %v", err)
	}
}
