package completions

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestTranscribeWithoutUsageIsEstimated: a transcription whose answer says nothing of its
// audio (a json answer without usage, as some OpenAI-compatible servers give; an srt
// answer) is billed the length measured here (the WAV file's header, the last cue), marked
// estimated on the result and the record; one whose answer reports its length is billed
// that, not estimated; a file whose headers do not say its length (WebM here) is billed
// the length its size gives at 128 kbit/s, estimated, not nothing.
func TestTranscribeWithoutUsageIsEstimated(t *testing.T) {
	for _, tc := range []struct {
		what, format, answer string
		file                 []byte
		seconds              float64
		estimated            bool
	}{
		{"json without usage, WAV file", "json", `{"text":"hello"}`, wavFile(8000, 12), 12, true},
		{"srt of a WAV file", "srt", "1\n00:00:00,000 --> 00:00:09,000\nhello\n", wavFile(8000, 10), 10, true},
		{"json with its length", "json", `{"text":"hello","usage":{"type":"duration","seconds":7}}`, wavFile(8000, 12), 7, false},
		{"json without usage, a file of unknown length", "json", `{"text":"hello"}`, append([]byte("\x1a\x45\xdf\xa3webm"), make([]byte, 32000-8)...), 2, true},
	} {
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			if tc.format == "srt" {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			} else {
				w.Header().Set("Content-Type", "application/json")
			}
			io.WriteString(w, tc.answer)
		}))
		obs := &recordingObserver{}
		env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": up.URL + "/v1"}
		g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}), Prices: providers.DefaultCatalog(), Observer: obs})
		if err != nil {
			t.Fatal(err)
		}
		budget := NewBudget(BudgetLimits{MaxCostUSD: 1})
		res, err := g.Transcribe(context.Background(), Scope{Owner: "k1", Budget: budget},
			&TranscriptionRequest{Model: "openai/whisper-1", File: tc.file, Filename: "a.wav", ResponseFormat: tc.format})
		up.Close()
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		want := providers.DefaultCatalog().AudioCost("openai/whisper-1", providers.AudioUsage{Seconds: tc.seconds}).TotalUSD
		if res.Usage.Seconds != tc.seconds || res.UsageEstimated != tc.estimated || math.Abs(budget.Used(context.Background()).CostUSD-want) > 1e-12 {
			t.Errorf("%s: %v seconds (estimated %v), charged $%v; want %v seconds (estimated %v), $%v",
				tc.what, res.Usage.Seconds, res.UsageEstimated, budget.Used(context.Background()).CostUSD, tc.seconds, tc.estimated, want)
		}
		if r := obs.take(t); r.UsageEstimated != tc.estimated {
			t.Errorf("%s: recorded estimated %v, want %v", tc.what, r.UsageEstimated, tc.estimated)
		}
	}
}
