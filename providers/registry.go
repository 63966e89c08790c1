package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2/google"

	"github.com/switchyard-ai/switchyard/validation"
)

// ErrInvalidConfig is matched (errors.Is) by every *ConfigError.
var ErrInvalidConfig = errors.New("providers: invalid provider configuration")

// ConfigError is a bad provider configuration; Field names the offending entry.
type ConfigError struct {
	Field   string
	Message string
}

// Error names the field and the rule it breaks.
func (e *ConfigError) Error() string { return "providers: config " + e.Field + ": " + e.Message }

// Is reports whether target is ErrInvalidConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

func quote(s string) string { return strconv.Quote(s) }

// Options are the settings shared by every adapter a Registry builds.
type Options struct {
	// HTTPClient is used for all upstream calls; nil means http.DefaultClient.
	HTTPClient *http.Client
	// IdleTimeout and ResponseTimeout are copied into each adapter's Config.
	IdleTimeout     time.Duration
	ResponseTimeout time.Duration
	// Logger receives adapters' debug logs; nil discards them.
	Logger *slog.Logger
}

func (o Options) apply(c Config) Config {
	c.HTTPClient = o.HTTPClient
	c.IdleTimeout = o.IdleTimeout
	c.ResponseTimeout = o.ResponseTimeout
	c.Logger = o.Logger
	return c
}

// Configurable is implemented by adapters that can tell whether they have what they need
// to call upstream (a key, unless the provider needs none).
type Configurable interface {
	Configured() bool
}

// ServesChat reports whether p answers chat requests (false for a provider that serves
// embeddings or rerank only, such as Voyage AI, Jina AI and Cohere's preset).
func ServesChat(p Provider) bool {
	if e, ok := p.(interface{ EmbeddingsOnly() bool }); ok && e.EmbeddingsOnly() {
		return false
	}
	r, ok := p.(interface{ RerankOnly() bool })
	return !ok || !r.RerankOnly()
}

// IsConfigured reports whether p can call upstream: what a Configurable says; any other
// provider is taken as configured.
func IsConfigured(p Provider) bool {
	c, ok := p.(Configurable)
	return !ok || c.Configured()
}

// IsNamed reports whether p's configuration names it: false only for a keyless preset
// the environment says nothing of (Config.Unnamed: ollama without OLLAMA_BASE_URL or
// OLLAMA_API_KEY), whose catalogued models a listing should not offer, as nobody may run
// it; it is still served.
func IsNamed(p Provider) bool {
	u, ok := p.(interface{ unnamed() bool })
	return !ok || !u.unnamed()
}

// RoutableAs says how a model string of p (without its provider prefix) is matched against
// the catalogue's list of p's models: listed is the name to look for there (model itself
// for most providers; for Bedrock the model id without LiteLLM's converse/ prefix or a
// leading region), and any is true when the string is routable whatever the catalogue
// lists (a Bedrock ARN: an account's own inference profile or model, which no catalogue
// can list).
func RoutableAs(p Provider, model string) (listed string, any bool) {
	if r, ok := p.(interface{ routableAs(string) (string, bool) }); ok {
		return r.routableAs(model)
	}
	return model, false
}

// Needs is what p's configuration lacks for it to call upstream, as its calls' errors say
// it ("OPENAI_API_KEY", "valid credentials (GOOGLE_APPLICATION_CREDENTIALS: …)"); "" when
// it lacks nothing or cannot tell.
func Needs(p Provider) string {
	if n, ok := p.(interface{ needs() string }); ok {
		return n.needs()
	}
	return ""
}

// Registry maps provider names to providers. The zero value is an empty registry ready to
// use; it is safe for concurrent use.
type Registry struct {
	mu        sync.RWMutex
	providers map[string]Provider
}

// NewRegistry returns a registry holding ps.
func NewRegistry(ps ...Provider) *Registry {
	r := &Registry{}
	for _, p := range ps {
		r.Register(p)
	}
	return r
}

// Register adds p, replacing any provider with the same name.
func (r *Registry) Register(p Provider) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.providers == nil {
		r.providers = map[string]Provider{}
	}
	r.providers[p.Name()] = p
}

// Remove takes the provider called name out of the registry (nothing when there is none):
// its calls then fail with ErrUnknownProvider.
func (r *Registry) Remove(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.providers, name)
}

// Lookup returns the provider called name, or an error matching ErrUnknownProvider.
func (r *Registry) Lookup(name string) (Provider, error) {
	r.mu.RLock()
	p, ok := r.providers[name]
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownProvider, name)
	}
	return p, nil
}

// Names returns the registered provider names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.providers))
	for n := range r.providers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Resolve splits a "provider/model" string and looks the provider up.
func (r *Registry) Resolve(providerModel string) (Provider, string, error) {
	pn, model, err := ParseModel(providerModel)
	if err != nil {
		return nil, "", err
	}
	p, err := r.Lookup(pn)
	if err != nil {
		return nil, "", err
	}
	return p, model, nil
}

// envBaseURLFragment is ConfigError's message for a base URL with a fragment. Not echoed:
// what follows '#' may be a credential put in the wrong place. The URL joins keep a
// fragment at the end of the request URL, which no client sends, so it would be dropped
// silently.
const envBaseURLFragment = "has a fragment (#...), which an HTTP client never sends to the upstream, so what it holds would be silently dropped: remove it (a credential goes in the key's variable, or the query)"

