package completions

import (
	"context"
	"testing"
)

// TestReview12cTextFormatDoesNotBypassTheBudget: whisper-1 is priced ($0.0001 a second),
// but a transcription asked for in text (or srt, vtt; or a Groq json answer, a
// translation) reports no duration, so the gateway charges nothing: a key held to
// $0.01 transcribes without end. The cap must bind: the call has to be charged (an
// estimate, or the duration asked for upstream), or refused for a USD-capped key.
func TestReview12cTextFormatDoesNotBypassTheBudget(t *testing.T) {
	h := newAudioHarness(t)
	ctx := context.Background()
	budget := NewBudget(BudgetLimits{MaxCostUSD: 0.01})
	scope := Scope{Owner: "k1", Budget: budget}
	answered := 0
	for range 20 { // 20 minutes of audio at whisper-1's rate: $0.12, 12 times the cap
		if _, err := h.g.Transcribe(ctx, scope, &TranscriptionRequest{Model: "whisper-1", File: []byte("a minute"), ResponseFormat: "text"}); err != nil {
			break
		}
		answered++
	}
	used := budget.Used(ctx)
	if answered == 20 || answered > 0 && used.CostUSD == 0 { // refused (answered 0) binds too
		t.Errorf("a $0.01 key transcribed %d priced calls in text format and was charged $%v", answered, used.CostUSD)
	}
}
