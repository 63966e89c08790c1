package completions

import (
	"math"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestEstimatePassThroughAudio: a pass-through chat body with a recording, whose answer
// reported no usage, is estimated with the recording's guessed tokens as the prompt's audio
// (a token per 1,600 bytes), so that it is priced at the audio input rate, not as text.
func TestEstimatePassThroughAudio(t *testing.T) {
	recording := strings.Repeat("A", 32000) // 24,000 bytes: 15 tokens
	body := `{"model":"gpt-4o-audio-preview","messages":[{"role":"user","content":[{"type":"text","text":"What is said?"},{"type":"input_audio","input_audio":{"data":"` + recording + `","format":"wav"}}]}]}`
	u := estimatePassThroughPrompt("openai", "openai/gpt-4o-audio-preview", []byte(body))
	if u.PromptAudioTokens != 15 || u.PromptTokens <= 15 || EstimatePassThroughPrompt("openai", "openai/gpt-4o-audio-preview", []byte(body)) != u.PromptTokens {
		t.Fatalf("estimate %+v, want 15 of the prompt's tokens audio", u)
	}
	price, _ := providers.DefaultCatalog().Lookup("openai/gpt-4o-audio-preview")
	if got, want := price.Cost(u).InputUSD, float64(u.PromptTokens-15)*2.5e-6+15*4e-5; math.Abs(got-want) > 1e-12 {
		t.Errorf("input cost %g, want %g (the recording at the audio rate)", got, want)
	}
	if text := estimatePassThroughPrompt("openai", "openai/gpt-4o-mini", []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`)); text.PromptAudioTokens != 0 || text.PromptTokens == 0 {
		t.Errorf("text only: %+v", text)
	}
}