// CheckEnv refuses, as --providers-config and deployments do, a preset's base URL variable
// read through getenv (OPENAI_BASE_URL, GROQ_BASE_URL, …) that has a fragment (#...): a
// ConfigError naming the variable. Call it before FromEnv at start.
func CheckEnv(getenv func(string) string) error {
	if getenv == nil {
		return nil
	}
	for _, p := range Presets() {
		if err := checkEnvBaseURL(getenv, p.BaseURLEnv); err != nil {
			return err
		}
	}
	return nil
}

// checkEnvBaseURL is CheckEnv's check of the variable name ("" for none).
func checkEnvBaseURL(getenv func(string) string, name string) error {
	if name != "" && strings.Contains(getenv(name), "#") {
		return &ConfigError{Field: "environment variable " + name, Message: envBaseURLFragment}
	}
	return nil
}

// FromEnv returns a registry with every preset, keys and base URLs read through getenv
// (pass os.Getenv in production; CheckEnv first refuses base URLs it cannot use). Presets without a key are still registered; their calls
// fail with KindAuth, so callers can tell "not configured" from "unknown provider".
func FromEnv(getenv func(string) string, opts Options) *Registry {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	r := &Registry{}
	for _, p := range Presets() {
		switch p.Format {
		case FormatAzure:
			ac := azureEnv(getenv)
			ac.Config = opts.apply(ac.Config)
			r.Register(NewAzure(ac))
			continue
		case FormatVertex:
			r.Register(vertexFromEnv(getenv, opts))
			continue
		}
		cfg := opts.apply(Config{
			Name: p.Name, BaseURL: p.BaseURL, KeyEnv: p.KeyEnv, KeyOptional: p.KeyOptional,
			MaxTokensField: p.MaxTokensField, OmitStreamOptions: p.OmitStreamOptions, Prefill: p.Prefill,
			ShortToolCallIDs: p.ShortToolCallIDs, EmbeddingsOnly: p.EmbeddingsOnly, EmbeddingDimensionsField: p.EmbeddingDimensionsField,
			Rerank: p.Rerank, RerankPath: p.RerankPath, RerankOnly: p.RerankOnly,
		})
		cfg.APIKey = p.key(getenv)
		cfg.Unnamed = p.KeyOptional && cfg.APIKey == "" && strings.TrimSpace(getenv(p.BaseURLEnv)) == ""
		if p.Format == FormatBedrock {
			cfg.AWS = awsFromEnv(getenv, "", "", "", "", "", false)
		}
		if v := strings.TrimSpace(getenv(p.BaseURLEnv)); v != "" {
			cfg.BaseURL = v
			if p.Name == "ollama" && !strings.HasSuffix(strings.TrimRight(v, "/"), "/v1") {
				cfg.BaseURL = strings.TrimRight(v, "/") + "/v1"
			}
		}
		prov, _ := New(p.Format, cfg)
		r.Register(prov)
	}
	return r
}

// vertexFromEnv is the vertex_ai preset as the environment configures it (vertexEnv); a
// credentials file that cannot be read or parsed leaves it unconfigured, saying why.
func vertexFromEnv(getenv func(string) string, opts Options) *Vertex {
	vc, problem := vertexEnv(getenv)
	vc.Config = opts.apply(vc.Config)
	v, err := NewVertex(vc)
	if err != nil {
		problem = err.Error()
		var ce *ConfigError
		if errors.As(err, &ce) {
			problem = ce.Message
		}
		vc.CredentialsJSON = nil
		v, _ = NewVertex(vc)
	}
	if problem != "" {
		v.ep.missing = "valid credentials (" + problem + ")"
		v.broken = problem
	}
	return v
}

// FileConfig is the JSON provider configuration file:
//
//	{"providers": [{"name": "my-vllm", "format": "openai", "base_url": "http://gpu:8000/v1",
//	  "api_key_env": "VLLM_KEY"},
//	 {"name": "azure", "base_models": {"prod-4o": "gpt-4o-2024-08-06"}},
//	 {"name": "azure-eu", "format": "azure", "base_url": "https://eu.openai.azure.com",
//	  "api_key_env": "AZURE_EU_KEY", "api_version": "v1"},
//	 {"name": "vertex-eu", "format": "vertex_ai", "project": "my-project",
//	  "location": "europe-west4", "credentials_file": "/etc/sa.json"}]}
//
// An entry named like a preset overrides that preset's base URL and key (and, for azure and
// vertex_ai, what it sets of the preset's other settings).
type FileConfig struct {
	Providers []ProviderConfig `json:"providers"`
}

