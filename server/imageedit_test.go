package server

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// fakeImageEditUpstream answers OpenAI's POST /v1/images/edits: it parses the multipart
// form it receives, keeps its fields and files, and answers a dall-e-2 url image.
type fakeImageEditUpstream struct {
	mu     sync.Mutex
	calls  int
	fields map[string][]string
	files  map[string][][]byte
}

func (u *fakeImageEditUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls++
	if r.URL.Path != "/v1/images/edits" || r.ParseMultipartForm(32<<20) != nil {
		w.WriteHeader(400)
		io.WriteString(w, `{"error":{"message":"not a form","type":"invalid_request_error"}}`)
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
	io.WriteString(w, `{"created":1713833629,"data":[{"url":"https://img.example/edit.png"}]}`)
}

func imageEditServer(t *testing.T) (*httptest.Server, *Server, *fakeImageEditUpstream) {
	t.Helper()
	up := &fakeImageEditUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": ups.URL + "/v1", "ANTHROPIC_API_KEY": "ak"}
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

func squarePNG(t *testing.T, side int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewNRGBA(image.Rect(0, 0, side, side))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// editForm is a multipart body of fields and files (field name -> contents).
func editForm(t *testing.T, fields [][2]string, files map[string][][]byte) (string, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, f := range fields {
		w.WriteField(f[0], f[1])
	}
	for name, list := range files {
		for _, data := range list {
			fw, _ := w.CreateFormFile(name, "f.png")
			fw.Write(data)
		}
	}
	w.Close()
	return b.String(), w.FormDataContentType()
}

// TestImageEditRoute: POST /v1/images/edits reads the form, sends the image, mask and
// fields on as a multipart form, answers OpenAI's shape with the model and costs, charges
// the key and logs operation image_edit; missing prompt or image, a dall-e-2 image over
// 4 MB, a model the key may not call and a model without an image edit API are refused
// before any upstream call; the OpenAPI document has the route.
func TestImageEditRoute(t *testing.T) {
	hs, s, up := imageEditServer(t)
	vk := issue(t, s, `{"name":"art","models":["openai/dall-e-2"],"max_budget_usd":1}`)
	img, mask := squarePNG(t, 8), squarePNG(t, 8)
	body, ctype := editForm(t, [][2]string{{"model", "dall-e-2"}, {"prompt", "add a hat"}, {"size", "512x512"}, {"n", "1"}, {"seed", "3"}},
		map[string][][]byte{"image": {img}, "mask": {mask}})
	resp, b := do2(t, "POST", hs.URL+"/v1/images/edits", vk.Key, body, map[string]string{"Content-Type": ctype})
	var got completions.ImageGenerationResponse
	if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil {
		t.Fatalf("edit: %d %s", resp.StatusCode, b)
	}
	want := 6.86e-08 * 512 * 512
	if got.Model != "openai/dall-e-2" || len(got.Data) != 1 || got.Data[0].URL != "https://img.example/edit.png" || got.Usage.Costs == nil ||
		!got.Usage.Costs.PriceKnown || math.Abs(got.Usage.Costs.TotalTokensCost-want) > 1e-12 {
		t.Errorf("answer %s", b)
	}
	if f := up.files["image"]; len(f) != 1 || !bytes.Equal(f[0], img) || len(up.files["mask"]) != 1 || !bytes.Equal(up.files["mask"][0], mask) ||
		up.fields["prompt"][0] != "add a hat" || up.fields["size"][0] != "512x512" || up.fields["seed"][0] != "3" {
		t.Errorf("upstream got %v and %d images", up.fields, len(up.files["image"]))
	}
	calls := up.calls
	big := append(append([]byte{}, img...), make([]byte, 4<<20)...)
	for _, tc := range []struct {
		name   string
		fields [][2]string
		files  map[string][][]byte
		key    string
		status int
		param  string
	}{
		{"no prompt", [][2]string{{"model", "dall-e-2"}}, map[string][][]byte{"image": {img}}, vk.Key, 400, "prompt"},
		{"no image", [][2]string{{"model", "dall-e-2"}, {"prompt", "x"}}, nil, vk.Key, 400, "image"},
		{"n not a number", [][2]string{{"prompt", "x"}, {"n", "two"}}, map[string][][]byte{"image": {img}}, vk.Key, 400, "n"},
		{"dall-e-2 over 4 MB", [][2]string{{"model", "dall-e-2"}, {"prompt", "x"}}, map[string][][]byte{"image": {big}}, vk.Key, 400, "image"},
		{"not the key's model", [][2]string{{"model", "gpt-image-1"}, {"prompt", "x"}}, map[string][][]byte{"image[]": {img, img}}, vk.Key, 401, ""},
		{"anthropic", [][2]string{{"model", "anthropic/claude-3-5-haiku-latest"}, {"prompt", "x"}}, map[string][][]byte{"image": {img}}, testKey, 400, "model"},
	} {
		body, ctype := editForm(t, tc.fields, tc.files)
		resp, b := do2(t, "POST", hs.URL+"/v1/images/edits", tc.key, body, map[string]string{"Content-Type": ctype})
		typ, code := "invalid_request_error", ""
		if tc.status == 401 {
			typ, code = "key_model_access_denied", "401"
		}
		e := wantOpenAIError(t, tc.name, resp, b, tc.status, typ, code)
		if tc.param != "" && (e.Param == nil || *e.Param != tc.param) {
			t.Errorf("%s: param %v, want %s (%s)", tc.name, e.Param, tc.param, b)
		}
	}
	if up.calls != calls {
		t.Errorf("refusals reached the upstream %d times", up.calls-calls)
	}
	resp, b = do2(t, "POST", hs.URL+"/v1/images/edits", vk.Key, `{"prompt":"x"}`, nil)
	if resp.StatusCode != 400 {
		t.Errorf("a JSON body: %d %s", resp.StatusCode, b)
	}
	info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID)
	if math.Abs(info.Spend.CostUSD-want) > 1e-12 || info.Spend.Requests != 1 {
		t.Errorf("spend %+v, want %v in 1 request", info.Spend, want)
	}
	r := do(t, s, "GET", "/api/v1/usage/requests", vk.Key, "")
	var usage struct {
		Data []usagelog.Request `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.raw), &usage); err != nil {
		t.Fatal(err)
	}
	// The refused requests are in the log too (outcome error, no attempt, operation
	// image_edit): see TestRequestIDAudioAndImageEditRefusals; the answered one is the first.
	refused := 0
	for _, u := range usage.Data {
		if u.Outcome == "error" && len(u.Attempts) == 0 && u.RequestID != "" && u.Operation == "image_edit" {
			refused++
		}
	}
	last := len(usage.Data) - 1
	if last < 1 || refused != last || usage.Data[last].Operation != "image_edit" ||
		usage.Data[last].Model != "openai/dall-e-2" || !usage.Data[last].PriceKnown {
		t.Errorf("usage log %s", r.raw)
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
	if op := string(spec.Paths["/v1/images/edits"]["post"]); !strings.Contains(op, `"mask"`) || !strings.Contains(op, "multipart/form-data") {
		t.Errorf("openapi: %.300s", op)
	}
}

// TestImageEditRouteBodyLimit: a body over the route's own limit is a 413 that says what
// sets it, before the form is read.
func TestImageEditRouteBodyLimit(t *testing.T) {
	_, s, up := imageEditServer(t)
	req := httptest.NewRequest("POST", "/v1/images/edits", strings.NewReader("x"))
	req.ContentLength = maxImageEditFormBytes + 1
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != 413 || !strings.Contains(rec.Body.String(), "image") {
		t.Errorf("%d %s", rec.Code, rec.Body)
	}
	if up.calls != 0 {
		t.Error("upstream called")
	}
}
