package providers

// Format names a wire format.
type Format string

// The supported wire formats.
const (
	FormatOpenAI    Format = "openai"
	FormatAnthropic Format = "anthropic"
	FormatGemini    Format = "gemini"
)

// Preset describes a known provider: its wire format, default endpoint and the
// conventional environment variables for its key and base URL.
type Preset struct {
	Name        string
	Format      Format
	BaseURL     string
	KeyEnv      string // e.g. "GROQ_API_KEY"; empty when no key is used
	BaseURLEnv  string // e.g. "GROQ_BASE_URL"
	KeyOptional bool   // local servers (Ollama) need no key
	// MaxTokensField is the OpenAI-format field for the output-token limit.
	MaxTokensField string
	// OmitStreamOptions: the server rejects stream_options (and reports usage unasked).
	OmitStreamOptions bool
	// ShortToolCallIDs: the server takes only 9-character tool-call ids (see Config).
	ShortToolCallIDs bool
	// Prefill is how the server continues a partial answer (OpenAI format; Anthropic
	// always can, Gemini and OpenAI cannot).
	Prefill PrefillMode
	// EmbeddingsOnly: the provider serves embeddings and no chat (Voyage AI); see
	// Config.EmbeddingsOnly.
	EmbeddingsOnly bool
	// EmbeddingDimensionsField: see Config.
	EmbeddingDimensionsField string
}

// Presets returns the known providers, in a fresh slice.
func Presets() []Preset {
	return []Preset{
		{Name: "openai", Format: FormatOpenAI, BaseURL: DefaultOpenAIBaseURL, KeyEnv: "OPENAI_API_KEY", BaseURLEnv: "OPENAI_BASE_URL", MaxTokensField: "max_completion_tokens"},
		{Name: "anthropic", Format: FormatAnthropic, BaseURL: DefaultAnthropicBaseURL, KeyEnv: "ANTHROPIC_API_KEY", BaseURLEnv: "ANTHROPIC_BASE_URL"},
		{Name: "gemini", Format: FormatGemini, BaseURL: DefaultGeminiBaseURL, KeyEnv: "GEMINI_API_KEY", BaseURLEnv: "GEMINI_BASE_URL"},
		{Name: "mistral", Format: FormatOpenAI, BaseURL: "https://api.mistral.ai/v1", KeyEnv: "MISTRAL_API_KEY", BaseURLEnv: "MISTRAL_BASE_URL", OmitStreamOptions: true, ShortToolCallIDs: true, Prefill: PrefillPrefix},
		{Name: "groq", Format: FormatOpenAI, BaseURL: "https://api.groq.com/openai/v1", KeyEnv: "GROQ_API_KEY", BaseURLEnv: "GROQ_BASE_URL"},
		{Name: "together", Format: FormatOpenAI, BaseURL: "https://api.together.xyz/v1", KeyEnv: "TOGETHER_API_KEY", BaseURLEnv: "TOGETHER_BASE_URL"},
		{Name: "deepseek", Format: FormatOpenAI, BaseURL: "https://api.deepseek.com/v1", KeyEnv: "DEEPSEEK_API_KEY", BaseURLEnv: "DEEPSEEK_BASE_URL"},
		{Name: "xai", Format: FormatOpenAI, BaseURL: "https://api.x.ai/v1", KeyEnv: "XAI_API_KEY", BaseURLEnv: "XAI_BASE_URL"},
		{Name: "openrouter", Format: FormatOpenAI, BaseURL: "https://openrouter.ai/api/v1", KeyEnv: "OPENROUTER_API_KEY", BaseURLEnv: "OPENROUTER_BASE_URL", Prefill: PrefillTrailing},
		{Name: "fireworks", Format: FormatOpenAI, BaseURL: "https://api.fireworks.ai/inference/v1", KeyEnv: "FIREWORKS_API_KEY", BaseURLEnv: "FIREWORKS_BASE_URL"},
		{Name: "ollama", Format: FormatOpenAI, BaseURL: "http://localhost:11434/v1", KeyEnv: "OLLAMA_API_KEY", BaseURLEnv: "OLLAMA_BASE_URL", KeyOptional: true},
		// Voyage AI serves embeddings only (POST /v1/embeddings, OpenAI's shape).
		{Name: "voyage", Format: FormatOpenAI, BaseURL: "https://api.voyageai.com/v1", KeyEnv: "VOYAGE_API_KEY", BaseURLEnv: "VOYAGE_BASE_URL",
			EmbeddingsOnly: true, EmbeddingDimensionsField: "output_dimension"},
	}
}

// New builds the adapter for a wire format.
func New(format Format, cfg Config) (Provider, error) {
	switch format {
	case FormatOpenAI, "":
		return NewOpenAI(cfg), nil
	case FormatAnthropic:
		return NewAnthropic(cfg), nil
	case FormatGemini:
		return NewGemini(cfg), nil
	}
	return nil, &ConfigError{Field: "format", Message: "must be openai, anthropic or gemini, got " + quote(string(format))}
}