// ProviderConfig is one provider in a FileConfig.
type ProviderConfig struct {
	Name           string `json:"name"`
	Format         Format `json:"format,omitempty"`
	BaseURL        string `json:"base_url,omitempty"`
	APIKey         string `json:"api_key,omitempty"`
	APIKeyEnv      string `json:"api_key_env,omitempty"`
	KeyOptional    bool   `json:"key_optional,omitempty"`
	MaxTokensField string `json:"max_tokens_field,omitempty"`
	// OmitStreamOptions leaves stream_options out of streamed OpenAI-format requests.
	OmitStreamOptions bool `json:"omit_stream_options,omitempty"`
	// ShortToolCallIDs sends tool-call ids as 9 letters and digits (Mistral's rule).
	ShortToolCallIDs bool `json:"short_tool_call_ids,omitempty"`
	// Prefill is how an OpenAI-format server continues a partial answer ("trailing",
	// "prefix" or "continue_final_message"; see PrefillMode); empty when it cannot. The
	// gateway continues a broken stream only on models whose provider can.
	Prefill PrefillMode `json:"prefill,omitempty"`
	// Headers are extra headers sent with every request to the provider (LiteLLM's
	// deployment extra_headers: OpenRouter's HTTP-Referer, a proxy's own key, a beta flag);
	// the headers a call sets itself (its credentials, content type) win over them. Their
	// values are redacted from error messages like keys. Not for vertex_ai entries.
	Headers map[string]string `json:"headers,omitempty"`
	// ResponsesAPI says when an OpenAI-format provider is called through OpenAI's Responses
	// API: "auto" (the default: OpenAI's own API, for the models only it serves and for
	// reasoning asked of reasoning models), "always" or "never" (see ResponsesMode).
	ResponsesAPI ResponsesMode `json:"responses_api,omitempty"`

	// Azure OpenAI (format azure; see AzureConfig).

	// APIVersion is the api-version of deployment URLs ("2024-10-21", "2025-04-01-preview"),
	// or "v1" for Azure's v1 API.
	APIVersion string `json:"api_version,omitempty"`
	// ADTokenEnv names the variable holding a Microsoft Entra ID token, sent as a Bearer
	// when no key is set.
	ADTokenEnv string `json:"ad_token_env,omitempty"`
	// BaseModels maps deployments to the models they run, for pricing (LiteLLM's
	// model_info.base_model): {"prod-4o": "gpt-4o-2024-08-06"}.
	BaseModels map[string]string `json:"base_models,omitempty"`
	// TenantID and ClientID are the Entra ID directory and app registration whose client
	// credentials fetch tokens: ClientSecretEnv names the variable holding its secret,
	// FederatedTokenFile a federated token (AKS workload identity's), read at each fetch.
	// AuthorityHost is the Entra ID authority (https://login.microsoftonline.com/ when
	// empty). The azure entry takes what it does not set from AZURE_TENANT_ID,
	// AZURE_CLIENT_ID and AZURE_AUTHORITY_HOST. See AzureConfig and NewAzure for the order
	// credentials are used in.
	TenantID           string `json:"tenant_id,omitempty"`
	ClientID           string `json:"client_id,omitempty"`
	ClientSecretEnv    string `json:"client_secret_env,omitempty"`
	FederatedTokenFile string `json:"federated_token_file,omitempty"`
	AuthorityHost      string `json:"authority_host,omitempty"`

	// Vertex AI (format vertex_ai; see VertexConfig).

	// Project is the Google Cloud project, Location the region ("global" allowed).
	Project  string `json:"project,omitempty"`
	Location string `json:"location,omitempty"`
	// CredentialsFile is a credentials JSON file (a service account's key, or any
	// Application Default Credentials file).
	CredentialsFile string `json:"credentials_file,omitempty"`
	// AccessTokenEnv names the variable holding a fixed access token.
	AccessTokenEnv string `json:"access_token_env,omitempty"`
	// MetadataServer takes tokens from the metadata server of Compute Engine, GKE or Cloud
	// Run.
	MetadataServer bool `json:"metadata_server,omitempty"`

	// Amazon Bedrock (format bedrock).

	// Region is a bedrock provider's AWS region; empty reads AWS_REGION, then
	// AWS_DEFAULT_REGION. Its base_url defaults to the region's endpoint.
	Region string `json:"region,omitempty"`
	// AWSAccessKeyIDEnv, AWSSecretAccessKeyEnv and AWSSessionTokenEnv name the variables a
	// bedrock provider reads its SigV4 credentials from (AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN when empty); the first two go together.
	// Its api_key_env names a Bedrock API key, which wins over them when set; without it the
	// preset entry (bedrock) reads AWS_BEARER_TOKEN_BEDROCK unless it names its own SigV4
	// credentials, and another bedrock entry uses no Bedrock API key.
	AWSAccessKeyIDEnv     string `json:"aws_access_key_id_env,omitempty"`
	AWSSecretAccessKeyEnv string `json:"aws_secret_access_key_env,omitempty"`
	AWSSessionTokenEnv    string `json:"aws_session_token_env,omitempty"`
	// AWSProfileName is the profile of the shared AWS config and credentials files a
	// bedrock provider signs with (LiteLLM's aws_profile_name), through the AWS SDK's
	// default chain: static keys, SSO, an assumed role, credential_process. It wins over
	// AWS_PROFILE and the static credential variables; not with aws_*_env.
	AWSProfileName string `json:"aws_profile_name,omitempty"`
	// AWSInstanceRole lets a bedrock provider without other credentials use the AWS SDK's
	// default chain down to the EC2 instance role (instance metadata), which nothing in
	// the environment shows; not with aws_*_env.
	AWSInstanceRole bool `json:"aws_instance_role,omitempty"`

	// Rerank says an OpenAI-format provider serves rerank at {base_url}/rerank, in the shape
	// of "cohere" (Cohere's v2, which vLLM, Infinity and other self-hosted servers speak),
	// "jina" or "voyage" (see RerankAPI); empty for none, or the preset's.
	Rerank RerankAPI `json:"rerank,omitempty"`
}

