package server

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestPassThroughMultipartModel: a key held to models and a budget forwards OpenAI's
// multipart operations (audio transcriptions, image edits) naming an allowed model in
// their model form field, the body reaching the upstream byte for byte; a model outside
// the key's list is a 401 (LiteLLM's) and a form naming model twice a 400 naming the field, neither
// forwarded.
func TestPassThroughMultipartModel(t *testing.T) {
	var mu sync.Mutex
	var got []passThroughCall
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, passThroughCall{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: string(b)})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"text":"hello"}`)
	}))
	t.Cleanup(up.Close)
	hs, s := passThroughServerOver(t, providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "server-openai-key"})))
	vk := issue(t, s, `{"name":"forms","models":["openai/whisper-1","openai/gpt-image-1"],"max_budget_usd":5}`)
	form := func(models ...string) (string, []byte) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		fw, _ := mw.CreateFormFile("file", "speech.mp3")
		fw.Write([]byte("ID3\x00\x01 not really audio, model=gpt-4o-transcribe"))
		for _, m := range models {
			mw.WriteField("model", m)
		}
		mw.WriteField("response_format", "json")
		mw.Close()
		return mw.FormDataContentType(), b.Bytes()
	}
	cases := []struct {
		name, path string
		models     []string
		status     int
		want       string
	}{
		{"transcription of an allowed model", "/openai/v1/audio/transcriptions", []string{"whisper-1"}, 200, `"text":"hello"`},
		{"image edit of an allowed model", "/openai/v1/images/edits", []string{"gpt-image-1"}, 200, `"text":"hello"`},
		{"model outside the key's list", "/openai/v1/audio/transcriptions", []string{"gpt-4o-transcribe"}, 401, `gpt-4o-transcribe`},
		{"model named twice", "/openai/v1/audio/transcriptions", []string{"whisper-1", "gpt-4o-transcribe"}, 400, `model:`},
		{"no model", "/openai/v1/audio/transcriptions", nil, 401, `name a model`},
	}
	for _, c := range cases {
		ct, body := form(c.models...)
		mu.Lock()
		before := len(got)
		mu.Unlock()
		req, _ := http.NewRequest("POST", hs.URL+c.path, bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", "Bearer "+vk.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(answer), c.want) {
			t.Errorf("%s: %d %s, want %d with %s", c.name, resp.StatusCode, answer, c.status, c.want)
		}
		mu.Lock()
		calls := got[before:]
		mu.Unlock()
		if c.status != 200 {
			if len(calls) != 0 {
				t.Errorf("%s: the upstream was called", c.name)
			}
			continue
		}
		if len(calls) != 1 || calls[0].body != string(body) || calls[0].header.Get("Content-Type") != ct || calls[0].path != strings.TrimPrefix(c.path, "/openai") {
			t.Errorf("%s: the upstream got %+v, want the form byte for byte", c.name, calls)
		}
	}
	var forwarded []string
	for _, row := range passThroughHistory(t, s, vk.Key) {
		if row.Outcome == "ok" {
			forwarded = append(forwarded, row.Model)
		}
	}
	if strings.Join(forwarded, " ") != "openai/gpt-image-1 openai/whisper-1" {
		t.Errorf("recorded as forwarded %v, want the two allowed models", forwarded)
	}
}

// TestPassThroughUploadLimit: a pass-through multipart/form-data upload may be larger than
// serve --max-body-bytes (an audio file up to OpenAI's 25 MiB; here 16 times the server's
// 4 KiB) and reaches the upstream whole, while a JSON body over it is a 413 naming the
// flag, with or without a Content-Length, and is not forwarded.
func TestPassThroughUploadLimit(t *testing.T) {
	var mu sync.Mutex
	var sizes []int
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		sizes = append(sizes, len(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"text":"hello"}`)
	}))
	t.Cleanup(up.Close)
	hs, _ := passThroughServerOver(t, providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "server-openai-key"})))
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	fw, _ := mw.CreateFormFile("file", "speech.mp3")
	fw.Write(bytes.Repeat([]byte("a"), 64<<10))
	mw.WriteField("model", "whisper-1")
	mw.Close()
	send := func(ct string, body io.Reader) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", hs.URL+"/openai/v1/audio/transcriptions", body)
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", "Bearer "+testKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, out := send(mw.FormDataContentType(), bytes.NewReader(form.Bytes())); code != http.StatusOK {
		t.Fatalf("a 64 KiB upload: %d %s", code, out)
	}
	mu.Lock()
	if len(sizes) != 1 || sizes[0] != form.Len() {
		t.Errorf("the upstream got %v bytes, want the whole form (%d)", sizes, form.Len())
	}
	mu.Unlock()
	big := `{"model":"whisper-1","pad":"` + strings.Repeat("a", 8<<10) + `"}`
	for _, body := range []io.Reader{strings.NewReader(big), io.MultiReader(strings.NewReader(big))} { // the second without a Content-Length
		if code, out := send("application/json", body); code != http.StatusRequestEntityTooLarge || !strings.Contains(out, "max-body-bytes") {
			t.Errorf("an 8 KiB JSON body: %d %s, want a 413 naming --max-body-bytes", code, out)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sizes) != 1 {
		t.Errorf("a refused body was forwarded: %v", sizes)
	}
}
