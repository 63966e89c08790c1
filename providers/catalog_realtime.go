package providers

// RealtimeMode is the catalogue mode of OpenAI's Realtime API models (gpt-realtime,
// gpt-4o-realtime-preview, …), which only a realtime session (a WebSocket) can call: they
// are kept apart from the chat models, so that chat listings and chat routing never see
// them.
const RealtimeMode = "realtime"

// RealtimePrice is a realtime model's catalogue entry. Rates are USD per token.
type RealtimePrice struct {
	// Key is the catalogue key ("gpt-realtime", "azure/gpt-realtime-2025-08-28").
	Key string
	// Provider is LiteLLM's litellm_provider.
	Provider string
	// Known is false when the entry lacks one of the text or audio input or output rates;
	// Cost then reports an unknown price rather than a made-up one.
	Known bool
	// InputPerToken and OutputPerToken price text (and image) tokens in and out;
	// InputPerAudioToken and OutputPerAudioToken audio tokens.
	InputPerToken, OutputPerToken, InputPerAudioToken, OutputPerAudioToken float64
	// CacheReadPerToken prices cached text input tokens (LiteLLM's
	// cache_read_input_token_cost, else the input rate); CacheReadPerAudioToken cached
	// audio input tokens: LiteLLM's cache_read_input_audio_token_cost, else its
	// cache_creation_input_audio_token_cost (the name its older realtime entries give the
	// cached audio rate: OpenAI bills no cache writes), else CacheReadPerToken.
	CacheReadPerToken, CacheReadPerAudioToken float64
}

// RealtimeUsage is the usage of a realtime session's responses, as OpenAI's response.done
// events report it (response.usage): input and output tokens with their text and audio
// parts, and the cached part of the input with its own.
type RealtimeUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	// InputTextTokens, InputAudioTokens and InputImageTokens are the parts of InputTokens
	// (input_token_details), cached ones included.
	InputTextTokens  int `json:"input_text_tokens,omitempty"`
	InputAudioTokens int `json:"input_audio_tokens,omitempty"`
	InputImageTokens int `json:"input_image_tokens,omitempty"`
	// CachedTokens are the input tokens read from the cache; CachedTextTokens and
	// CachedAudioTokens their parts (cached_tokens_details).
	CachedTokens      int `json:"cached_tokens,omitempty"`
	CachedTextTokens  int `json:"cached_text_tokens,omitempty"`
	CachedAudioTokens int `json:"cached_audio_tokens,omitempty"`
	// OutputTextTokens and OutputAudioTokens are the parts of OutputTokens
	// (output_token_details).
	OutputTextTokens  int `json:"output_text_tokens,omitempty"`
	OutputAudioTokens int `json:"output_audio_tokens,omitempty"`
}

// Add sums u and v.
func (u RealtimeUsage) Add(v RealtimeUsage) RealtimeUsage {
	return RealtimeUsage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens,
		InputTextTokens: u.InputTextTokens + v.InputTextTokens, InputAudioTokens: u.InputAudioTokens + v.InputAudioTokens,
		InputImageTokens: u.InputImageTokens + v.InputImageTokens, CachedTokens: u.CachedTokens + v.CachedTokens,
		CachedTextTokens: u.CachedTextTokens + v.CachedTextTokens, CachedAudioTokens: u.CachedAudioTokens + v.CachedAudioTokens,
		OutputTextTokens: u.OutputTextTokens + v.OutputTextTokens, OutputAudioTokens: u.OutputAudioTokens + v.OutputAudioTokens}
}

// Tokens is u as a chat call's Usage: its input as prompt tokens, its output as completion
// tokens, its cached input as cached tokens (the budget and the ledger count these), and
// the audio parts of each as the prompt's and the answer's audio tokens (the history shows
// them; Tokens is not priced: RealtimePrice.Cost prices u).
func (u RealtimeUsage) Tokens() Usage {
	return Usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, CachedTokens: min(u.CachedTokens, u.InputTokens),
		PromptAudioTokens: min(u.InputAudioTokens, u.InputTokens), CompletionAudioTokens: min(u.OutputAudioTokens, u.OutputTokens)}
}

