package providers_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestOpenAITranscribe: the multipart form OpenAI's transcriptions API takes (model, the
// file with its name and type, language, prompt, response_format, temperature, each
// timestamp granularity as timestamp_granularities[]), the answer and its Content-Type
// passed back as they came, the usage read from it; translations go to their own path.
func TestOpenAITranscribe(t *testing.T) {
	var form map[string][]string
	var file []byte
	var fileName, fileType, path string
	answer := `{"text":"hello there","usage":{"type":"duration","seconds":7}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		if r.Header.Get("Authorization") != "Bearer sk-test" || !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data; boundary=") {
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"message":"not a form"}}`)
			return
		}
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			w.WriteHeader(400)
			return
		}
		form = r.MultipartForm.Value
		f, h, err := r.FormFile("file")
		if err != nil {
			w.WriteHeader(400)
			return
		}
		file, _ = io.ReadAll(f)
		fileName, fileType = h.Filename, h.Header.Get("Content-Type")
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, answer)
	}))
	defer srv.Close()
	p := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-test"})
	temp := 0.2
	req := &providers.TranscriptionRequest{Model: "whisper-1", File: []byte("RIFF....WAVE"), Filename: "hello.wav", FileType: "audio/wav",
		Language: "en", Prompt: "A greeting.", ResponseFormat: "json", Temperature: &temp, TimestampGranularities: []string{"word", "segment"}}
	res, err := p.Transcribe(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if path != "/v1/audio/transcriptions" || string(file) != "RIFF....WAVE" || fileName != "hello.wav" || fileType != "audio/wav" {
		t.Errorf("sent %s file %q name %q type %q", path, file, fileName, fileType)
	}
	want := map[string][]string{"model": {"whisper-1"}, "language": {"en"}, "prompt": {"A greeting."}, "response_format": {"json"},
		"temperature": {"0.2"}, "timestamp_granularities[]": {"word", "segment"}}
	for k, v := range want {
		if !slices.Equal(form[k], v) {
			t.Errorf("form %s = %q, want %q", k, form[k], v)
		}
	}
	if len(form) != len(want) {
		t.Errorf("form has fields %v, want only %v", form, want)
	}
	if string(res.Body) != answer || res.ContentType != "application/json; charset=utf-8" || res.Usage.Seconds != 7 {
		t.Errorf("answer %q %q usage %+v", res.Body, res.ContentType, res.Usage)
	}

	// Unset fields are not sent; a translation goes to /audio/translations; a text answer
	// is passed on with no usage.
	answer = "hello there\n"
	res, err = p.Transcribe(context.Background(), &providers.TranscriptionRequest{Model: "whisper-1", Translate: true, File: []byte("x"), ResponseFormat: "text"})
	if err != nil {
		t.Fatal(err)
	}
	if path != "/v1/audio/translations" || len(form) != 2 || form["response_format"][0] != "text" || fileType != "application/octet-stream" || fileName == "" {
		t.Errorf("translation sent %s %v type %q name %q", path, form, fileType, fileName)
	}
	if string(res.Body) != answer || res.Usage != (providers.AudioUsage{}) {
		t.Errorf("text answer %q usage %+v", res.Body, res.Usage)
	}
}

// TestTranscriptionUsageForms: the usage of OpenAI's token-priced models, verbose_json's
// duration, and nothing from text formats.
func TestTranscriptionUsageForms(t *testing.T) {
	for _, tc := range []struct {
		ctype, body string
		want        providers.AudioUsage
	}{
		{"application/json", `{"text":"hi","usage":{"type":"tokens","input_tokens":21,"input_token_details":{"text_tokens":1,"audio_tokens":20},"output_tokens":4,"total_tokens":25}}`,
			providers.AudioUsage{InputTokens: 21, InputAudioTokens: 20, OutputTokens: 4}},
		{"application/json", `{"task":"transcribe","language":"english","duration":12.5,"text":"hi","segments":[]}`, providers.AudioUsage{Seconds: 12.5}},
		{"text/plain; charset=utf-8", "1\n00:00:00,000 --> 00:00:01,000\nhi\n", providers.AudioUsage{}},
		{"text/vtt", "WEBVTT\n\n00:00.000 --> 00:01.000\nhi\n", providers.AudioUsage{}},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", tc.ctype)
			io.WriteString(w, tc.body)
		}))
		p := providers.NewOpenAI(providers.Config{Name: "groq", BaseURL: srv.URL, APIKey: "k"})
		res, err := p.Transcribe(context.Background(), &providers.TranscriptionRequest{Model: "whisper-large-v3", File: []byte("x")})
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.Usage != tc.want || res.ContentType != tc.ctype || string(res.Body) != tc.body {
			t.Errorf("%s: usage %+v, want %+v (type %q)", tc.body, res.Usage, tc.want, res.ContentType)
		}
	}
}