var (
	azureVersionRE   = regexp.MustCompile(`^(v1|\d{4}-\d{2}-\d{2}(-preview)?)$`)
	vertexLocationRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)
	vertexProjectRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9.:-]{0,99}$`)
)

// checkCloudFields validates the fields of one format only (Azure's, Vertex AI's) of the
// entry pc of format f at field.
func checkCloudFields(field string, f Format, pc ProviderConfig) error {
	only := func(name string, set bool, want Format) error {
		if set && f != want {
			return &ConfigError{Field: field + "." + name, Message: "is only for format " + string(want) + " providers"}
		}
		return nil
	}
	for _, c := range []struct {
		name string
		set  bool
		want Format
	}{
		{"api_version", pc.APIVersion != "", FormatAzure}, {"ad_token_env", pc.ADTokenEnv != "", FormatAzure},
		{"base_models", pc.BaseModels != nil, FormatAzure},
		{"tenant_id", pc.TenantID != "", FormatAzure}, {"client_id", pc.ClientID != "", FormatAzure},
		{"client_secret_env", pc.ClientSecretEnv != "", FormatAzure}, {"federated_token_file", pc.FederatedTokenFile != "", FormatAzure},
		{"authority_host", pc.AuthorityHost != "", FormatAzure},
		{"project", pc.Project != "", FormatVertex}, {"location", pc.Location != "", FormatVertex},
		{"credentials_file", pc.CredentialsFile != "", FormatVertex}, {"access_token_env", pc.AccessTokenEnv != "", FormatVertex},
		{"metadata_server", pc.MetadataServer, FormatVertex},
	} {
		if err := only(c.name, c.set, c.want); err != nil {
			return err
		}
	}
	switch f {
	case FormatAzure:
		if pc.APIVersion != "" && !azureVersionRE.MatchString(pc.APIVersion) {
			return &ConfigError{Field: field + ".api_version", Message: `must be "v1" or a date such as "2024-10-21" (or "2025-04-01-preview"), got ` + quote(pc.APIVersion)}
		}
		for d, m := range pc.BaseModels {
			if strings.TrimSpace(d) == "" || strings.TrimSpace(m) == "" || strings.ContainsAny(d+m, " \t\n") {
				return &ConfigError{Field: field + ".base_models", Message: fmt.Sprintf("maps a deployment name to a catalogue model, both without spaces, got %q: %q", d, m)}
			}
		}
		return checkEntraFields(field, pc)
	case FormatVertex:
		if pc.APIKey != "" || pc.APIKeyEnv != "" || pc.KeyOptional {
			return &ConfigError{Field: field + ".api_key", Message: "vertex_ai takes no API key: set credentials_file, access_token_env or metadata_server"}
		}
		if pc.Project != "" && !vertexProjectRE.MatchString(pc.Project) {
			return &ConfigError{Field: field + ".project", Message: "must be a Google Cloud project id, got " + quote(pc.Project)}
		}
		if pc.Location != "" && !vertexLocationRE.MatchString(pc.Location) {
			return &ConfigError{Field: field + ".location", Message: `must be a region such as "us-central1" or "global", got ` + quote(pc.Location)}
		}
		n := 0
		for _, set := range []bool{pc.CredentialsFile != "", pc.AccessTokenEnv != "", pc.MetadataServer} {
			if set {
				n++
			}
		}
		if n > 1 {
			return &ConfigError{Field: field + ".credentials_file", Message: "set one of credentials_file, access_token_env and metadata_server"}
		}
	}
	return nil
}

var (
	entraGUIDRE   = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	entraDomainRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,62}\.)+[A-Za-z]{2,63}$`)
)

// checkEntraFields validates the Entra ID fields of the azure entry pc at field. The
// client secret is named by its variable, never written in the file; nothing here quotes
// a secret.
func checkEntraFields(field string, pc ProviderConfig) error {
	if pc.TenantID != "" && !entraGUIDRE.MatchString(pc.TenantID) && !entraDomainRE.MatchString(pc.TenantID) {
		return &ConfigError{Field: field + ".tenant_id", Message: "must be a directory (tenant) id (a GUID) or its domain (contoso.onmicrosoft.com), got " + quote(pc.TenantID)}
	}
	if pc.ClientID != "" && !entraGUIDRE.MatchString(pc.ClientID) {
		return &ConfigError{Field: field + ".client_id", Message: "must be an app registration's application (client) id (a GUID), got " + quote(pc.ClientID)}
	}
	if pc.ClientSecretEnv != "" && !envNameRE.MatchString(pc.ClientSecretEnv) {
		return &ConfigError{Field: field + ".client_secret_env", Message: "must name an environment variable (the secret itself goes in that variable), got a value that is not a variable name"}
	}
	if pc.AuthorityHost != "" {
		if bad := checkAuthorityHost(pc.AuthorityHost); bad != "" {
			return &ConfigError{Field: field + ".authority_host", Message: bad + ", got " + quote(pc.AuthorityHost)}
		}
	}
	n := 0
	for _, set := range []bool{pc.ADTokenEnv != "", pc.ClientSecretEnv != "", pc.FederatedTokenFile != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return &ConfigError{Field: field + ".client_secret_env", Message: "set one of ad_token_env, client_secret_env and federated_token_file"}
	}
	if n > 0 && (pc.APIKey != "" || pc.APIKeyEnv != "") {
		// One of the two would be ignored: say so instead of guessing which was meant.
		key := "api_key_env"
		if pc.APIKey != "" {
			key = "api_key"
		}
		return &ConfigError{Field: field + "." + key, Message: "set either an API key (api_key or api_key_env) or an Entra ID credential (ad_token_env, client_secret_env or federated_token_file), not both"}
	}
	// The azure entry may take them from AZURE_TENANT_ID and AZURE_CLIENT_ID.
	if (pc.ClientSecretEnv != "" || pc.FederatedTokenFile != "") && pc.Name != "azure" {
		if pc.TenantID == "" {
			return &ConfigError{Field: field + ".tenant_id", Message: "is required with client_secret_env or federated_token_file"}
		}
		if pc.ClientID == "" {
			return &ConfigError{Field: field + ".client_id", Message: "is required with client_secret_env or federated_token_file"}
		}
	}
	return nil
}

