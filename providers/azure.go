package providers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
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
	// no other credential is set (see NewAzure for the order). It is used as given: a token
	// expires (after about an hour) and is not refreshed.
	ADToken string
	// ADTokenProvider returns a Microsoft Entra ID access token, sent as a Bearer: it is
	// called with the request's context before every request and must cache its tokens
	// itself (as azidentity's credentials do: wrap one's GetToken with scope
	// AzureTokenScope). Its error fails the call with KindAuth. It is the openai SDKs'
	// azure_ad_token_provider. With azidentity:
	//
	//	func(ctx context.Context) (string, error) {
	//		t, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{providers.AzureTokenScope}})
	//		return t.Token, err
	//	}
	ADTokenProvider func(ctx context.Context) (string, error)
	// TenantID and ClientID are an app registration's (service principal's) directory and
	// application ids, for the client credentials grant with ClientSecret or, without one,
	// a FederatedTokenFile: tokens are then fetched from Entra ID on first use (never at
	// construction), cached, and fetched again five minutes before they expire; a cached
	// token still valid is used when a fetch fails.
	TenantID, ClientID string
	// ClientSecret is the app registration's client secret.
	ClientSecret string
	// FederatedTokenFile is a file holding a federated token (a JWT: AKS workload
	// identity's projected service account token), sent as the client assertion; it is read
	// again at every fetch, as its issuer rotates it.
	FederatedTokenFile string
	// AuthorityHost is the Entra ID authority ("" for DefaultAzureAuthorityHost; sovereign
	// clouds have their own): tokens come from {AuthorityHost}/{TenantID}/oauth2/v2.0/token.
	AuthorityHost string

	// assertion, when set, is the client assertion of TenantID and ClientID read at each
	// fetch (LiteLLM's azure_ad_token "oidc/env/…"), in place of FederatedTokenFile.
	assertion func() (string, error)
	// credentialProblem says why the configured Entra ID credentials cannot be used: the
	// adapter is then not configured, saying it.
	credentialProblem string
	// now is the clock of cached tokens (time.Now when nil).
	now func() time.Time
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
// with the key in the api-key header, or a Microsoft Entra ID token as a Bearer: one
// fetched with client credentials (a secret or a federated token, refreshed before it
// expires), the caller's (AzureConfig.ADTokenProvider) or a fixed one (AzureConfig.ADToken). The Responses API is used, as on OpenAI's own API, only with the
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
	// tokens yields the Entra ID tokens when they are fetched, not fixed; nil otherwise.
	tokens *azureTokens
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
// resource's endpoint) is not configured: its calls fail as without a key. Of the
// credentials set, the first of these is used, in LiteLLM's order: APIKey (the api-key
// header); ADTokenProvider; TenantID and ClientID with ClientSecret; TenantID and ClientID
// with FederatedTokenFile; ADToken. Nothing is fetched here.
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
	problem := ""
	if c.APIKey == "" {
		problem = r.entraAuth(&c, cfg)
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
	if problem != "" {
		if o.ep.missing != "" {
			problem = o.ep.missing + " and " + problem
		}
		o.ep.missing = problem
	}
	return &Azure{o}
}

// entraAuth sets up the Entra ID credential of cfg that comes first (see NewAzure) when no
// key is set: c.APIKey holds a fixed token, r.tokens fetched ones (c.KeyOptional then
// says the adapter needs no key). It returns what is missing or wrong ("" when nothing,
// or when no Entra ID credential is set).
func (r *azureRoute) entraAuth(c *Config, cfg AzureConfig) string {
	tenant, client := strings.TrimSpace(cfg.TenantID), strings.TrimSpace(cfg.ClientID)
	secret := strings.TrimSpace(cfg.ClientSecret)
	assertion := cfg.assertion
	if assertion == nil && strings.TrimSpace(cfg.FederatedTokenFile) != "" {
		assertion = fileAssertion(strings.TrimSpace(cfg.FederatedTokenFile))
	}
	fetched := secret != "" || assertion != nil
	switch {
	case cfg.ADTokenProvider != nil:
		r.bearer, r.tokens, c.KeyOptional = true, &azureTokens{provider: cfg.ADTokenProvider}, true
		return ""
	case fetched && tenant != "" && client != "":
		if bad := checkAuthorityHost(orDefault(cfg.AuthorityHost, DefaultAzureAuthorityHost)); bad != "" {
			return "a valid AZURE_AUTHORITY_HOST (it " + bad + ")"
		}
		creds := &entraCredentials{tenant: tenant, clientID: client, endpoint: azureTokenEndpoint(cfg.AuthorityHost, tenant),
			scope: azureTokenScope(orDefault(cfg.AuthorityHost, DefaultAzureAuthorityHost))}
		if secret != "" {
			creds.secret = secret
		} else {
			creds.assertion = assertion
		}
		now := cfg.now
		if now == nil {
			now = time.Now
		}
		cache := &googleTokens{now: now, source: creds.source}
		if c.HTTPClient != nil {
			cache.transport = c.HTTPClient.Transport
		}
		r.bearer, r.tokens, c.KeyOptional = true, &azureTokens{creds: creds, cache: cache}, true
		return ""
	case cfg.ADToken != "":
		c.APIKey, r.bearer = cfg.ADToken, true
		return ""
	case cfg.credentialProblem != "":
		return "valid Microsoft Entra ID credentials (" + cfg.credentialProblem + ")"
	case fetched:
		var lack []string
		if tenant == "" {
			lack = append(lack, "AZURE_TENANT_ID")
		}
		if client == "" {
			lack = append(lack, "AZURE_CLIENT_ID")
		}
		return strings.Join(lack, " and ") + " (for the Microsoft Entra ID client credentials)"
	}
	return ""
}

