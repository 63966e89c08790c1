package providers

import (
	"net/http"
	"net/url"
	"strings"
)

// DefaultAzureAPIVersion is the api-version of Azure OpenAI's deployment URLs when none is
// configured: the newest dated version of its inference API that Azure documents. The
// latest GA one (2024-10-21) refuses the o-series reasoning models ("enabled only for api
// versions 2024-12-01-preview and later"; o3-pro needs 2025-03-01-preview), so a preview
// is the default, as LiteLLM's is (2025-02-01-preview, older than o3-pro).
const DefaultAzureAPIVersion = "2025-04-01-preview"

// AzureV1 is the API version that selects Azure's v1 API (GA since August 2025):
// {base}/openai/v1/chat/completions with the deployment as the body's model and no
// api-version.
const AzureV1 = "v1"

// AzureConfig configures an Azure OpenAI adapter (NewAzure).
type AzureConfig struct {
	// Config is the OpenAI adapter's: Name ("azure" when empty), BaseURL (the resource's
	// endpoint, "https://{resource}.openai.azure.com"; a trailing "/openai" or "/openai/v1"
	// is dropped), APIKey (sent as the api-key header), MaxTokensField
	// ("max_completion_tokens" when empty, which Azure's reasoning models require), …
	Config
	// APIVersion is the api-version of deployment URLs ("" for DefaultAzureAPIVersion), or
	// AzureV1 for Azure's v1 API.
	APIVersion string
	// ADToken is a Microsoft Entra ID access token, sent as "Authorization: Bearer" when
	// APIKey is empty. It is used as given: a token expires (after about an hour) and is not
	// refreshed.
	ADToken string
	// BaseModels maps a deployment's name to the model it runs, as the price catalogue
	// names it ("gpt-4o-2024-08-06", priced as "azure/gpt-4o-2024-08-06", or a
	// "provider/model" string): its calls are priced as that model (LiteLLM's
	// model_info.base_model), and the model's family decides what OpenAI's reasoning models
	// need (see OpenAI). A deployment not listed is priced by its own name, which the
	// catalogue knows when it is named after its model ("azure/gpt-4o"); otherwise its price
	// is unknown.
	BaseModels map[string]string
}

// Azure speaks Azure OpenAI: the OpenAI chat-completions wire format, with everything the
// OpenAI adapter does (tools, structured output, reasoning models, embeddings, audio), at
// Azure's URLs with Azure's auth. The model is the deployment's name:
//
//	POST {base}/openai/deployments/{deployment}/chat/completions?api-version={version}
//	     (and /embeddings, /audio/transcriptions, /audio/translations, /audio/speech)
//	POST {base}/openai/v1/chat/completions           (APIVersion "v1": the model in the body)
//
// with the key in the api-key header, or a Microsoft Entra ID token as a Bearer
// (AzureConfig.ADToken). The Responses API is used, as on OpenAI's own API, only with the
// v1 API ({base}/openai/v1/responses), and never for web search, which Azure's has not.
// Azure's content filter answers (finish_reason "content_filter", or a 400 whose code is
// content_filter) fail with KindContentFilter, billed with the usage reported; a 429's
// Retry-After (or retry-after-ms) is honoured as for OpenAI.
type Azure struct{ *OpenAI }

// azureRoute is what the OpenAI adapter does differently for Azure.
type azureRoute struct {
	v1     bool   // Azure's v1 API
	query  string // "?api-version=…" of deployment URLs; "" with v1
	bearer bool   // the credential is an Entra ID token
	// base is AzureConfig.BaseModels; nil when empty.
	base map[string]string
	// note says how the configured endpoint was cut back to the resource's ("" when it
	// was not).
	note string
}

// azureResourceEndpoint is the resource's endpoint in a configured base URL: without a
// trailing "/openai" or "/openai/v1", and without the rest of a deployment's "Target URI"
// as Azure's portal shows it ({endpoint}/openai/deployments/{name}/chat/completions?api-version=…),
// which is what people paste; note says what was cut ("" when nothing but the suffix).
func azureResourceEndpoint(base string) (endpoint, note string) {
	base = strings.TrimSpace(base)
	if u, err := url.Parse(base); err == nil && u.Host != "" && (u.RawQuery != "" || u.Fragment != "" || strings.Contains(u.Path, "/openai/")) {
		path := u.Path
		if i := strings.Index(path, "/openai/"); i >= 0 && !strings.HasSuffix(strings.TrimRight(path, "/"), "/openai/v1") {
			path = path[:i]
		}
		u.Path, u.RawPath, u.RawQuery, u.Fragment = path, "", "", ""
		cut := strings.TrimSuffix(strings.TrimSuffix(strings.TrimRight(u.String(), "/"), "/openai/v1"), "/openai")
		if cut != strings.TrimSuffix(strings.TrimSuffix(strings.TrimRight(base, "/"), "/openai/v1"), "/openai") {
			return cut, "the base URL is a deployment's Target URI (…/openai/deployments/{name}/…?api-version=…), not the resource's endpoint: using " +
				cut + "; set it to that endpoint (https://{resource}.openai.azure.com), and the deployment is the model's name (azure/{deployment})"
		}
	}
	base = strings.TrimRight(base, "/")
	return strings.TrimSuffix(strings.TrimSuffix(base, "/openai/v1"), "/openai"), ""
}

