package completions

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// audioBenchUpstream answers every transcription with a fixed JSON body (reading the whole
// upload first) and every speech request with 256 KiB of audio.
func audioBenchUpstream(b *testing.B) *httptest.Server {
	audio := make([]byte, 256<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/v1/audio/speech" {
			w.Header().Set("Content-Type", "audio/mpeg")
			w.Write(audio)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"text":"Let's start with the budget.","usage":{"type":"duration","seconds":42}}`)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// What the gateway adds to a transcription of a 1 MiB file and to 256 KiB of speech, over
// the OpenAI adapter alone (the multipart encoding and the HTTP call are the adapter's).
func BenchmarkAudio(b *testing.B) {
	srv := audioBenchUpstream(b)
	file := make([]byte, 1<<20)
	ctx := context.Background()
	o := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL + "/v1", APIKey: "k"})
	env := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.URL + "/v1"}
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices: providers.DefaultCatalog(), Ledger: &recordingLedger{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("transcription/adapter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := o.Transcribe(ctx, &providers.TranscriptionRequest{Model: "whisper-1", File: file, Filename: "a.mp3"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("transcription/gateway", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := g.Transcribe(ctx, Scope{}, &TranscriptionRequest{Model: "whisper-1", File: file, Filename: "a.mp3"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("speech/adapter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sp, err := o.Speak(ctx, &providers.SpeechRequest{Model: "tts-1", Input: "Your table is ready.", Voice: "alloy"})
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, sp.Body)
			sp.Body.Close()
		}
	})
	b.Run("speech/gateway", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sp, err := g.Speak(ctx, Scope{}, &SpeechRequest{Model: "tts-1", Input: "Your table is ready.", Voice: "alloy"})
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, sp)
			sp.Close()
		}
	})
}
