package providers

import "strings"

// Format names a wire format.
type Format string

// The supported wire formats.
const (
	FormatOpenAI    Format = "openai"
	FormatAnthropic Format = "anthropic"
	FormatGemini    Format = "gemini"
	// FormatAzure is Azure OpenAI: the OpenAI format at Azure's URLs (see Azure).
	FormatAzure Format = "azure"
	// FormatVertex is Gemini on Vertex AI: the Gemini format at Vertex's URLs, with OAuth
	// (see Vertex).
	FormatVertex Format = "vertex_ai"
	// FormatBedrock (Amazon Bedrock's Converse API) is declared in bedrock.go.
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
	// AltKeyEnvs are variables the key is read from when KeyEnv is unset (Cohere's SDKs
	// read CO_API_KEY).
	AltKeyEnvs []string
	// Rerank, RerankPath and RerankOnly: the provider's rerank API, see Config.
	Rerank     RerankAPI
	RerankPath string
	RerankOnly bool
	// Env lists the other environment variables the provider is configured from (Azure
	// OpenAI's and Vertex AI's), as `serve -h` describes them.
	Env []EnvVar
}

// EnvVar is an environment variable a preset reads, and what it sets.
type EnvVar struct {
	Name, Meaning string
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
		// Amazon Bedrock's Converse API: a Bedrock API key (bearer), else SigV4 with the AWS
		// credentials (static keys, else the SDK's default chain where the environment shows
		// it: see awsDefaultChain); the endpoint is the region's unless AWS_ENDPOINT_URL_BEDROCK_RUNTIME
		// names another.
		{Name: "bedrock", Format: FormatBedrock, KeyEnv: "AWS_BEARER_TOKEN_BEDROCK", BaseURLEnv: "AWS_ENDPOINT_URL_BEDROCK_RUNTIME", Env: []EnvVar{
			{EnvAWSAccessKeyID, "bedrock SigV4 access key (without a Bedrock API key)"},
			{EnvAWSSecretAccessKey, "bedrock SigV4 secret key"},
			{EnvAWSSessionToken, "bedrock SigV4 session token (temporary credentials)"},
			{EnvAWSRegion, "bedrock region (else " + EnvAWSDefaultRegion + ", else the AWS profile's)"},
			{EnvAWSProfile, "bedrock: a profile of the shared AWS config files (keys, SSO, assumed role), without static keys"},
			{EnvAWSConfigFile + ", " + EnvAWSSharedCredentialsFile, "bedrock: the shared AWS files (default ~/.aws/config, ~/.aws/credentials)"},
			{EnvAWSWebIdentityTokenFile + ", " + EnvAWSRoleARN, "bedrock: web identity credentials (EKS IRSA)"},
			{EnvAWSContainerCredentialsFullURI + " (or _RELATIVE_URI)", "bedrock: ECS/EKS container credentials"},
		}},
		// Voyage AI serves embeddings (POST /v1/embeddings, OpenAI's shape) and rerank (POST
		// /v1/rerank, its own shape), no chat.
		{Name: "voyage", Format: FormatOpenAI, BaseURL: "https://api.voyageai.com/v1", KeyEnv: "VOYAGE_API_KEY", BaseURLEnv: "VOYAGE_BASE_URL",
			EmbeddingsOnly: true, EmbeddingDimensionsField: "output_dimension", Rerank: RerankVoyage},
		// Cohere serves rerank only here (POST /v2/rerank): its chat and embeddings APIs are
		// not OpenAI's.
		{Name: "cohere", Format: FormatOpenAI, BaseURL: "https://api.cohere.com", KeyEnv: "COHERE_API_KEY", AltKeyEnvs: []string{"CO_API_KEY"},
			BaseURLEnv: "COHERE_BASE_URL", Rerank: RerankCohere, RerankPath: "/v2/rerank", RerankOnly: true},
		// Jina AI serves embeddings (POST /v1/embeddings, OpenAI's shape) and rerank (POST
		// /v1/rerank, Cohere's shape), no chat.
		{Name: "jina", Format: FormatOpenAI, BaseURL: "https://api.jina.ai/v1", KeyEnv: "JINA_API_KEY", BaseURLEnv: "JINA_BASE_URL",
			EmbeddingsOnly: true, Rerank: RerankJina},
		// Azure OpenAI: LiteLLM's variables win over the official SDK's (see azureEnv).
		{Name: "azure", Format: FormatAzure, KeyEnv: "AZURE_API_KEY", BaseURLEnv: "AZURE_API_BASE", MaxTokensField: "max_completion_tokens",
			Env: []EnvVar{
				{"AZURE_OPENAI_API_KEY", "azure API key when AZURE_API_KEY is unset"},
				{"AZURE_OPENAI_ENDPOINT", "azure resource endpoint when AZURE_API_BASE is unset"},
				{"AZURE_API_VERSION", "azure api-version (default " + DefaultAzureAPIVersion + "; v1 for Azure's v1 API); OPENAI_API_VERSION when unset"},
				{"AZURE_TENANT_ID", "azure Microsoft Entra ID tenant of the client credentials below (with AZURE_CLIENT_ID)"},
				{"AZURE_CLIENT_ID", "azure app registration (client) id of the client credentials"},
				{"AZURE_CLIENT_SECRET", "azure client secret: Entra ID tokens are fetched and refreshed when no key is set"},
				{"AZURE_FEDERATED_TOKEN_FILE", "azure federated token file (AKS workload identity) used as the client assertion when no secret is set; read at each fetch"},
				{"AZURE_AUTHORITY_HOST", "azure Entra ID authority (default " + DefaultAzureAuthorityHost + ")"},
				{"AZURE_AD_TOKEN", "azure fixed Microsoft Entra ID token (sent as a Bearer when no key or client credentials are set) or LiteLLM's oidc/file/… oidc/env/… oidc/azure/ federated token"},
			}},
		// Gemini on Vertex AI: LiteLLM's variables win over the google-genai SDK's (see vertexEnv).
		{Name: "vertex_ai", Format: FormatVertex,
			Env: []EnvVar{
				{"VERTEXAI_PROJECT", "vertex_ai Google Cloud project (or GOOGLE_CLOUD_PROJECT)"},
				{"VERTEXAI_LOCATION", "vertex_ai region (or GOOGLE_CLOUD_LOCATION; default " + DefaultVertexLocation + ", global allowed)"},
				{"GOOGLE_APPLICATION_CREDENTIALS", "vertex_ai credentials file (service account key; VERTEXAI_CREDENTIALS, a path or the JSON, wins)"},
				{"VERTEXAI_ACCESS_TOKEN", "vertex_ai fixed access token (gcloud auth print-access-token), instead of credentials"},
			}},
	}
}

