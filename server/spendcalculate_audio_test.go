package server

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestSpendCalculateInputAudio: /spend/calculate of messages holding a recording prices the
// recording's guessed tokens (a token per 1,600 bytes) at the audio input rate, as the
// gateway bills such a call that reported no usage, and the rest of the prompt as text.
func TestSpendCalculateInputAudio(t *testing.T) {
	hs, _, _ := completionsServerWith(t, nil)
	messages := `"messages":[{"role":"user","content":[{"type":"text","text":"What is said?"},{"type":"input_audio","input_audio":{"data":"` + strings.Repeat("A", 32000) + `","format":"wav"}}]}]`
	resp, b := do2(t, "POST", hs.URL+tokenCounterPath, testKey, `{"model":"gpt-4o-audio-preview",`+messages+`}`, nil)
	var counted tokenCounterAnswer
	if err := json.Unmarshal(b, &counted); err != nil || resp.StatusCode != 200 || counted.TotalTokens <= 15 {
		t.Fatalf("token counter: %d %s", resp.StatusCode, b)
	}
	resp, b = do2(t, "POST", hs.URL+spendCalculatePath, testKey, `{"model":"gpt-4o-audio-preview",`+messages+`}`, nil)
	var a spendCalculateResult
	if err := json.Unmarshal(b, &a); err != nil || resp.StatusCode != 200 {
		t.Fatalf("spend calculate: %d %s", resp.StatusCode, b)
	}
	// gpt-4o-audio-preview: text in at 2.5e-6, audio in at 4e-5; 15 tokens of audio.
	if want := float64(counted.TotalTokens-15)*2.5e-6 + 15*4e-5; math.Abs(a.Cost-want) > 1e-12 {
		t.Errorf("cost %v, want %v", a.Cost, want)
	}
}