// envNameRE matches an environment variable name.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// awsFromEnv is a bedrock provider's AWSConfig read through getenv: region when set, else
// AWS_REGION, else AWS_DEFAULT_REGION, else the AWS profile's; the credentials from the
// named variables (the standard ones for ""). An access key without its secret, or the
// reverse, is no credentials. Without static credentials in the standard variables (or
// with profile, a config entry's aws_profile_name), the AWS SDK's default credential chain
// is used where there is evidence of it (see awsDefaultChain; instanceRole is the opt-in
// for the EC2 instance role); an entry naming its own variables signs with them alone.
func awsFromEnv(getenv func(string) string, region, idEnv, secretEnv, tokenEnv, profile string, instanceRole bool) AWSConfig {
	ownVars := idEnv != ""
	or := func(v, def string) string {
		if v == "" {
			return def
		}
		return v
	}
	idEnv, secretEnv, tokenEnv = or(idEnv, EnvAWSAccessKeyID), or(secretEnv, EnvAWSSecretAccessKey), or(tokenEnv, EnvAWSSessionToken)
	c := AWSConfig{Region: region, AccessKeyIDEnv: idEnv, SecretAccessKeyEnv: secretEnv}
	if c.Region == "" {
		c.Region = or(strings.TrimSpace(getenv(EnvAWSRegion)), strings.TrimSpace(getenv(EnvAWSDefaultRegion)))
	}
	id, secret := strings.TrimSpace(getenv(idEnv)), strings.TrimSpace(getenv(secretEnv))
	if id != "" && secret != "" && profile == "" {
		c.AccessKeyID, c.SecretAccessKey, c.SessionToken = id, secret, strings.TrimSpace(getenv(tokenEnv))
		return c
	}
	if ownVars {
		return c
	}
	// Files only: nothing here waits on the network (credentials are retrieved at the first
	// call, with its context).
	chain := awsDefaultChain(context.Background(), getenv, profile, instanceRole)
	c.Credentials, c.CredentialsSource, c.credentialProblem = chain.creds, chain.source, chain.problem
	if tok := strings.TrimSpace(getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN")); tok != "" && chain.creds != nil {
		c.redact = []string{tok}
	}
	if c.Region == "" {
		c.Region = chain.region
	}
	return c
}

var providerNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// utf8BOM is the byte order mark Windows editors (Notepad, PowerShell's Out-File) put at
// the start of a UTF-8 file; the files loaded here skip it, as JSON itself has none.
var utf8BOM = []byte("\ufeff")

// LoadConfig reads and validates a provider configuration file (a leading UTF-8 byte order
// mark skipped).
func LoadConfig(path string) (*FileConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("providers: reading config: %w", err)
	}
	b = bytes.TrimPrefix(b, utf8BOM)
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, &ConfigError{Field: "(file)", Message: path + " is empty (a JSON object {\"providers\": [...]} is expected)"}
	}
	return ParseConfig(b)
}

// ParseConfig parses and validates a provider configuration document.
func ParseConfig(b []byte) (*FileConfig, error) {
	var fc FileConfig
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fc); err != nil {
		return nil, &ConfigError{Field: "(file)", Message: "invalid JSON: " + validation.DescribeJSONError(b, err)}
	}
	presets := map[string]Preset{}
	for _, p := range Presets() {
		presets[p.Name] = p
	}
	seen := map[string]bool{}
	for i, pc := range fc.Providers {
		field := fmt.Sprintf("providers[%d]", i)
		if !providerNameRE.MatchString(pc.Name) {
			return nil, &ConfigError{Field: field + ".name", Message: "must be 1-64 lowercase letters, digits, '-', '_' or '.' (no '/'), got " + quote(pc.Name)}
		}
		if seen[pc.Name] {
			return nil, &ConfigError{Field: field + ".name", Message: "duplicate provider " + quote(pc.Name)}
		}
		seen[pc.Name] = true
		switch pc.Format {
		case "", FormatOpenAI, FormatAnthropic, FormatGemini, FormatAzure, FormatVertex, FormatBedrock:
		default:
			return nil, &ConfigError{Field: field + ".format", Message: "must be openai, anthropic, gemini, azure, vertex_ai or bedrock, got " + quote(string(pc.Format))}
		}
		format := pc.Format
		if preset, ok := presets[pc.Name]; ok {
			if pc.Format != "" && pc.Format != preset.Format {
				return nil, &ConfigError{Field: field + ".format", Message: fmt.Sprintf("%q is a built-in %s provider", pc.Name, preset.Format)}
			}
			format = preset.Format
		} else {
			if pc.Format == "" {
				return nil, &ConfigError{Field: field + ".format", Message: "is required for a provider that is not built in"}
			}
			if pc.BaseURL == "" && pc.Format != FormatVertex && pc.Format != FormatBedrock {
				return nil, &ConfigError{Field: field + ".base_url", Message: "is required for a provider that is not built in"}
			}
		}
		if err := checkAWSFields(field, format, pc); err != nil {
			return nil, err
		}
		if err := checkHeaders(field+".headers", format, pc.Headers); err != nil {
			return nil, err
		}
		if pc.BaseURL != "" && !strings.HasPrefix(pc.BaseURL, "http://") && !strings.HasPrefix(pc.BaseURL, "https://") {
			return nil, &ConfigError{Field: field + ".base_url", Message: "must start with http:// or https://"}
		}
		if strings.Contains(pc.BaseURL, "#") {
			// Not echoed: what follows '#' may be a credential put in the wrong place. The
			// URL joins keep a fragment at the end of the request URL, which no client sends,
			// so it would be dropped silently (--litellm-config and /model/new refuse it too).
			return nil, &ConfigError{Field: field + ".base_url", Message: "has a fragment (#...), which an HTTP client never sends to the upstream, so what it holds would be silently dropped: remove it (a credential goes in api_key, or the query)"}
		}
		if pc.APIKey != "" && pc.APIKeyEnv != "" {
			return nil, &ConfigError{Field: field + ".api_key", Message: "set api_key or api_key_env, not both"}
		}
		if err := checkCloudFields(field, format, pc); err != nil {
			return nil, err
		}
		if !pc.Prefill.valid() {
			return nil, &ConfigError{Field: field + ".prefill", Message: "must be trailing, prefix or continue_final_message, got " + quote(string(pc.Prefill))}
		}
		if !pc.ResponsesAPI.valid() {
			return nil, &ConfigError{Field: field + ".responses_api", Message: "must be auto, always or never, got " + quote(string(pc.ResponsesAPI))}
		}
		if !pc.Rerank.valid() {
			return nil, &ConfigError{Field: field + ".rerank", Message: "must be cohere, jina or voyage, got " + quote(string(pc.Rerank))}
		}
		if pc.Rerank != "" && format != FormatOpenAI {
			return nil, &ConfigError{Field: field + ".rerank", Message: "is for openai-format providers only"}
		}
		switch pc.MaxTokensField {
		case "", "max_tokens", "max_completion_tokens":
		default:
			return nil, &ConfigError{Field: field + ".max_tokens_field", Message: "must be max_tokens or max_completion_tokens"}
		}
	}
	return &fc, nil
}

