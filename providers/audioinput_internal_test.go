package providers

import (
	"encoding/json"
	"testing"
)

// TestGeminiAudioUsage: the AUDIO entry of promptTokensDetails is the prompt's audio
// tokens; a list without one, null or one the gateway cannot read is none.
func TestGeminiAudioUsage(t *testing.T) {
	for body, want := range map[string]int{
		`{"promptTokenCount":60,"promptTokensDetails":[{"modality":"TEXT","tokenCount":10},{"modality":"AUDIO","tokenCount":50}]}`: 50,
		`{"promptTokenCount":60,"promptTokensDetails":[{"modality":"TEXT","tokenCount":60}]}`:                                      0,
		`{"promptTokenCount":60,"promptTokensDetails":null}`:                                                                       0,
		`{"promptTokenCount":60,"promptTokensDetails":{"modality":"AUDIO"}}`:                                                       0,
	} {
		var u geminiUsage
		if err := json.Unmarshal([]byte(body), &u); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if got := u.usage(); got.PromptAudioTokens != want || got.PromptTokens != 60 {
			t.Errorf("%s: usage %+v, want %d audio tokens of 60", body, got, want)
		}
	}
}

// TestOpenAIAudioBodyAndUsage: a recording is sent as an input_audio part, and
// prompt_tokens_details.audio_tokens is read.
func TestOpenAIAudioBodyAndUsage(t *testing.T) {
	parts := openAIParts([]Part{{Text: "hi"}, {Audio: &Audio{Data: "UklGRg==", Format: "mp3"}}})
	b, _ := json.Marshal(parts)
	if want := `[{"type":"text","text":"hi"},{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"mp3"}}]`; string(b) != want {
		t.Errorf("parts = %s, want %s", b, want)
	}
	var u openAIUsage
	json.Unmarshal([]byte(`{"prompt_tokens":9,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":7}}`), &u)
	if got := u.usage(); got.PromptAudioTokens != 7 {
		t.Errorf("usage %+v, want 7 audio tokens", got)
	}
}