// Note returns what was wrong with the configured endpoint and how it was taken ("" when
// nothing was): the server says it at start.
func (a *Azure) Note() string { return a.azure.note }

// NewAzure returns an Azure OpenAI adapter. A configuration without a base URL (the
// resource's endpoint) is not configured: its calls fail as without a key.
func NewAzure(cfg AzureConfig) *Azure {
	c := cfg.Config
	if c.Name == "" {
		c.Name = "azure"
	}
	if c.KeyEnv == "" {
		c.KeyEnv = "AZURE_API_KEY"
	}
	if c.MaxTokensField == "" {
		c.MaxTokensField = "max_completion_tokens"
	}
	r := &azureRoute{}
	if c.APIKey == "" && cfg.ADToken != "" {
		c.APIKey, r.bearer = cfg.ADToken, true
	}
	version := strings.TrimSpace(cfg.APIVersion)
	switch version {
	case AzureV1:
		r.v1 = true
	case "":
		version = DefaultAzureAPIVersion
		fallthrough
	default:
		r.query = "?api-version=" + url.QueryEscape(version)
	}
	base, note := azureResourceEndpoint(c.BaseURL)
	r.note = note
	c.BaseURL = base
	if len(cfg.BaseModels) > 0 {
		r.base = cfg.BaseModels
	}
	o := NewOpenAI(c)
	o.baseURL = base // NewOpenAI puts OpenAI's own API in place of an empty one
	o.ownAPI, o.openRouter, o.searchModels, o.azure = true, false, nil, r
	if base == "" {
		o.ep.missing = "AZURE_API_BASE (the resource's endpoint, https://{resource}.openai.azure.com)"
	}
	return &Azure{o}
}

// APIVersion returns the api-version of the adapter's deployment URLs, or "v1" for Azure's
// v1 API.
func (a *Azure) APIVersion() string {
	if a.azure.v1 {
		return AzureV1
	}
	v, _ := url.QueryUnescape(strings.TrimPrefix(a.azure.query, "?api-version="))
	return v
}

// BaseModel implements BaseModeler: the catalogue model ("provider/model") deployment
// runs, as AzureConfig.BaseModels says ("azure/" put before a name without a provider),
// else "azure/{deployment}" (Azure's prices, whatever this resource is called).
func (a *Azure) BaseModel(deployment string) (string, bool) {
	m := a.azure.base[deployment]
	if m == "" {
		m = deployment
	}
	if !strings.Contains(m, "/") {
		m = "azure/" + m
	}
	return m, true
}

// url is the address of an OpenAI operation path for a deployment.
func (r *azureRoute) url(base, path, deployment string) string {
	switch {
	case r.v1:
		return base + "/openai/v1" + path
	case path == "/responses": // not under the deployment: its name is the body's model
		return base + "/openai/responses" + r.query
	}
	return base + "/openai/deployments/" + url.PathEscape(deployment) + path + r.query
}

// setAuth sets Azure's credential: the api-key header, or an Entra ID token as a Bearer.
func (r *azureRoute) setAuth(h http.Header, credential string) {
	if credential == "" {
		return
	}
	if r.bearer {
		h.Set("Authorization", "Bearer "+credential)
		return
	}
	h.Set("Api-Key", credential)
}

// family is the OpenAI model a deployment runs: its base model's name (without a
// provider or region prefix), else the deployment's own name.
func (r *azureRoute) family(deployment string) string {
	if m, ok := r.base[deployment]; ok && m != "" {
		return m[strings.LastIndexByte(m, '/')+1:]
	}
	return deployment
}

// BaseModeler is implemented by providers whose model names are the user's own (Azure
// OpenAI's deployments): BaseModel returns the catalogue model ("provider/model") a model
// runs, to price it by, and false when it cannot tell.
type BaseModeler interface {
	BaseModel(model string) (string, bool)
}

// PriceModel is the "provider/model" name the price catalogue knows the call of model
// (the part after "provider/") on p by: the base model p says it runs (BaseModeler), else
// p's name and model.
func PriceModel(p Provider, model string) string {
	if b, ok := p.(BaseModeler); ok {
		if m, ok := b.BaseModel(model); ok {
			return m
		}
	}
	return p.Name() + "/" + model
}

// azureEnv is the Azure OpenAI configuration of the environment: LiteLLM's variables
// (AZURE_API_KEY, AZURE_API_BASE, AZURE_API_VERSION), else the official SDK's
// (AZURE_OPENAI_API_KEY, AZURE_OPENAI_ENDPOINT, OPENAI_API_VERSION); AZURE_AD_TOKEN is an
// Entra ID token used when no key is set.
func azureEnv(getenv func(string) string) AzureConfig {
	first := func(names ...string) string { return firstEnv(getenv, names...) }
	cfg := AzureConfig{Config: Config{Name: "azure", KeyEnv: "AZURE_API_KEY (or AZURE_OPENAI_API_KEY, or AZURE_AD_TOKEN)"}}
	cfg.APIKey = first("AZURE_API_KEY", "AZURE_OPENAI_API_KEY")
	cfg.BaseURL = first("AZURE_API_BASE", "AZURE_OPENAI_ENDPOINT")
	cfg.APIVersion = first("AZURE_API_VERSION", "OPENAI_API_VERSION")
	cfg.ADToken = first("AZURE_AD_TOKEN")
	return cfg
}