// checkHeaders validates the extra headers of a provider entry of format (at field).
func checkHeaders(field string, format Format, headers map[string]string) error {
	if len(headers) == 0 {
		return nil
	}
	if format == FormatVertex {
		return &ConfigError{Field: field, Message: "apply to the other formats, not vertex_ai"}
	}
	if len(headers) > MaxExtraHeaders {
		return &ConfigError{Field: field, Message: fmt.Sprintf("at most %d headers, got %d", MaxExtraHeaders, len(headers))}
	}
	for k, v := range headers {
		if k == "" || strings.IndexFunc(k, func(r rune) bool { return r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) }) >= 0 {
			return &ConfigError{Field: field, Message: "must name headers by HTTP's rules, got " + quote(k)}
		}
		if strings.ContainsAny(v, "\r\n\x00") || len(v) > 8192 {
			return &ConfigError{Field: field + "." + k, Message: "must be a header value of at most 8192 bytes without line breaks"}
		}
		switch http.CanonicalHeaderKey(k) {
		case "Content-Type", "Content-Length", "Host", "Transfer-Encoding", "Connection":
			return &ConfigError{Field: field + "." + k, Message: "is set by each call; it cannot be configured"}
		}
	}
	return nil
}

// MaxExtraHeaders bounds a provider entry's Headers.
const MaxExtraHeaders = 32

// checkAWSFields validates the bedrock-only fields of the provider config pc (at field) of
// the given format.
func checkAWSFields(field string, format Format, pc ProviderConfig) error {
	envs := []struct{ name, value string }{
		{"aws_access_key_id_env", pc.AWSAccessKeyIDEnv}, {"aws_secret_access_key_env", pc.AWSSecretAccessKeyEnv},
		{"aws_session_token_env", pc.AWSSessionTokenEnv},
	}
	if format != FormatBedrock {
		if pc.Region != "" {
			return &ConfigError{Field: field + ".region", Message: "applies to bedrock providers only"}
		}
		if pc.AWSProfileName != "" {
			return &ConfigError{Field: field + ".aws_profile_name", Message: "applies to bedrock providers only"}
		}
		if pc.AWSInstanceRole {
			return &ConfigError{Field: field + ".aws_instance_role", Message: "applies to bedrock providers only"}
		}
		for _, e := range envs {
			if e.value != "" {
				return &ConfigError{Field: field + "." + e.name, Message: "applies to bedrock providers only"}
			}
		}
		return nil
	}
	if pc.Region != "" && !ValidAWSRegion(pc.Region) {
		return &ConfigError{Field: field + ".region", Message: "must be an AWS region such as us-east-1, got " + quote(pc.Region)}
	}
	for _, e := range envs {
		if e.value != "" && !envNameRE.MatchString(e.value) {
			return &ConfigError{Field: field + "." + e.name, Message: "must be an environment variable name, got " + quote(e.value)}
		}
	}
	switch {
	case pc.AWSAccessKeyIDEnv != "" && pc.AWSSecretAccessKeyEnv == "":
		return &ConfigError{Field: field + ".aws_secret_access_key_env", Message: "is required with aws_access_key_id_env"}
	case pc.AWSSecretAccessKeyEnv != "" && pc.AWSAccessKeyIDEnv == "":
		return &ConfigError{Field: field + ".aws_access_key_id_env", Message: "is required with aws_secret_access_key_env"}
	case pc.AWSSessionTokenEnv != "" && pc.AWSAccessKeyIDEnv == "":
		return &ConfigError{Field: field + ".aws_session_token_env", Message: "needs aws_access_key_id_env and aws_secret_access_key_env"}
	case pc.AWSProfileName != "" && (strings.TrimSpace(pc.AWSProfileName) != pc.AWSProfileName || strings.ContainsAny(pc.AWSProfileName, "[]\n")):
		return &ConfigError{Field: field + ".aws_profile_name", Message: "must be a profile name of the shared AWS config files, got " + quote(pc.AWSProfileName)}
	case pc.AWSProfileName != "" && pc.AWSAccessKeyIDEnv != "":
		return &ConfigError{Field: field + ".aws_profile_name", Message: "set one of aws_profile_name and aws_access_key_id_env"}
	case pc.AWSInstanceRole && pc.AWSAccessKeyIDEnv != "":
		return &ConfigError{Field: field + ".aws_instance_role", Message: "set one of aws_instance_role and aws_access_key_id_env"}
	}
	return nil
}