// realtimePrice is e's rates as a realtime model's.
func (e catalogEntry) realtimePrice(key string) RealtimePrice {
	p := RealtimePrice{Key: key, Provider: e.Provider,
		Known:         e.Input.ok && e.Output.ok && e.InputPerAudioToken.ok && e.OutputPerAudioToken.ok,
		InputPerToken: e.Input.v, OutputPerToken: e.Output.v, InputPerAudioToken: e.InputPerAudioToken.v, OutputPerAudioToken: e.OutputPerAudioToken.v,
		CacheReadPerToken: e.Input.v}
	if e.CacheRead.ok {
		p.CacheReadPerToken = e.CacheRead.v
	}
	switch {
	case e.CacheReadAudio.ok:
		p.CacheReadPerAudioToken = e.CacheReadAudio.v
	case e.CacheCreationAudio.ok:
		p.CacheReadPerAudioToken = e.CacheCreationAudio.v
	default:
		p.CacheReadPerAudioToken = p.CacheReadPerToken
	}
	return p
}

// Cost prices u at p's rates: the input's uncached text (and image) tokens at the input
// rate and its uncached audio tokens at the audio input rate, its cached text and audio
// tokens at their cache-read rates (without cached_tokens_details, the cached tokens are
// taken as text), the output's audio tokens at the audio output rate and the rest at the
// output rate. Without input_token_details, the input is text but for what is said audio.
func (p RealtimePrice) Cost(u RealtimeUsage) Cost {
	if !p.Known {
		return Cost{}
	}
	audioIn := min(u.InputAudioTokens, u.InputTokens)
	cachedAudio := min(u.CachedAudioTokens, audioIn)
	cachedText := max(min(u.CachedTokens, u.InputTokens)-cachedAudio, 0)
	if u.CachedTextTokens+u.CachedAudioTokens > 0 {
		cachedText = min(u.CachedTextTokens, u.InputTokens-audioIn)
	}
	textIn := u.InputTokens - audioIn // text and image tokens
	in := float64(max(textIn-cachedText, 0))*p.InputPerToken + float64(cachedText)*p.CacheReadPerToken +
		float64(audioIn-cachedAudio)*p.InputPerAudioToken + float64(cachedAudio)*p.CacheReadPerAudioToken
	audioOut := min(u.OutputAudioTokens, u.OutputTokens)
	out := float64(u.OutputTokens-audioOut)*p.OutputPerToken + float64(audioOut)*p.OutputPerAudioToken
	return Cost{InputUSD: in, OutputUSD: out, TotalUSD: in + out, Known: true}
}

// LookupRealtime finds a realtime model given as "provider/model", as Lookup finds chat
// models.
func (c *Catalog) LookupRealtime(model string) (RealtimePrice, bool) {
	if c == nil || c.realtime == nil {
		return RealtimePrice{}, false
	}
	p, ok := c.realtime.Lookup(model)
	if !ok {
		return RealtimePrice{}, false
	}
	r, ok := c.realtimeRates[p.Key]
	return r, ok
}

// RealtimeModels lists a provider's catalogued realtime models as "provider/model"
// strings, sorted.
func (c *Catalog) RealtimeModels(provider string) []string {
	if c == nil || c.realtime == nil {
		return nil
	}
	return c.realtime.listed(provider, func(string) bool { return true })
}

// RealtimeCost prices the usage of a realtime session's responses for model
// ("provider/model"; see RealtimePrice.Cost). An unknown model costs 0 with Known false.
func (c *Catalog) RealtimeCost(model string, u RealtimeUsage) Cost {
	p, ok := c.LookupRealtime(model)
	if !ok {
		return Cost{}
	}
	return p.Cost(u)
}