// TestOpenAISpeak: the JSON body of OpenAI's speech API (fields unset are left out), the
// audio read as it arrives with the upstream's Content-Type; an upstream refusal is an
// *Error naming its param; a body cut midway fails the read as a broken stream.
func TestOpenAISpeak(t *testing.T) {
	var got map[string]any
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/audio/speech" || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(404)
			return
		}
		json.NewDecoder(r.Body).Decode(&got)
		switch got["voice"] {
		case "nobody":
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"message":"Invalid value for 'voice'.","type":"invalid_request_error","param":"voice","code":"invalid_value"}}`)
			return
		case "cut":
			w.Header().Set("Content-Type", "audio/mpeg")
			w.Header().Set("Content-Length", "100")
			io.WriteString(w, "ID3")
			return // shorter than declared: the read fails
		}
		w.Header().Set("Content-Type", "audio/mpeg")
		io.WriteString(w, "ID3-first")
		w.(http.Flusher).Flush()
		<-release // the first bytes arrive before the rest is sent
		io.WriteString(w, "-rest")
	}))
	defer srv.Close()
	p := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk"})
	speed := 1.5
	res, err := p.Speak(context.Background(), &providers.SpeechRequest{Model: "tts-1", Input: "Hello.", Voice: "alloy", Speed: &speed, ResponseFormat: "mp3"})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := io.ReadAtLeast(res.Body, buf, len("ID3-first"))
	if err != nil || string(buf[:n]) != "ID3-first" || res.ContentType != "audio/mpeg" {
		t.Fatalf("first read %q %v type %q", buf[:n], err, res.ContentType)
	}
	close(release)
	rest, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || string(rest) != "-rest" {
		t.Errorf("rest %q %v", rest, err)
	}
	want := map[string]any{"model": "tts-1", "input": "Hello.", "voice": "alloy", "speed": 1.5, "response_format": "mp3"}
	if len(got) != len(want) {
		t.Errorf("sent %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("sent %s = %v, want %v", k, got[k], v)
		}
	}

	_, err = p.Speak(context.Background(), &providers.SpeechRequest{Model: "tts-1", Input: "Hi", Voice: "nobody"})
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.KindBadRequest || pe.Param != "voice" {
		t.Errorf("refusal: %v", err)
	}
	res, err = p.Speak(context.Background(), &providers.SpeechRequest{Model: "tts-1", Input: "Hi", Voice: "cut"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(res.Body)
	res.Body.Close()
	if !errors.As(err, &pe) || pe.Kind != providers.KindStreamBroken {
		t.Errorf("cut body: %v", err)
	}
}

// TestAudioModelsWithoutAKey: no request goes out without the provider's key.
func TestAudioModelsWithoutAKey(t *testing.T) {
	p := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: "http://127.0.0.1:1", KeyEnv: "OPENAI_API_KEY"})
	if _, err := p.Transcribe(context.Background(), &providers.TranscriptionRequest{Model: "whisper-1", File: []byte("x")}); !errors.Is(err, providers.ErrNotConfigured) {
		t.Errorf("transcribe: %v", err)
	}
	if _, err := p.Speak(context.Background(), &providers.SpeechRequest{Model: "tts-1", Input: "x", Voice: "alloy"}); !errors.Is(err, providers.ErrNotConfigured) {
		t.Errorf("speak: %v", err)
	}
}

// TestCatalogAudioPrices: transcription by the second (whisper-1, Groq's whisper) or by
// tokens (gpt-4o-transcribe), speech by the character (tts-1) or by input tokens with its
// audio output unknown (gpt-4o-mini-tts); no usage reported is an unknown price, never a
// guess; audio models stay out of the chat catalogue and its lists.
func TestCatalogAudioPrices(t *testing.T) {
	c := providers.DefaultCatalog()
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	for _, tc := range []struct {
		model string
		u     providers.AudioUsage
		total float64
		known bool
	}{
		{"openai/whisper-1", providers.AudioUsage{Seconds: 60}, 0.006, true},
		{"groq/whisper-large-v3-turbo", providers.AudioUsage{Seconds: 3600}, 3600 * 1.111e-05, true},
		{"openai/gpt-4o-transcribe", providers.AudioUsage{InputTokens: 120, InputAudioTokens: 100, OutputTokens: 40}, 120*2.5e-06 + 40*1e-05, true},
		{"openai/whisper-1", providers.AudioUsage{}, 0, false},                    // no duration reported
		{"openai/gpt-4o-transcribe", providers.AudioUsage{Seconds: 30}, 0, false}, // priced by tokens, none reported
		{"openai/tts-1", providers.AudioUsage{Characters: 1000}, 0.015, true},
		{"openai/tts-1-hd", providers.AudioUsage{Characters: 1000}, 0.03, true},
		{"openai/gpt-4o-mini-tts", providers.AudioUsage{InputTokens: 1000, Characters: 4000}, 0.0025, false},
		{"openai/no-such-tts", providers.AudioUsage{Characters: 10}, 0, false},
	} {
		got := c.AudioCost(tc.model, tc.u)
		if got.Known != tc.known || !near(got.TotalUSD, tc.total) || !near(got.InputUSD+got.OutputUSD, got.TotalUSD) {
			t.Errorf("AudioCost(%s, %+v) = %+v, want total %g known %v", tc.model, tc.u, got, tc.total, tc.known)
		}
	}
	if p, ok := c.LookupAudio("groq/whisper-large-v3"); !ok || p.Mode != providers.AudioTranscription || !p.HasInputPerSecond {
		t.Errorf("LookupAudio(groq/whisper-large-v3) = %+v %v", p, ok)
	}
	if got := c.AudioModels("groq", providers.AudioTranscription); !slices.Contains(got, "groq/whisper-large-v3") || slices.Contains(got, "groq/playai-tts") {
		t.Errorf("groq transcription models %v", got)
	}
	if got := c.AudioModels("openai", providers.AudioSpeech); !slices.Contains(got, "openai/tts-1") || slices.Contains(got, "openai/whisper-1") {
		t.Errorf("openai speech models %v", got)
	}
	for _, m := range []string{"openai/whisper-1", "openai/tts-1", "openai/gpt-4o-mini-tts", "groq/whisper-large-v3", "openai/gpt-4o-transcribe"} {
		if p, ok := c.Lookup(m); ok {
			t.Errorf("chat Lookup(%s) = %+v, want not found", m, p)
		}
	}
	for _, prov := range []string{"openai", "groq", "gemini"} {
		for _, m := range append(c.ChatModels(prov), c.EmbeddingModels(prov)...) {
			for _, a := range []string{"whisper", "tts-1", "-transcribe", "playai"} {
				if strings.Contains(m, a) {
					t.Errorf("%s's chat or embedding models list %s", prov, m)
				}
			}
		}
	}
	// An override file's audio entries take part too.
	o, err := providers.ParseCatalog([]byte(`{"my-stt": {"litellm_provider": "openai", "mode": "audio_transcription", "input_cost_per_second": 0.001}}`))
	if err != nil {
		t.Fatal(err)
	}
	merged := c.WithOverrides(o)
	if got := merged.AudioCost("openai/my-stt", providers.AudioUsage{Seconds: 10}); !got.Known || !near(got.TotalUSD, 0.01) {
		t.Errorf("override: %+v", got)
	}
	if got := merged.AudioCost("openai/whisper-1", providers.AudioUsage{Seconds: 60}); !near(got.TotalUSD, 0.006) {
		t.Errorf("override lost the embedded entries: %+v", got)
	}
}
