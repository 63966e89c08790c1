package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
)

// audioUpstream is a scripted OpenAI audio API: a transcription is "heard <n> bytes in
// <language>" with whisper-1's duration usage (or gpt-4o-transcribe's token usage); a
// translation is "translated"; speech is the input's bytes in two chunks.
type audioUpstream struct {
	srv  *httptest.Server
	mu   sync.Mutex
	form map[string][]string
}

func newAudioUpstream(t *testing.T) *audioUpstream {
	u := &audioUpstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/audio/transcriptions"), strings.HasSuffix(r.URL.Path, "/audio/translations"):
			if err := r.ParseMultipartForm(1 << 20); err != nil {
				w.WriteHeader(400)
				io.WriteString(w, `{"error":{"message":"not a form","type":"invalid_request_error"}}`)
				return
			}
			f, h, err := r.FormFile("file")
			if err != nil {
				w.WriteHeader(400)
				io.WriteString(w, `{"error":{"message":"no file","type":"invalid_request_error","param":"file"}}`)
				return
			}
			b, _ := io.ReadAll(f)
			u.mu.Lock()
			u.form = r.MultipartForm.Value
			u.form["filename"] = []string{h.Filename}
			u.mu.Unlock()
			if r.FormValue("stream") == "true" && r.FormValue("model") == "gpt-4o-transcribe" {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: {\"type\":\"transcript.text.delta\",\"delta\":\"heard \"}\n\n")
				fmt.Fprintf(w, "data: {\"type\":\"transcript.text.delta\",\"delta\":\"%d bytes\"}\n\n", len(b))
				fmt.Fprintf(w, "data: {\"type\":\"transcript.text.done\",\"text\":\"heard %d bytes\",\"usage\":{\"type\":\"tokens\",\"input_tokens\":30,\"output_tokens\":5,\"total_tokens\":35}}\n\n", len(b))
				return
			}
			w.Header().Set("Content-Type", "application/json")
			switch {
			case strings.HasSuffix(r.URL.Path, "/translations"):
				io.WriteString(w, `{"text":"translated"}`)
			case r.FormValue("model") == "gpt-4o-transcribe":
				fmt.Fprintf(w, `{"text":"heard %d bytes","usage":{"type":"tokens","input_tokens":30,"input_token_details":{"text_tokens":0,"audio_tokens":30},"output_tokens":5,"total_tokens":35}}`, len(b))
			default:
				fmt.Fprintf(w, `{"text":"heard %d bytes in %s","usage":{"type":"duration","seconds":42}}`, len(b), r.FormValue("language"))
			}
		case strings.HasSuffix(r.URL.Path, "/audio/speech"):
			var req struct{ Model, Input, Voice, ResponseFormat string }
			if json.NewDecoder(r.Body).Decode(&req) != nil || req.Voice == "" {
				w.WriteHeader(400)
				io.WriteString(w, `{"error":{"message":"bad speech request","type":"invalid_request_error"}}`)
				return
			}
			w.Header().Set("Content-Type", "audio/wav")
			io.WriteString(w, "RIFF")
			w.(http.Flusher).Flush()
			io.WriteString(w, req.Input)
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// TestAudioWithTheGoSDK: the official openai-go transcribes, translates and speaks
// through the gateway's /v1/audio routes with bare model names, as a voice agent pointed
// at a LiteLLM proxy does; a streamed transcription comes as its events; a chat model
// gets OpenAI's typed 400 naming the field.
func TestAudioWithTheGoSDK(t *testing.T) {
	up := newAudioUpstream(t)
	_, base := realServerURL(t, envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.srv.URL + "/v1", "ANTHROPIC_API_KEY": "ak"}))
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	ctx := context.Background()
	audio := bytes.Repeat([]byte("ID3"), 1000)

	tr, err := c.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{
		File: openai.File(bytes.NewReader(audio), "hello.mp3", "audio/mpeg"), Model: openai.AudioModelWhisper1,
		Language: openai.String("en"), Temperature: openai.Float(0), ResponseFormat: openai.AudioResponseFormatJSON,
	})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Text != "heard 3000 bytes in en" || tr.Usage.Type != "duration" || tr.Usage.AsDuration().Seconds != 42 {
		t.Errorf("transcription %+v", tr)
	}
	up.mu.Lock()
	form := up.form
	up.mu.Unlock()
	if form["model"][0] != "whisper-1" || form["filename"][0] != "hello.mp3" || form["response_format"][0] != "json" {
		t.Errorf("upstream form %v", form)
	}

	tr, err = c.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{
		File: openai.File(bytes.NewReader(audio[:30]), "a.wav", "audio/wav"), Model: openai.AudioModelGPT4oTranscribe})
	if err != nil || tr.Text != "heard 30 bytes" || tr.Usage.AsTokens().InputTokens != 30 {
		t.Errorf("gpt-4o-transcribe: %+v %v", tr, err)
	}

	tl, err := c.Audio.Translations.New(ctx, openai.AudioTranslationNewParams{File: openai.File(bytes.NewReader(audio), "bonjour.mp3", "audio/mpeg"), Model: openai.AudioModelWhisper1})
	if err != nil || tl.Text != "translated" {
		t.Errorf("translation: %+v %v", tl, err)
	}

	resp, err := c.Audio.Speech.New(ctx, openai.AudioSpeechNewParams{Model: openai.SpeechModelTTS1, Input: "Hello from the gateway.",
		Voice: openai.AudioSpeechNewParamsVoiceAlloy, ResponseFormat: openai.AudioSpeechNewParamsResponseFormatWAV})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(b) != "RIFFHello from the gateway." || resp.Header.Get("Content-Type") != "audio/wav" {
		t.Errorf("speech %q %v %q", b, err, resp.Header.Get("Content-Type"))
	}

	var apiErr *openai.Error
	stream := c.Audio.Transcriptions.NewStreaming(ctx, openai.AudioTranscriptionNewParams{
		File: openai.File(bytes.NewReader(audio), "hello.mp3", "audio/mpeg"), Model: openai.AudioModelGPT4oTranscribe})
	var heard string
	for stream.Next() {
		heard += stream.Current().Delta
	}
	if err := stream.Err(); err != nil || heard != fmt.Sprintf("heard %d bytes", len(audio)) {
		t.Errorf("streamed transcription: %q %v", heard, err)
	}
	_, err = c.Audio.Speech.New(ctx, openai.AudioSpeechNewParams{Model: "claude-sonnet-4-5", Input: "Hi", Voice: openai.AudioSpeechNewParamsVoiceAlloy})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "model" || !strings.Contains(apiErr.Message, "has no audio API here") {
		t.Errorf("speech with a chat model: %v", err)
	}
	_, err = c.Audio.Speech.New(ctx, openai.AudioSpeechNewParams{Model: openai.SpeechModelTTS1, Input: strings.Repeat("a", 4097), Voice: openai.AudioSpeechNewParamsVoiceAlloy})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "input" {
		t.Errorf("speech input too long: %v", err)
	}
}
