package server

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// fakeAudioUpstream is a scripted OpenAI audio API. Transcriptions answer in the
// response_format asked (json with a duration usage, or text/vtt as OpenAI sends them);
// speech sends "ID3" and the input, then — after release is closed, when hold is set —
// "|end".
type fakeAudioUpstream struct {
	mu      sync.Mutex
	form    map[string][]string
	size    int
	speech  map[string]any
	hold    bool
	release chan struct{}
	// cutStream ends a streamed transcription with an error event after its first delta.
	cutStream bool
}

func (u *fakeAudioUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/audio/transcriptions", "/v1/audio/translations":
		if err := r.ParseMultipartForm(64 << 20); err != nil {
			w.WriteHeader(400)
			return
		}
		f, _, _ := r.FormFile("file")
		b, _ := io.ReadAll(f)
		u.mu.Lock()
		u.form, u.size = r.MultipartForm.Value, len(b)
		cut := u.cutStream
		u.mu.Unlock()
		if r.FormValue("stream") == "true" && strings.Contains(r.FormValue("model"), "transcribe") {
			// OpenAI's streamed transcription: deltas, then done with the usage.
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"type\":\"transcript.text.delta\",\"delta\":\"hello\"}\n\n")
			w.(http.Flusher).Flush()
			if cut {
				io.WriteString(w, "data: {\"type\":\"error\",\"error\":{\"message\":\"overloaded\"}}\n\n")
				return
			}
			io.WriteString(w, "data: {\"type\":\"transcript.text.delta\",\"delta\":\" there\"}\n\n")
			io.WriteString(w, "data: {\"type\":\"transcript.text.done\",\"text\":\"hello there\",\"usage\":{\"type\":\"tokens\",\"input_tokens\":40,\"input_token_details\":{\"text_tokens\":0,\"audio_tokens\":40},\"output_tokens\":3,\"total_tokens\":43}}\n\n")
			return
		}
		switch r.FormValue("response_format") {
		case "text":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, "hello there\n")
		case "vtt":
			w.Header().Set("Content-Type", "text/vtt; charset=utf-8")
			io.WriteString(w, "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nhello there\n")
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"text":"hello there","usage":{"type":"duration","seconds":3}}`)
		}
	case "/v1/audio/speech":
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		u.mu.Lock()
		u.speech = body
		hold, release := u.hold, u.release
		u.mu.Unlock()
		if body["stream_format"] == "sse" {
			// OpenAI's speech as server-sent events: base64 audio deltas, then the usage.
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"type\":\"speech.audio.delta\",\"audio\":\"SUQz\"}\n\n")
			w.(http.Flusher).Flush()
			io.WriteString(w, "data: {\"type\":\"speech.audio.delta\",\"audio\":\""+strings.Repeat("QUFB", 30000)+"\"}\n\n")
			io.WriteString(w, "data: {\"type\":\"speech.audio.done\",\"usage\":{\"input_tokens\":7,\"output_tokens\":100,\"total_tokens\":107}}\n\n")
			return
		}
		w.Header().Set("Content-Type", "audio/ogg")
		io.WriteString(w, "ID3"+body["input"].(string))
		w.(http.Flusher).Flush()
		if hold {
			<-release
		}
		io.WriteString(w, "|end")
	default:
		w.WriteHeader(404)
	}
}

func audioServer(t *testing.T) (*httptest.Server, *Server, *fakeAudioUpstream) {
	t.Helper()
	up := &fakeAudioUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "sk"}),
		providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: ups.URL, APIKey: "ak"}))
	st := newTestStore(t)
	rec := usagelog.New(usagelog.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, Observer: rec})
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

// audioForm builds a transcription form: fields in order, then the file when not nil.
func audioForm(t *testing.T, file []byte, fields ...string) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		w.WriteField(fields[i], fields[i+1])
	}
	if file != nil {
		fw, _ := w.CreateFormFile("file", "speech.mp3")
		fw.Write(file)
	}
	w.Close()
	return &buf, w.FormDataContentType()
}

// postForm posts body to url with the key; a chunked body (no declared length) when
// chunked.
func postForm(t *testing.T, url, key string, body *bytes.Buffer, ctype string, chunked bool) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader = body
	if chunked {
		rd = io.MultiReader(body) // hides the length
	}
	req, _ := http.NewRequest("POST", url, rd)
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestTranscriptionRoute: the form reaches the upstream field by field; its answer comes
// back with its own Content-Type, whatever the format; refusals name their field in
// OpenAI's envelope.
func TestTranscriptionRoute(t *testing.T) {
	hs, _, up := audioServer(t)
	url := hs.URL + "/v1/audio/transcriptions"

	body, ctype := audioForm(t, []byte("ID3audio"), "model", "whisper-1", "language", "en", "temperature", "0.3",
		"timestamp_granularities[]", "word", "timestamp_granularities[]", "segment", "response_format", "verbose_json", "unknown_field", "x")
	resp, b := postForm(t, url, testKey, body, ctype, false)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || string(b) != `{"text":"hello there","usage":{"type":"duration","seconds":3}}` ||
		resp.Header.Get("X-Switchyard-Model") != "openai/whisper-1" {
		t.Fatalf("json: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	up.mu.Lock()
	form, size := up.form, up.size
	up.mu.Unlock()
	if size != 8 || form["model"][0] != "whisper-1" || form["language"][0] != "en" || form["temperature"][0] != "0.3" ||
		strings.Join(form["timestamp_granularities[]"], ",") != "word,segment" || form["unknown_field"] != nil {
		t.Errorf("upstream got %v (file %d bytes)", form, size)
	}
	for format, want := range map[string]string{"text": "text/plain; charset=utf-8", "vtt": "text/vtt; charset=utf-8"} {
		body, ctype := audioForm(t, []byte("ID3"), "model", "openai/whisper-1", "response_format", format)
		resp, b := postForm(t, hs.URL+"/v1/audio/translations", testKey, body, ctype, false)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != want || !strings.Contains(string(b), "hello there\n") {
			t.Errorf("%s: %d %q %q", format, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}

	for _, tc := range []struct {
		what   string
		file   []byte
		fields []string
		status int
		param  string
		says   string
	}{
		{"no file", nil, []string{"model", "whisper-1"}, 400, "file", "required"},
		{"no model", []byte("x"), nil, 400, "model", "required"},
		{"temperature", []byte("x"), []string{"model", "whisper-1", "temperature", "warm"}, 400, "temperature", "number"},
		{"format", []byte("x"), []string{"model", "whisper-1", "response_format", "mp3"}, 400, "response_format", "json"},
		{"granularity", []byte("x"), []string{"model", "whisper-1", "timestamp_granularities[]", "char"}, 400, "timestamp_granularities[0]", "word"},
		{"chat model", []byte("x"), []string{"model", "anthropic/claude-sonnet-4-5"}, 400, "model", "has no audio API here"},
		{"unknown model", []byte("x"), []string{"model", "acme-stt"}, 404, "", "acme-stt"},
	} {
		body, ctype := audioForm(t, tc.file, tc.fields...)
		resp, b := postForm(t, url, testKey, body, ctype, false)
		code := ""
		if tc.status == 404 {
			code = "model_not_found"
		}
		e := wantOpenAIError(t, tc.what, resp, b, tc.status, "invalid_request_error", code)
		if tc.param != "" && (e.Param == nil || *e.Param != tc.param) || !strings.Contains(e.Message, tc.says) {
			t.Errorf("%s: param %v message %q, want %q saying %q", tc.what, e.Param, e.Message, tc.param, tc.says)
		}
	}
	resp, b = do2(t, "POST", url, testKey, `{"model":"whisper-1"}`, nil)
	if e := wantOpenAIError(t, "JSON body", resp, b, 400, "invalid_request_error", ""); e.Param == nil || *e.Param != "file" || !strings.Contains(e.Message, "multipart/form-data") {
		t.Errorf("JSON body: %s", b)
	}
}

// TestTranscriptionBodyLimit: the routes take a file up to 25 MiB although the server's
// own limit (10 MiB by default) is smaller, declared or chunked; beyond is a 413 in
// OpenAI's envelope; other routes keep the server's limit.
func TestTranscriptionBodyLimit(t *testing.T) {
	hs, _, up := audioServer(t)
	url := hs.URL + "/v1/audio/transcriptions"
	big := bytes.Repeat([]byte{0xff}, 12<<20)
	for _, chunked := range []bool{false, true} {
		body, ctype := audioForm(t, big, "model", "whisper-1")
		if resp, b := postForm(t, url, testKey, body, ctype, chunked); resp.StatusCode != 200 {
			t.Fatalf("12 MiB (chunked %v): %d %s", chunked, resp.StatusCode, b)
		}
		up.mu.Lock()
		size := up.size
		up.mu.Unlock()
		if size != len(big) {
			t.Errorf("upstream got %d bytes, want %d", size, len(big))
		}
	}
	tooBig := bytes.Repeat([]byte{0xff}, maxAudioFormBytes+1)
	for _, chunked := range []bool{false, true} {
		body, ctype := audioForm(t, tooBig, "model", "whisper-1")
		resp, b := postForm(t, url, testKey, body, ctype, chunked)
		wantOpenAIError(t, "body over the route's limit", resp, b, 413, "invalid_request_error", "request_too_large")
	}
	// The file alone over 25 MiB, the body within the route's limit: 413 naming file.
	body, ctype := audioForm(t, tooBig[:completions.MaxAudioFileBytes+1], "model", "whisper-1")
	if body.Len() > maxAudioFormBytes {
		t.Fatal("test form too large")
	}
	resp, b := postForm(t, url, testKey, body, ctype, false)
	if e := wantOpenAIError(t, "file over 25 MiB", resp, b, 413, "invalid_request_error", "request_too_large"); e.Param == nil || *e.Param != "file" {
		t.Errorf("file over 25 MiB: %s", b)
	}
	resp, b = do2(t, "POST", hs.URL+"/v1/audio/speech", testKey, `{"model":"tts-1","voice":"alloy","input":"`+strings.Repeat("x", 11<<20)+`"}`, nil)
	wantOpenAIError(t, "speech over the server's limit", resp, b, 413, "invalid_request_error", "request_too_large")
}

// TestSpeechRoute: the audio is streamed — its first bytes reach the client before the
// upstream has sent the rest — with the upstream's Content-Type; the JSON body reaches the
// upstream; refusals name their field.
func TestSpeechRoute(t *testing.T) {
	hs, _, up := audioServer(t)
	up.hold, up.release = true, make(chan struct{})
	req, _ := http.NewRequest("POST", hs.URL+"/v1/audio/speech", strings.NewReader(`{"model":"tts-1","input":"Hello","voice":"alloy","speed":1.25,"response_format":"opus","extra":1}`))
	req.Header.Set("Authorization", "Bearer "+testKey)
	type answer struct {
		resp  *http.Response
		first []byte
		err   error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- answer{err: err}
			return
		}
		first := make([]byte, len("ID3Hello"))
		_, err = io.ReadFull(resp.Body, first)
		got <- answer{resp, first, err}
	}()
	var resp *http.Response
	select {
	case a := <-got:
		if a.err != nil || string(a.first) != "ID3Hello" {
			t.Fatalf("first bytes %q %v", a.first, a.err)
		}
		resp = a.resp
	case <-time.After(10 * time.Second):
		close(up.release)
		t.Fatal("the first audio bytes did not arrive while the upstream held the rest: the answer is buffered")
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "audio/ogg" || resp.Header.Get("X-Switchyard-Model") != "openai/tts-1" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	close(up.release)
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "|end" {
		t.Errorf("rest %q %v", rest, err)
	}
	up.mu.Lock()
	sent := up.speech
	up.mu.Unlock()
	if sent["model"] != "tts-1" || sent["voice"] != "alloy" || sent["speed"] != 1.25 || sent["response_format"] != "opus" || sent["extra"] != nil {
		t.Errorf("upstream got %v", sent)
	}

	for body, param := range map[string]string{
		`{"model":"tts-1","input":"hi"}`:                                                "voice",
		`{"model":"tts-1","voice":"alloy"}`:                                             "input",
		`{"model":"tts-1","voice":"alloy","input":"` + strings.Repeat("a", 4097) + `"}`: "input",
		`{"model":"tts-1","voice":"alloy","input":"hi","speed":9}`:                      "speed",
		`{"model":"tts-1","voice":"alloy","input":"hi","speed":"fast"}`:                 "speed",
		`{"model":"tts-1","voice":"alloy","input":"hi","response_format":"mp4"}`:        "response_format",
		`{"model":"tts-1","voice":"alloy","input":"hi","stream_format":"sse"}`:          "stream_format",
		`{"model":"anthropic/claude-sonnet-4-5","voice":"alloy","input":"hi"}`:          "model",
		`{"voice":"alloy","input":"hi"}`:                                                "model",
	} {
		resp, b := do2(t, "POST", hs.URL+"/v1/audio/speech", testKey, body, nil)
		if e := wantOpenAIError(t, param, resp, b, 400, "invalid_request_error", ""); e.Param == nil || *e.Param != param {
			t.Errorf("%s: param %v, want %s", body[:min(len(body), 80)], e.Param, param)
		}
	}
}

// TestAudioWithVirtualKeys: a virtual key may be issued for audio models by their bare
// names, calls them, and is refused (403) the others; its spend counts the calls.
func TestAudioWithVirtualKeys(t *testing.T) {
	hs, s, _ := audioServer(t)
	vk := issue(t, s, `{"name":"voice bot","models":["whisper-1","openai/tts-1"],"max_budget_usd":1}`)
	body, ctype := audioForm(t, []byte("ID3"), "model", "whisper-1")
	if resp, b := postForm(t, hs.URL+"/v1/audio/transcriptions", vk.Key, body, ctype, false); resp.StatusCode != 200 {
		t.Errorf("allowed transcription: %d %s", resp.StatusCode, b)
	}
	if resp, b := do2(t, "POST", hs.URL+"/v1/audio/speech", vk.Key, `{"model":"tts-1","voice":"alloy","input":"Hello"}`, nil); resp.StatusCode != 200 || string(b) != "ID3Hello|end\n" {
		t.Errorf("allowed speech: %d %q", resp.StatusCode, b)
	}
	resp, b := do2(t, "POST", hs.URL+"/v1/audio/speech", vk.Key, `{"model":"tts-1-hd","voice":"alloy","input":"Hello"}`, nil)
	wantOpenAIError(t, "model not allowed", resp, b, 401, "key_model_access_denied", "401")
	info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID)
	want := 3*0.0001 + 5*1.5e-05 // 3 s of whisper-1, 5 characters of tts-1
	if d := info.Spend.CostUSD - want; d > 1e-12 || d < -1e-12 || info.Spend.Requests != 2 {
		t.Errorf("spend %+v, want %v in 2 requests", info.Spend, want)
	}
	// The usage log names the operations and their costs.
	r := do(t, s, "GET", "/api/v1/usage/requests", vk.Key, "")
	var usage struct {
		Data []usagelog.Request `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.raw), &usage); err != nil || r.status != 200 {
		t.Fatalf("usage: %d %s", r.status, r.raw)
	}
	ops := map[string]string{}
	for _, q := range usage.Data {
		ops[q.Operation] = q.Model + " " + q.Outcome
		if q.Outcome == "ok" && (!q.PriceKnown || q.CostUSD <= 0) {
			t.Errorf("usage of %s: %+v", q.Operation, q)
		}
	}
	if ops["transcription"] != "openai/whisper-1 ok" || ops["speech"] != "openai/tts-1 ok" {
		t.Errorf("usage log operations %v (%s)", ops, r.raw)
	}
	r = do(t, s, "POST", "/api/v1/keys", testKey, `{"name":"typo","models":["openai/whisper-9"]}`)
	if r.status != http.StatusUnprocessableEntity {
		t.Errorf("a key for an audio model the catalogue does not list: %d %s", r.status, r.raw)
	}
}

// TestAudioInOpenAPI: the routes are documented, the form as multipart/form-data and the
// audio as binary.
func TestAudioInOpenAPI(t *testing.T) {
	hs, _, _ := audioServer(t)
	resp, err := http.Get(hs.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]json.RawMessage `json:"content"`
			} `json:"requestBody"`
			Responses map[string]struct {
				Content map[string]json.RawMessage `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	json.NewDecoder(resp.Body).Decode(&doc)
	tr := doc.Paths["/v1/audio/transcriptions"]["post"]
	if form := string(tr.RequestBody.Content["multipart/form-data"]); !strings.Contains(form, `"binary"`) || !strings.Contains(form, `"timestamp_granularities[]"`) {
		t.Errorf("transcriptions form: %s", form)
	}
	sp := doc.Paths["/v1/audio/speech"]["post"]
	if sp.RequestBody.Content["application/json"] == nil || !strings.Contains(string(sp.Responses["200"].Content["audio/mpeg"]), `"binary"`) {
		t.Errorf("speech: %+v", sp)
	}
	if doc.Paths["/v1/audio/translations"]["post"].RequestBody.Content["multipart/form-data"] == nil {
		t.Error("translations undocumented")
	}
}
