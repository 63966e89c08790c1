package server

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// review17eEditServer is a gateway whose OpenAI upstream records each file part's field
// name and Content-Type, and answers a gpt-image b64_json image.
func review17eEditServer(t *testing.T) (*httptest.Server, func() map[string][]string) {
	var mu sync.Mutex
	types := map[string][]string{}
	ups := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.ParseMultipartForm(32<<20) == nil {
			for name, fhs := range r.MultipartForm.File {
				for _, fh := range fhs {
					types[name] = append(types[name], fh.Header.Get("Content-Type"))
				}
			}
		}
		io.WriteString(w, `{"created":1,"data":[{"b64_json":"eA=="}],"usage":{"input_tokens":3,"output_tokens":4,"total_tokens":7}}`)
	}))
	t.Cleanup(ups.Close)
	env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": ups.URL + "/v1"}
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices: providers.DefaultCatalog(), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, func() map[string][]string { mu.Lock(); defer mu.Unlock(); return types }
}

func review17eFilePart(w *multipart.Writer, field, filename, ctype string, data []byte) {
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="`+field+`"; filename="`+filename+`"`)
	h.Set("Content-Type", ctype)
	p, _ := w.CreatePart(h)
	p.Write(data)
}

// TestReview17eOctetStreamImageForwardedAsOctetStream: WRONG — the official Go SDK
// (openai-go's apiform) sends an io.Reader without Filename/ContentType methods as
// filename "anonymous_file", Content-Type application/octet-stream; the gateway tells the
// image's format from its bytes (imageFormat) but passes the client's part type on
// unchanged (providers.writeFilePart), and OpenAI refuses gpt-image edits with
// "Invalid file 'image': unsupported mimetype ('application/octet-stream')" (code
// unsupported_file_mimetype; openai-node#1468, openai-ruby#147). The upstream part should
// carry the detected type (image/png, image/jpeg, image/webp), as the mask already
// defaults to image/png.
func TestReview17eOctetStreamImageForwardedAsOctetStream(t *testing.T) {
	hs, types := review17eEditServer(t)
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	w.WriteField("model", "gpt-image-1")
	w.WriteField("prompt", "a hat")
	review17eFilePart(w, "image", "anonymous_file", "application/octet-stream", squarePNG(t, 8))
	w.Close()
	resp, body := do2(t, "POST", hs.URL+"/v1/images/edits", testKey, b.String(), map[string]string{"Content-Type": w.FormDataContentType()})
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if got := types()["image"]; len(got) != 1 || got[0] != "image/png" {
		t.Errorf("upstream image part Content-Type %q, want image/png (a PNG's bytes; OpenAI refuses application/octet-stream)", got)
	}
}

// TestReview17eIndexedImageFields: WRONG — clients that encode arrays with indices
// (image[0], image[1]: Prism's OpenAI image edits, whose OpenAI errors name param
// "image[0]", so OpenAI reads them as images) are not read as images: readImageEditForm
// knows only image and image[], so image[0] falls into Extra as a text field (the PNG's
// bytes forwarded as a text value) and the request is refused "image is required". A file
// part under an unknown name should be read as an image when its name is image[N], or
// refused naming it, never passed on as text.
func TestReview17eIndexedImageFields(t *testing.T) {
	hs, types := review17eEditServer(t)
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	w.WriteField("model", "gpt-image-1")
	w.WriteField("prompt", "a hat")
	review17eFilePart(w, "image[0]", "a.png", "image/png", squarePNG(t, 8))
	review17eFilePart(w, "image[1]", "b.png", "image/png", squarePNG(t, 8))
	w.Close()
	resp, body := do2(t, "POST", hs.URL+"/v1/images/edits", testKey, b.String(), map[string]string{"Content-Type": w.FormDataContentType()})
	var out map[string]any
	json.Unmarshal(body, &out)
	if resp.StatusCode != 200 {
		t.Fatalf("image[0], image[1]: %d %s", resp.StatusCode, body)
	}
	if got := types()["image[]"]; len(got) != 2 {
		t.Errorf("upstream images %v, want two image[] parts", types())
	}
}
