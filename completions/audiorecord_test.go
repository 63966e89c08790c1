package completions

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestAudioOperationsRecordAudioTokens: the record of a transcription priced by tokens
// carries its input audio tokens as the prompt's audio (prompt_audio_tokens in the
// history), a speech answered as server-sent events its audio made as the completion's,
// and a realtime session's usage its audio parts both ways.
func TestAudioOperationsRecordAudioTokens(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/audio/transcriptions"):
			r.ParseMultipartForm(1 << 20)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"text":"hello there","usage":{"type":"tokens","input_tokens":40,"input_token_details":{"text_tokens":0,"audio_tokens":40},"output_tokens":3,"total_tokens":43}}`)
		case strings.HasSuffix(r.URL.Path, "/audio/speech"):
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"type\":\"speech.audio.delta\",\"audio\":\"SUQz\"}\n\n")
			io.WriteString(w, "data: {\"type\":\"speech.audio.done\",\"usage\":{\"input_tokens\":7,\"output_tokens\":100,\"total_tokens\":107}}\n\n")
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(up.Close)
	obs := &recordingObserver{}
	g, err := New(Options{Providers: fakeRegistry{"openai": providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "k", HTTPClient: up.Client()})},
		Prices: providers.DefaultCatalog(), Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Transcribe(context.Background(), Scope{}, &TranscriptionRequest{Model: "openai/gpt-4o-transcribe", File: []byte("RIFF"), Filename: "a.wav"}); err != nil {
		t.Fatal(err)
	}
	if r := obs.take(t); r.Usage.PromptTokens != 40 || r.Usage.PromptAudioTokens != 40 || r.Usage.CompletionAudioTokens != 0 {
		t.Errorf("transcription record usage %+v", r.Usage)
	}
	s, err := g.Speak(context.Background(), Scope{}, &SpeechRequest{Model: "openai/gpt-4o-mini-tts", Input: "Hello there", Voice: "alloy", StreamFormat: "sse"})
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(s)
	s.Close()
	if r := obs.take(t); r.Usage.CompletionTokens != 100 || r.Usage.CompletionAudioTokens != 100 || r.Usage.PromptAudioTokens != 0 {
		t.Errorf("speech record usage %+v", r.Usage)
	}
	rt := providers.RealtimeUsage{InputTokens: 50, InputAudioTokens: 30, InputTextTokens: 20, OutputTokens: 80, OutputAudioTokens: 60, OutputTextTokens: 20}.Tokens()
	if rt.PromptAudioTokens != 30 || rt.CompletionAudioTokens != 60 || rt.PromptTokens != 50 || rt.CompletionTokens != 80 {
		t.Errorf("realtime usage as tokens %+v", rt)
	}
}