// New builds the adapter for a wire format (Azure with its default api-version; Vertex AI
// needs NewVertex).
func New(format Format, cfg Config) (Provider, error) {
	switch format {
	case FormatOpenAI, "":
		return NewOpenAI(cfg), nil
	case FormatAnthropic:
		return NewAnthropic(cfg), nil
	case FormatGemini:
		return NewGemini(cfg), nil
	case FormatAzure:
		return NewAzure(AzureConfig{Config: cfg}), nil
	case FormatVertex:
		return nil, &ConfigError{Field: "format", Message: "vertex_ai needs a project and credentials: use NewVertex"}
	case FormatBedrock:
		return NewBedrock(cfg), nil
	}
	return nil, &ConfigError{Field: "format", Message: "must be openai, anthropic, gemini, azure, vertex_ai or bedrock, got " + quote(string(format))}
}

// key reads p's API key through getenv: KeyEnv, else the first of AltKeyEnvs that is set.
func (p Preset) key(getenv func(string) string) string {
	if p.KeyEnv == "" {
		return ""
	}
	k := strings.TrimSpace(getenv(p.KeyEnv))
	for _, alt := range p.AltKeyEnvs {
		if k != "" {
			break
		}
		k = strings.TrimSpace(getenv(alt))
	}
	return k
}
