package providers

import (
	"fmt"
	"strings"
)

// Audio is a recording in a user turn (OpenAI's input_audio content part): base64 data and
// its format. OpenAI-format upstreams get it as an input_audio part, Gemini (and Vertex AI's
// Gemini) inlineData of its media type (AudioMediaType); adapters without audio input
// (Anthropic, Bedrock, OpenAI's Responses API) refuse it (AudioInputSupporter), so that a
// model that takes it is called instead. Audio is passed on as it came, never decoded.
type Audio struct {
	// Data is the recording, base64-encoded.
	Data string `json:"data"`
	// Format is the recording's format: one of AudioInputFormats.
	Format string `json:"format"`
}

// AudioInputFormats are the formats of Audio every adapter with audio input takes (OpenAI's
// input_audio formats).
var AudioInputFormats = []string{"wav", "mp3"}

// AudioMediaType is the media type of an input_audio format, as Gemini's inlineData takes
// it (audio/wav, audio/mp3).
func AudioMediaType(format string) string {
	return "audio/" + strings.ToLower(format)
}

// CheckAudio reports whether a can be passed on: a Format of AudioInputFormats and Data of
// well-formed base64. Its errors are *ImageError with Field "data" or "format".
func CheckAudio(a Audio) error {
	known := false
	for _, f := range AudioInputFormats {
		known = known || a.Format == f
	}
	if !known {
		return &ImageError{"format", fmt.Sprintf("must be %s, got %q", strings.Join(AudioInputFormats, " or "), clip(a.Format, 32))}
	}
	if !wellFormedBase64(a.Data) {
		return &ImageError{"data", "must be base64-encoded audio (not a data URL)"}
	}
	return nil
}

// AudioInputSupporter is implemented by adapters whose upstream takes audio in user turns
// (Request messages with a Part's Audio set) for some models or requests.
type AudioInputSupporter interface {
	// SupportsAudioInput reports whether model takes req's audio, and why not.
	SupportsAudioInput(model string, req *Request) (bool, string)
}

// audioInputField is the field ("messages[i].content[j].input_audio") of the first audio
// part of msgs, "" when there is none.
func audioInputField(msgs []Message) string {
	for i := range msgs {
		for j, p := range msgs[i].Parts {
			if p.Audio != nil {
				return fmt.Sprintf("messages[%d].content[%d].input_audio", i, j)
			}
		}
	}
	return ""
}

// checkAudioInput refuses req's audio for a provider that does not take it for model.
func checkAudioInput(p Provider, model string, req *Request) error {
	field := audioInputField(req.Messages)
	if field == "" {
		return nil
	}
	why := "this provider takes no audio input (OpenAI-format and Gemini models do)"
	if s, ok := p.(AudioInputSupporter); ok {
		var yes bool
		if yes, why = s.SupportsAudioInput(model, req); yes {
			return nil
		}
	}
	return &UnsupportedError{Provider: p.Name(), Field: field, Reason: why}
}

// audioTokens estimates the prompt tokens of a recording whose length is unknown: OpenAI
// counts a token per 100 ms of audio; the length is guessed from the size at 128 kbit/s
// (16,000 bytes a second, so a token per 1,600 bytes). Only for usage an upstream did not
// report.
func audioTokens(a *Audio) int {
	return max(1, len(a.Data)*3/4/1600)
}

// AudioOutput is what a spoken answer is to be (OpenAI's audio request parameter).
type AudioOutput struct {
	// Voice is the voice (alloy, ash, ballad, coral, echo, sage, shimmer, verse, …).
	Voice string `json:"voice"`
	// Format is the audio's format (wav, mp3, flac, opus, pcm16).
	Format string `json:"format"`
}

// AudioAnswer is a spoken answer as OpenAI gives it (message.audio): its id (which a later
// assistant turn may name), the base64 audio, when the id stops being usable (Unix seconds)
// and what was said.
type AudioAnswer struct {
	ID         string `json:"id"`
	Data       string `json:"data"`
	ExpiresAt  int64  `json:"expires_at"`
	Transcript string `json:"transcript"`
}

// AudioOutputSupporter is implemented by adapters whose upstream can answer aloud
// (OpenAIOptions.Audio) for some requests.
type AudioOutputSupporter interface {
	// SupportsAudioOutput reports whether model can answer req aloud, and why not.
	SupportsAudioOutput(model string, req *Request) (bool, string)
}

// checkAudioOutput refuses a spoken answer asked of a provider that cannot give one, and an
// earlier spoken answer (an assistant turn's AudioID) sent to one that cannot hear it.
func checkAudioOutput(p Provider, model string, req *Request) error {
	field := ""
	if req.Audio != nil {
		field = "audio"
	}
	for i := range req.Messages {
		if field == "" && req.Messages[i].AudioID != "" {
			field = fmt.Sprintf("messages[%d].audio", i)
		}
	}
	if field == "" {
		return nil
	}
	why := "only OpenAI-format chat completions answer aloud (gpt-4o-audio-preview, gpt-audio)"
	if s, ok := p.(AudioOutputSupporter); ok {
		var yes bool
		if yes, why = s.SupportsAudioOutput(model, req); yes {
			return nil
		}
	}
	return &UnsupportedError{Provider: p.Name(), Field: field, Reason: why}
}