// Configure adds or overrides providers from fc; keys named by api_key_env are read
// through getenv.
func (r *Registry) Configure(fc *FileConfig, getenv func(string) string, opts Options) error {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	presets := map[string]Preset{}
	for _, p := range Presets() {
		presets[p.Name] = p
	}
	for i, pc := range fc.Providers {
		preset, isPreset := presets[pc.Name]
		switch {
		case pc.Format == FormatAzure || isPreset && preset.Format == FormatAzure:
			r.Register(configureAzure(pc, isPreset, getenv, opts))
			continue
		case pc.Format == FormatVertex || isPreset && preset.Format == FormatVertex:
			v, err := configureVertex(fmt.Sprintf("providers[%d]", i), pc, isPreset, getenv, opts)
			if err != nil {
				return err
			}
			r.Register(v)
			continue
		}
		cfg := Config{Name: pc.Name, KeyOptional: pc.KeyOptional, MaxTokensField: pc.MaxTokensField, OmitStreamOptions: pc.OmitStreamOptions,
			ShortToolCallIDs: pc.ShortToolCallIDs, Prefill: pc.Prefill, ResponsesAPI: pc.ResponsesAPI, Headers: pc.Headers}
		if cfg.ResponsesAPI == "auto" {
			cfg.ResponsesAPI = ResponsesAuto
		}
		format := pc.Format
		if isPreset {
			format = preset.Format
			cfg.BaseURL = preset.BaseURL
			cfg.KeyEnv = preset.KeyEnv
			cfg.KeyOptional = cfg.KeyOptional || preset.KeyOptional
			cfg.OmitStreamOptions = cfg.OmitStreamOptions || preset.OmitStreamOptions
			cfg.ShortToolCallIDs = cfg.ShortToolCallIDs || preset.ShortToolCallIDs
			if cfg.Prefill == PrefillNone {
				cfg.Prefill = preset.Prefill
			}
			if cfg.MaxTokensField == "" {
				cfg.MaxTokensField = preset.MaxTokensField
			}
			cfg.EmbeddingsOnly, cfg.EmbeddingDimensionsField = preset.EmbeddingsOnly, preset.EmbeddingDimensionsField
			cfg.Rerank, cfg.RerankPath, cfg.RerankOnly = preset.Rerank, preset.RerankPath, preset.RerankOnly
			cfg.APIKey = preset.key(getenv)
			if pc.BaseURL == "" {
				if err := checkEnvBaseURL(getenv, preset.BaseURLEnv); err != nil {
					return err
				}
			}
			if v := strings.TrimSpace(getenv(preset.BaseURLEnv)); v != "" {
				cfg.BaseURL = v
			}
		}
		if pc.BaseURL != "" {
			cfg.BaseURL = pc.BaseURL
		}
		if pc.Rerank != "" && pc.Rerank != cfg.Rerank {
			cfg.Rerank, cfg.RerankPath = pc.Rerank, "" // at {base_url}/rerank
		}
		switch {
		case pc.APIKey != "":
			cfg.APIKey = pc.APIKey
		case pc.APIKeyEnv != "":
			cfg.KeyEnv = pc.APIKeyEnv
			cfg.APIKey = strings.TrimSpace(getenv(pc.APIKeyEnv))
		case format == FormatBedrock:
			// The global Bedrock API key (AWS_BEARER_TOKEN_BEDROCK) is the preset's alone: an
			// entry that names its own SigV4 credentials signs with them, and another bedrock
			// entry reads a Bedrock API key only from the api_key_env it names (else the
			// global key, meant for the default account, would win over its credentials).
			if !isPreset || pc.AWSAccessKeyIDEnv != "" {
				cfg.APIKey = ""
			}
		}
		if format == FormatBedrock {
			cfg.AWS = awsFromEnv(getenv, pc.Region, pc.AWSAccessKeyIDEnv, pc.AWSSecretAccessKeyEnv, pc.AWSSessionTokenEnv, pc.AWSProfileName, pc.AWSInstanceRole)
		}
		p, err := New(format, opts.apply(cfg))
		if err != nil {
			return err
		}
		r.Register(p)
	}
	return nil
}