// orDefault is v, or def when v is blank.
func orDefault(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return strings.TrimSpace(v)
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

// HasBaseModel reports whether this provider's configuration names the model deployment
// runs (AzureConfig.BaseModels: LiteLLM's model_info.base_model), rather than BaseModel
// taking the deployment's own name for it.
func (a *Azure) HasBaseModel(deployment string) bool { return a.azure.base[deployment] != "" }

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

// setAuth sets Azure's credential: the api-key header, or an Entra ID token as a Bearer
// (fetched with ctx when tokens are; a failure is the call's *Error).
func (r *azureRoute) setAuth(ctx context.Context, name, model string, h http.Header, credential string) error {
	if r.tokens != nil {
		tok, err := r.tokens.token(ctx, name, model)
		if err != nil {
			return err
		}
		h.Set("Authorization", "Bearer "+tok)
		return nil
	}
	if credential == "" {
		return nil
	}
	if r.bearer {
		h.Set("Authorization", "Bearer "+credential)
		return nil
	}
	h.Set("Api-Key", credential)
	return nil
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
// (AZURE_OPENAI_API_KEY, AZURE_OPENAI_ENDPOINT, OPENAI_API_VERSION); the Entra ID
// credentials of azidentity's environment (AZURE_TENANT_ID, AZURE_CLIENT_ID with
// AZURE_CLIENT_SECRET or AZURE_FEDERATED_TOKEN_FILE; AZURE_AUTHORITY_HOST); AZURE_AD_TOKEN,
// a fixed Entra ID token, or LiteLLM's "oidc/…" federated token for AZURE_TENANT_ID and
// AZURE_CLIENT_ID (see azureOIDC). NewAzure picks among them.
func azureEnv(getenv func(string) string) AzureConfig {
	first := func(names ...string) string { return firstEnv(getenv, names...) }
	cfg := AzureConfig{Config: Config{Name: "azure", KeyEnv: "AZURE_API_KEY (or AZURE_OPENAI_API_KEY, AZURE_AD_TOKEN, or AZURE_TENANT_ID and AZURE_CLIENT_ID with AZURE_CLIENT_SECRET or AZURE_FEDERATED_TOKEN_FILE)"}}
	cfg.APIKey = first("AZURE_API_KEY", "AZURE_OPENAI_API_KEY")
	cfg.BaseURL = first("AZURE_API_BASE", "AZURE_OPENAI_ENDPOINT")
	cfg.APIVersion = first("AZURE_API_VERSION", "OPENAI_API_VERSION")
	cfg.TenantID, cfg.ClientID = first("AZURE_TENANT_ID"), first("AZURE_CLIENT_ID")
	cfg.ClientSecret, cfg.FederatedTokenFile = first("AZURE_CLIENT_SECRET"), first("AZURE_FEDERATED_TOKEN_FILE")
	cfg.AuthorityHost = first("AZURE_AUTHORITY_HOST")
	if tok := first("AZURE_AD_TOKEN"); strings.HasPrefix(tok, "oidc/") {
		cfg.assertion, cfg.credentialProblem = azureOIDC(tok, getenv)
	} else {
		cfg.ADToken = tok
	}
	return cfg
}

// azureOIDC is the client assertion of LiteLLM's azure_ad_token "oidc/{provider}/{arg}"
// forms that read a federated token here: "oidc/azure/…" (AZURE_FEDERATED_TOKEN_FILE, as
// AKS workload identity sets it), "oidc/file/{path}", "oidc/env_path/{variable naming a
// file}" (files read at each fetch) and "oidc/env/{variable}". Another form is a
// problem, said without quoting the value past its provider.
func azureOIDC(tok string, getenv func(string) string) (func() (string, error), string) {
	kind, arg, _ := strings.Cut(strings.TrimPrefix(tok, "oidc/"), "/")
	switch kind {
	case "azure":
		if f := strings.TrimSpace(getenv("AZURE_FEDERATED_TOKEN_FILE")); f != "" {
			return fileAssertion(f), ""
		}
		return nil, "AZURE_AD_TOKEN oidc/azure/ needs AZURE_FEDERATED_TOKEN_FILE"
	case "file":
		if arg != "" {
			return fileAssertion("/" + strings.TrimPrefix(arg, "/")), ""
		}
	case "env_path":
		if f := strings.TrimSpace(getenv(arg)); f != "" {
			return fileAssertion(f), ""
		}
		return nil, "AZURE_AD_TOKEN oidc/env_path/ names a variable that is unset"
	case "env":
		if a := strings.TrimSpace(getenv(arg)); a != "" {
			return func() (string, error) { return a, nil }, ""
		}
		return nil, "AZURE_AD_TOKEN oidc/env/ names a variable that is unset"
	}
	return nil, "AZURE_AD_TOKEN oidc/" + kind + "/ is not a federated token this gateway reads (oidc/azure/, oidc/file/, oidc/env/ or oidc/env_path/)"
}
