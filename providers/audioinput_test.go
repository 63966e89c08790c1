package providers_test

import (
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// audioRequest is a request whose second turn's second part is a recording.
func audioRequest(model string) *providers.Request {
	return &providers.Request{Model: model, Messages: []providers.Message{
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "What is said?", Parts: []providers.Part{{Text: "What is said?"},
			{Audio: &providers.Audio{Data: "UklGRg==", Format: "wav"}}}},
	}}
}

// TestAudioInputCheck: OpenAI-format chat completions, Gemini and Vertex AI's Gemini take
// recordings; Anthropic, Bedrock, Vertex AI's Claude and OpenAI's Responses API refuse
// them naming the part.
func TestAudioInputCheck(t *testing.T) {
	vertex, err := providers.NewVertex(providers.VertexConfig{Config: providers.Config{Name: "vertex_ai", BaseURL: "http://127.0.0.1:1"}, Project: "p", AccessToken: "t"})
	if err != nil {
		t.Fatal(err)
	}
	gem, err := providers.New(providers.FormatGemini, providers.Config{Name: "gemini", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p     providers.Provider
		model string
		fit   bool
	}{
		{providers.NewOpenAI(providers.Config{Name: "openai", APIKey: "k"}), "gpt-4o-audio-preview", true},
		{providers.NewOpenAI(providers.Config{Name: "groq", BaseURL: "http://127.0.0.1:1/v1", APIKey: "k"}), "some-model", true},
		{gem, "gemini-2.5-flash", true},
		{vertex, "gemini-2.5-flash", true},
		{vertex, "claude-sonnet-4-5", false},
		{providers.NewAnthropic(providers.Config{Name: "anthropic", APIKey: "k"}), "claude-sonnet-4-5", false},
		{providers.NewBedrock(providers.Config{Name: "bedrock", APIKey: "ABSKkey"}), "anthropic.claude-3-5-sonnet-20240620-v1:0", false},
		{providers.NewOpenAI(providers.Config{Name: "openai", APIKey: "k", ResponsesAPI: providers.ResponsesAlways}), "gpt-4o", false},
	} {
		err := providers.Check(c.p, c.model, audioRequest(c.model))
		var ue *providers.UnsupportedError
		switch {
		case c.fit && err != nil:
			t.Errorf("%s %s: %v, want the recording taken", c.p.Name(), c.model, err)
		case !c.fit && (!errors.As(err, &ue) || ue.Field != "messages[1].content[1].input_audio"):
			t.Errorf("%s %s: %v, want an UnsupportedError naming messages[1].content[1].input_audio", c.p.Name(), c.model, err)
		}
	}
}

// TestCheckAudio: the formats OpenAI takes and base64 data; the error names the field.
func TestCheckAudio(t *testing.T) {
	for _, c := range []struct {
		a     providers.Audio
		field string
	}{
		{providers.Audio{Data: "UklGRg==", Format: "wav"}, ""},
		{providers.Audio{Data: "UklGRg==", Format: "mp3"}, ""},
		{providers.Audio{Data: "UklGRg==", Format: "WAV"}, "format"},
		{providers.Audio{Data: "UklGRg==", Format: ""}, "format"},
		{providers.Audio{Data: "data:audio/wav;base64,UklGRg==", Format: "wav"}, "data"},
		{providers.Audio{Data: "", Format: "wav"}, "data"},
	} {
		err := providers.CheckAudio(c.a)
		var ie *providers.ImageError
		if c.field == "" && err != nil || c.field != "" && (!errors.As(err, &ie) || ie.Field != c.field) {
			t.Errorf("%+v: %v, want field %q", c.a, err, c.field)
		}
	}
}

// TestPriceAudioTokens: the prompt's audio tokens are priced at the audio input rate, the
// input rate when the catalogue has none.
func TestPriceAudioTokens(t *testing.T) {
	p, ok := providers.DefaultCatalog().Lookup("openai/gpt-4o-audio-preview")
	if !ok || p.InputPerAudioToken != 4e-5 {
		t.Fatalf("gpt-4o-audio-preview: %+v, want input_cost_per_audio_token 4e-5", p)
	}
	c := p.Cost(providers.Usage{PromptTokens: 100, PromptAudioTokens: 80, CompletionTokens: 10})
	if want := 20*2.5e-6 + 80*4e-5; c.InputUSD < want-1e-12 || c.InputUSD > want+1e-12 {
		t.Errorf("input = %g, want %g", c.InputUSD, want)
	}
	own := providers.Price{Known: true, InputPerToken: 1e-6, OutputPerToken: 2e-6}
	if c := own.Cost(providers.Usage{PromptTokens: 100, PromptAudioTokens: 80}); c.InputUSD < 1e-4-1e-12 || c.InputUSD > 1e-4+1e-12 {
		t.Errorf("without an audio rate: input = %g, want every prompt token at the input rate", c.InputUSD)
	}
}

// TestAudioOutputCheck: only OpenAI-format chat completions answer aloud; the others, and
// OpenAI's Responses API, refuse audio.
func TestAudioOutputCheck(t *testing.T) {
	gem, err := providers.New(providers.FormatGemini, providers.Config{Name: "gemini", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p     providers.Provider
		model string
		fit   bool
	}{
		{providers.NewOpenAI(providers.Config{Name: "openai", APIKey: "k"}), "gpt-4o-audio-preview", true},
		{gem, "gemini-2.5-flash", false},
		{providers.NewAnthropic(providers.Config{Name: "anthropic", APIKey: "k"}), "claude-sonnet-4-5", false},
		{providers.NewOpenAI(providers.Config{Name: "openai", APIKey: "k", ResponsesAPI: providers.ResponsesAlways}), "gpt-4o", false},
	} {
		req := &providers.Request{Model: c.model, Messages: []providers.Message{{Role: "user", Content: "hi"}},
			Modalities: []string{"text", "audio"}, Audio: &providers.AudioOutput{Voice: "alloy", Format: "wav"}}
		err := providers.Check(c.p, c.model, req)
		var ue *providers.UnsupportedError
		switch {
		case c.fit && err != nil:
			t.Errorf("%s %s: %v, want it taken", c.p.Name(), c.model, err)
		case !c.fit && (!errors.As(err, &ue) || ue.Field != "audio"):
			t.Errorf("%s %s: %v, want an UnsupportedError naming audio", c.p.Name(), c.model, err)
		}
	}
	p, _ := providers.DefaultCatalog().Lookup("openai/gpt-audio")
	c := p.Cost(providers.Usage{PromptTokens: 10, CompletionTokens: 60, CompletionAudioTokens: 50})
	if want := 10*1e-5 + 50*6.4e-5; c.OutputUSD < want-1e-12 || c.OutputUSD > want+1e-12 {
		t.Errorf("gpt-audio output = %g, want %g (audio tokens at output_cost_per_audio_token)", c.OutputUSD, want)
	}
}
