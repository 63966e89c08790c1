package providers

import "slices"

// The catalogue modes of audio models (LiteLLM's).
const (
	// AudioTranscription is the mode of speech-to-text models (whisper-1, …).
	AudioTranscription = "audio_transcription"
	// AudioSpeech is the mode of text-to-speech models (tts-1, …).
	AudioSpeech = "audio_speech"
)

// AudioPrice is an audio model's catalogue entry. Rates are USD; a rate the catalogue does
// not give is 0 and its Has* flag false.
type AudioPrice struct {
	// Key is the catalogue key ("whisper-1", "groq/whisper-large-v3").
	Key string
	// Provider is LiteLLM's litellm_provider; Mode is AudioTranscription or AudioSpeech.
	Provider, Mode string
	// InputPerSecond prices a second of audio transcribed.
	InputPerSecond    float64
	HasInputPerSecond bool
	// InputPerCharacter prices a character of text spoken (tts-1).
	InputPerCharacter    float64
	HasInputPerCharacter bool
	// InputPerToken and OutputPerToken price text tokens in and out; InputPerAudioToken
	// audio tokens in (gpt-4o-transcribe).
	InputPerToken, OutputPerToken, InputPerAudioToken     float64
	HasInputPerToken, HasOutputPerToken, HasInputPerAudio bool
	// OutputPerAudioToken and OutputPerSecond price speech's audio out
	// (gpt-4o-mini-tts), which a speech answer does not report.
	OutputPerAudioToken, OutputPerSecond float64
}

// audioPrice is e's rates as an audio model's.
func (e catalogEntry) audioPrice(key string) AudioPrice {
	return AudioPrice{Key: key, Provider: e.Provider, Mode: e.Mode,
		InputPerSecond: e.InputPerSecond.v, HasInputPerSecond: e.InputPerSecond.ok,
		InputPerCharacter: e.InputPerCharacter.v, HasInputPerCharacter: e.InputPerCharacter.ok,
		InputPerToken: e.Input.v, HasInputPerToken: e.Input.ok, OutputPerToken: e.Output.v, HasOutputPerToken: e.Output.ok,
		InputPerAudioToken: e.InputPerAudioToken.v, HasInputPerAudio: e.InputPerAudioToken.ok,
		OutputPerAudioToken: e.OutputPerAudioToken.v, OutputPerSecond: e.OutputPerSecond.v}
}

// LookupAudio finds an audio model given as "provider/model", as Lookup finds chat models.
func (c *Catalog) LookupAudio(model string) (AudioPrice, bool) {
	if c == nil || c.audio == nil {
		return AudioPrice{}, false
	}
	p, ok := c.audio.Lookup(model)
	if !ok {
		return AudioPrice{}, false
	}
	r, ok := c.audioRates[p.Key]
	return r, ok
}

// AudioModels lists a provider's catalogued audio models of mode (AudioTranscription or
// AudioSpeech; "" for both) as "provider/model" strings, sorted: every one LookupAudio
// prices (gpt-realtime-whisper too), but fine-tuning price templates.
func (c *Catalog) AudioModels(provider, mode string) []string {
	if c == nil || c.audio == nil {
		return nil
	}
	// Not ChatModels' filter: it leaves out realtime names, which transcription models have.
	keep := func(key string) bool { return !fineTuningTemplate(key) }
	return slices.DeleteFunc(c.audio.listed(provider, keep), func(m string) bool {
		p, ok := c.LookupAudio(m)
		return !ok || mode != "" && p.Mode != mode
	})
}

// AudioCost prices an audio call of model ("provider/model") from what it used. A
// transcription is priced by the seconds of audio where the catalogue prices it so (the
// answer must say how long the audio was: whisper-1's usage, verbose_json's duration), or
// by its tokens where it prices tokens and the answer reports them (gpt-4o-transcribe);
// speech by the characters of its input (tts-1) or by its input tokens (counted locally;
// gpt-4o-mini-tts). Known is false when the call cannot be priced in full: the amounts are
// then what could be priced (speech's text input when its audio output is priced but not
// reported), or 0 — never a guess.
func (c *Catalog) AudioCost(model string, u AudioUsage) Cost {
	p, ok := c.LookupAudio(model)
	if !ok {
		return Cost{}
	}
	return p.Cost(u)
}

// Cost prices u at p's rates (see Catalog.AudioCost).
func (p AudioPrice) Cost(u AudioUsage) Cost {
	var in, out float64
	known := false
	switch {
	case p.Mode == AudioSpeech && p.HasInputPerCharacter:
		in, known = float64(u.Characters)*p.InputPerCharacter, true
	case p.Mode == AudioSpeech && p.HasInputPerToken && u.OutputAudioTokens > 0 && (p.OutputPerAudioToken > 0 || p.HasOutputPerToken):
		// An sse answer says the audio tokens it made: priced at the audio output rate.
		rate := p.OutputPerAudioToken
		if rate == 0 {
			rate = p.OutputPerToken
		}
		in, out, known = float64(u.InputTokens)*p.InputPerToken, float64(u.OutputAudioTokens)*rate, true
	case p.Mode == AudioSpeech && p.HasInputPerToken:
		in = float64(u.InputTokens) * p.InputPerToken
		// The audio out is priced too, but an audio answer does not say how much there was.
		known = p.OutputPerAudioToken == 0 && p.OutputPerSecond == 0 && (!p.HasOutputPerToken || p.OutputPerToken == 0)
		if !known {
			return Cost{InputUSD: in, TotalUSD: in}
		}
	case p.Mode == AudioTranscription && p.HasInputPerSecond && u.Seconds > 0:
		// LiteLLM's output_cost_per_second of whisper-1 repeats the input rate: the price
		// is per second of audio ($0.006 a minute), counted once.
		in, known = u.Seconds*p.InputPerSecond, true
	case p.Mode == AudioTranscription && (p.HasInputPerToken || p.HasInputPerAudio) && u.InputTokens+u.OutputTokens > 0:
		audio := min(u.InputAudioTokens, u.InputTokens)
		audioRate := p.InputPerToken
		if p.HasInputPerAudio {
			audioRate = p.InputPerAudioToken
		}
		in = float64(u.InputTokens-audio)*p.InputPerToken + float64(audio)*audioRate
		out, known = float64(u.OutputTokens)*p.OutputPerToken, true
	}
	if !known {
		return Cost{}
	}
	return Cost{InputUSD: in, OutputUSD: out, TotalUSD: in + out, Known: true}
}
