package providers_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestChatModelsListAudioChatModels: OpenAI's chat-mode audio models, which chat requests
// call (for spoken answers too), are among its chat models; realtime models, Gemini's
// native-audio (Live API) models and fine-tuning templates are not. AudioModels lists
// every transcription model LookupAudio prices, gpt-realtime-whisper included.
func TestChatModelsListAudioChatModels(t *testing.T) {
	c := providers.DefaultCatalog()
	chat := c.ChatModels("openai")
	for _, m := range []string{"openai/gpt-4o-audio-preview", "openai/gpt-4o-mini-audio-preview", "openai/gpt-audio", "openai/gpt-audio-mini"} {
		if !slices.Contains(chat, m) {
			t.Errorf("ChatModels(openai) lacks %s", m)
		}
		if p, ok := c.Lookup(m); !ok || !p.Known {
			t.Errorf("%s listed but not priced", m)
		}
	}
	for _, prov := range []string{"openai", "gemini", "vertex_ai"} {
		for _, m := range c.ChatModels(prov) {
			if strings.Contains(m, "realtime") || strings.Contains(m, "native-audio") || strings.Contains(m, "/ft:") {
				t.Errorf("ChatModels(%s) lists %s, which no chat request calls", prov, m)
			}
		}
	}
	if got := c.ChatModels("gemini"); !slices.Contains(got, "gemini/gemini-2.5-flash") {
		t.Errorf("ChatModels(gemini) lacks gemini/gemini-2.5-flash: %d models", len(got))
	}

	stt := c.AudioModels("openai", providers.AudioTranscription)
	for _, m := range []string{"openai/gpt-realtime-whisper", "openai/whisper-1", "openai/gpt-4o-transcribe"} {
		if _, ok := c.LookupAudio(m); !ok || !slices.Contains(stt, m) {
			t.Errorf("%s: priced %v, listed among openai's transcription models %v", m, ok, slices.Contains(stt, m))
		}
	}
	for _, m := range c.AudioModels("openai", "") {
		if _, ok := c.LookupAudio(m); !ok {
			t.Errorf("AudioModels lists %s, which LookupAudio does not price", m)
		}
	}
}
