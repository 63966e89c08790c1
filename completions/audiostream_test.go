package completions

import (
	"context"
	"net/http/httptest"
	"testing"
)

// TestTranscribeStreamAnsweredWholeAsText: a streamed text transcription whose streaming
// model's upstream ignores stream and answers whole is asked and answered as Transcribe
// does it — asked as json, which says the usage, and written as the transcript's text
// (text/plain) — so the answer is billed its reported usage, not an estimate.
func TestTranscribeStreamAnsweredWholeAsText(t *testing.T) {
	h := newAudioHarness(t) // its upstream answers whole, stream or not
	s, err := h.g.TranscribeStream(context.Background(), Scope{Owner: "k1", Budget: NewBudget(BudgetLimits{})},
		&TranscriptionRequest{Model: "gpt-4o-mini-transcribe", File: []byte("hi"), ResponseFormat: "text", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Whole == nil {
		t.Fatalf("no whole answer: %+v", s)
	}
	rec := httptest.NewRecorder()
	if err := WriteTranscriptionStream(rec, s); err != nil {
		t.Fatal(err)
	}
	if got := h.openai.formats[len(h.openai.formats)-1]; got != "json" {
		t.Errorf("the upstream was asked response_format %q, want json (which says the usage)", got)
	}
	if rec.Body.String() != "heard hi\n" || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("answer %q (%s), want the transcript's text as text/plain", rec.Body, rec.Header().Get("Content-Type"))
	}
	if s.Whole.Usage.Seconds != 60 {
		t.Errorf("whole answer's usage %+v, want the 60 seconds the json answer reported", s.Whole.Usage)
	}
	if r := h.observed.take(t); r.Outcome != RequestOK || r.UsageEstimated || !r.Stream {
		t.Errorf("recorded %+v, want an ok stream billed its reported usage", r)
	}
}