// configureAzure builds an azure entry of a configuration file: the preset's environment
// (azureEnv) overridden by the entry, or the entry alone for another Azure resource.
func configureAzure(pc ProviderConfig, isPreset bool, getenv func(string) string, opts Options) *Azure {
	ac := AzureConfig{Config: Config{Name: pc.Name, KeyEnv: "an API key (api_key_env)"}}
	if isPreset {
		ac = azureEnv(getenv)
	}
	ac.Name = pc.Name
	ac.Headers = pc.Headers
	ac.OmitStreamOptions, ac.ShortToolCallIDs, ac.Prefill, ac.ResponsesAPI = pc.OmitStreamOptions, pc.ShortToolCallIDs, pc.Prefill, pc.ResponsesAPI
	if ac.ResponsesAPI == "auto" {
		ac.ResponsesAPI = ResponsesAuto
	}
	ac.KeyOptional = pc.KeyOptional
	if pc.MaxTokensField != "" {
		ac.MaxTokensField = pc.MaxTokensField
	}
	if pc.BaseURL != "" {
		ac.BaseURL = pc.BaseURL
	}
	switch {
	case pc.APIKey != "":
		ac.APIKey = pc.APIKey
	case pc.APIKeyEnv != "":
		ac.KeyEnv, ac.APIKey = pc.APIKeyEnv, strings.TrimSpace(getenv(pc.APIKeyEnv))
	}
	if pc.ADTokenEnv != "" || pc.ClientSecretEnv != "" || pc.FederatedTokenFile != "" {
		// The entry chooses its Entra ID credential: the environment's go.
		ac.ADToken, ac.ClientSecret, ac.FederatedTokenFile, ac.assertion, ac.credentialProblem = "", "", "", nil, ""
		if pc.APIKey == "" && pc.APIKeyEnv == "" {
			// and so does the environment's key
			ac.APIKey = ""
			ac.KeyEnv = pc.ADTokenEnv + pc.ClientSecretEnv
			if pc.FederatedTokenFile != "" {
				ac.KeyEnv = "a federated token in " + pc.FederatedTokenFile
			}
		}
	}
	switch {
	case pc.ADTokenEnv != "":
		ac.ADToken = strings.TrimSpace(getenv(pc.ADTokenEnv))
		if strings.HasPrefix(ac.ADToken, "oidc/") {
			// LiteLLM's federated token forms, as in AZURE_AD_TOKEN (azureEnv).
			ac.assertion, ac.credentialProblem = azureOIDC(ac.ADToken, getenv)
			ac.ADToken = ""
		}
	case pc.ClientSecretEnv != "":
		ac.ClientSecret = strings.TrimSpace(getenv(pc.ClientSecretEnv))
	case pc.FederatedTokenFile != "":
		ac.FederatedTokenFile = pc.FederatedTokenFile
	}
	if pc.TenantID != "" {
		ac.TenantID = pc.TenantID
	}
	if pc.ClientID != "" {
		ac.ClientID = pc.ClientID
	}
	if pc.AuthorityHost != "" {
		ac.AuthorityHost = pc.AuthorityHost
	}
	if pc.APIVersion != "" {
		ac.APIVersion = pc.APIVersion
	}
	ac.BaseModels = pc.BaseModels
	ac.Config = opts.apply(ac.Config)
	return NewAzure(ac)
}

// configureVertex builds a vertex_ai entry of a configuration file (at field): the
// preset's environment (vertexEnv) overridden by the entry, or the entry alone for
// another project or region. A credentials file that cannot be read or parsed is an error.
func configureVertex(field string, pc ProviderConfig, isPreset bool, getenv func(string) string, opts Options) (*Vertex, error) {
	vc, problem := VertexConfig{}, ""
	if isPreset {
		vc, problem = vertexEnv(getenv)
	}
	vc.Name, vc.BaseURL = pc.Name, pc.BaseURL
	if pc.Project != "" {
		vc.Project = pc.Project
	}
	if pc.Location != "" {
		vc.Location = pc.Location
	}
	if pc.CredentialsFile != "" || pc.AccessTokenEnv != "" || pc.MetadataServer {
		vc.AccessToken, vc.CredentialsJSON, vc.TokenSource, problem = "", nil, nil, ""
	}
	switch {
	case pc.CredentialsFile != "":
		var bad string
		if vc, bad = readCredentials(vc, field+".credentials_file", pc.CredentialsFile); bad != "" {
			return nil, &ConfigError{Field: field + ".credentials_file", Message: strings.TrimPrefix(bad, field+".credentials_file: ")}
		}
	case pc.AccessTokenEnv != "":
		vc.AccessToken = strings.TrimSpace(getenv(pc.AccessTokenEnv))
		if vc.AccessToken == "" {
			problem = "an access token in " + pc.AccessTokenEnv
		}
	case pc.MetadataServer:
		vc.TokenSource = google.ComputeTokenSource("", googleCloudScope)
	}
	vc.Config = opts.apply(vc.Config)
	v, err := NewVertex(vc)
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) && pc.CredentialsFile != "" {
			return nil, &ConfigError{Field: field + ".credentials_file", Message: strings.TrimPrefix(ce.Message, vc.credentialsFrom+": ")}
		}
		if !isPreset || pc.CredentialsFile != "" {
			return nil, err
		}
		vc.CredentialsJSON = nil // the environment's file: unconfigured, as FromEnv leaves it
		v, _ = NewVertex(vc)
		problem = err.Error()
		if ce := (*ConfigError)(nil); errors.As(err, &ce) {
			problem = "valid credentials (" + ce.Message + ")"
			v.broken = ce.Message
		}
	}
	if problem != "" {
		v.ep.missing = problem
	}
	return v, nil
}

// FromConfigFile returns FromEnv's registry with the providers of the config file at path
// added or overriding presets.
func FromConfigFile(path string, getenv func(string) string, opts Options) (*Registry, error) {
	fc, err := LoadConfig(path)
	if err != nil {
		return nil, err
	}
	r := FromEnv(getenv, opts)
	if err := r.Configure(fc, getenv, opts); err != nil {
		return nil, err
	}
	return r, nil
}
