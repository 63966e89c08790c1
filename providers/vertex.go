package providers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// DefaultVertexLocation is the Vertex AI region used when none is configured (LiteLLM's
// default).
const DefaultVertexLocation = "us-central1"

// VertexConfig configures a Vertex AI adapter (NewVertex).
type VertexConfig struct {
	// Config is the Gemini adapter's: Name ("vertex_ai" when empty), BaseURL (the API's
	// root, "https://{location}-aiplatform.googleapis.com" when empty,
	// "https://aiplatform.googleapis.com" for the global location, or
	// "https://aiplatform.{us,eu}.rep.googleapis.com" for the multi-regions), HTTPClient (also used
	// to fetch access tokens), timeouts, … APIKey is not used.
	Config
	// Project is the Google Cloud project; when empty, the one the credentials file names
	// (a service account's project_id, gcloud's quota_project_id).
	Project string
	// Location is the region ("us-central1", "europe-west4", …) or "global"; "" for
	// DefaultVertexLocation.
	Location string
	// AccessToken is a fixed OAuth 2.0 access token (`gcloud auth print-access-token`),
	// used as given: it expires (after an hour) and is not refreshed.
	AccessToken string
	// CredentialsJSON is an Application Default Credentials file's content (a service
	// account's key, gcloud's application_default_credentials.json, workload identity
	// federation): tokens are fetched with it, cached, and fetched again before they
	// expire.
	CredentialsJSON []byte
	// TokenSource yields tokens from elsewhere (google.ComputeTokenSource for the metadata
	// server of Compute Engine, GKE or Cloud Run); used when the two above are empty. Its
	// fetches do not take the request's context.
	TokenSource oauth2.TokenSource

	// credentialsFrom names where CredentialsJSON came from (a variable), for messages.
	credentialsFrom string
}

// Vertex speaks Gemini on Google Cloud's Vertex AI: the Gemini wire format, with everything
// the Gemini adapter does (tools, structured output, thinking, search, content filters), at
//
//	POST {root}/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent
//	POST …/{model}:streamGenerateContent?alt=sse
//
// where root is https://{location}-aiplatform.googleapis.com (https://aiplatform.googleapis.com
// for the global location), authenticated with an OAuth 2.0 access token ("Authorization:
// Bearer"): a fixed one, or one from Google credentials (VertexConfig), cached and fetched
// again five minutes before it expires, with the context of the request that needs it.
// A configuration without a project or credentials is not configured: its calls fail as a
// provider's without a key, naming what is missing.
//
// Embeddings go to {model}:predict, the text-embedding models' API on Vertex AI:
// {"instances": [{"content": …}]}, up to 250 texts and about 15,000 tokens a call
// (Vertex's limits are 250 and 20,000; tokens are counted locally), one text a call for
// the gemini-embedding models, which take no more; the Gemini embedding models other than
// gemini-embedding-001 go to {model}:embedContent ({"content": {"parts": [...]}}), as the
// google-genai SDK sends them.
//
// Claude models ("claude-sonnet-4@20250514") are served through Anthropic's publisher with
// the Anthropic adapter (see newVertexClaude): its bodies, answers and streams, at
// …/publishers/anthropic/models/{model}:rawPredict and :streamRawPredict, with the same
// token. The other partner models of Vertex AI (Llama, Mistral, …) are refused before any
// call.
type Vertex struct {
	*Gemini
	// claude serves the Claude models (publishers/anthropic; see newVertexClaude).
	claude *Anthropic
	// broken is why the credentials the environment names cannot be used ("" when they
	// can, or none are named).
	broken string
}

// Broken returns why the credentials the environment named cannot be used, "" when none
// were named or they can: the server says it at start.
func (v *Vertex) Broken() string { return v.broken }

// NewVertex returns a Vertex AI adapter. A credentials file that does not parse is an error.
func NewVertex(cfg VertexConfig) (*Vertex, error) {
	c := cfg.Config
	if c.Name == "" {
		c.Name = "vertex_ai"
	}
	c.APIKey, c.KeyOptional = "", true
	if c.KeyEnv == "" {
		c.KeyEnv = "VERTEXAI_PROJECT"
	}
	tokens := &googleTokens{now: time.Now}
	if c.HTTPClient != nil {
		tokens.transport = c.HTTPClient.Transport
	}
	project, location := strings.TrimSpace(cfg.Project), strings.TrimSpace(cfg.Location)
	var missing []string
	switch {
	case cfg.AccessToken != "":
		tokens.static = cfg.AccessToken
	case len(cfg.CredentialsJSON) > 0:
		src, p, err := parseGoogleCredentials(cfg.CredentialsJSON)
		if err != nil {
			msg := err.Error()
			if cfg.credentialsFrom != "" {
				msg = cfg.credentialsFrom + ": " + msg
			}
			return nil, &ConfigError{Field: "credentials", Message: msg}
		}
		tokens.source = src
		if project == "" {
			project = p
		}
	case cfg.TokenSource != nil:
		ts := cfg.TokenSource
		tokens.source = func(context.Context) (oauth2.TokenSource, error) { return ts, nil }
	default:
		missing = append(missing, "credentials (GOOGLE_APPLICATION_CREDENTIALS, VERTEXAI_CREDENTIALS or VERTEXAI_ACCESS_TOKEN)")
	}
	if project == "" {
		missing = append([]string{"VERTEXAI_PROJECT (or GOOGLE_CLOUD_PROJECT)"}, missing...)
	}
	if location == "" {
		location = DefaultVertexLocation
	}
	root := withBasePath(c.BaseURL, func(path string) string { return strings.TrimRight(path, "/") })
	if root == "" {
		switch location {
		case "global":
			root = "https://aiplatform.googleapis.com"
		case "us", "eu": // multi-region (data boundary) locations
			root = "https://aiplatform." + location + ".rep.googleapis.com"
		default:
			root = "https://" + location + "-aiplatform.googleapis.com"
		}
	}
	c.BaseURL = root
	g := &Gemini{ep: newEndpoint(c), tokens: tokens,
		baseURL: operationURL(root, "/v1/projects/"+url.PathEscape(project)+"/locations/"+url.PathEscape(location)+"/publishers/google")}
	g.ep.missing = strings.Join(missing, " and ")
	v := &Vertex{Gemini: g}
	v.claude = newVertexClaude(v, c, operationURL(root, "/v1/projects/"+url.PathEscape(project)+"/locations/"+url.PathEscape(location)+"/publishers/anthropic"))
	return v, nil
}

// BaseURL returns the root of the models' URLs: {root}/v1/projects/{project}/locations/{location}/publishers/google.
func (v *Vertex) BaseURL() string { return v.baseURL }

// Check implements RequestChecker: the Anthropic adapter's objections for a Claude model,
// else Gemini's, and a model Vertex AI serves through another partner's API (Llama,
// Mistral, …) refused.
func (v *Vertex) Check(model string, req *Request) error {
	if err := checkLogprobs(v, model, req); err != nil {
		return err
	}
	if a := v.claudeModel(model); a != nil {
		return a.Check(model, req)
	}
	if err := vertexModel(v.Name(), model); err != nil {
		return err
	}
	return v.Gemini.Check(model, req)
}

// SupportsAudioInput implements AudioInputSupporter: Vertex AI's Gemini models take
// recordings, its Claude models (Anthropic's API) none.
func (v *Vertex) SupportsAudioInput(model string, _ *Request) (bool, string) {
	if v.claudeModel(model) != nil {
		return false, "Claude models (Anthropic's API on Vertex AI) take no audio input"
	}
	return true, ""
}

// SupportsLogprobs implements LogprobsSupporter: Vertex AI's Gemini models return log
// probabilities, its Claude models (Anthropic's API) none.
func (v *Vertex) SupportsLogprobs(model string, req *Request) (bool, string) {
	if v.claudeModel(model) != nil {
		return false, "Claude models (Anthropic's API on Vertex AI) return no log probabilities"
	}
	return true, ""
}

// vertexModel refuses the partner models of Vertex AI other than Claude, which are not
// served by Google's generateContent (their publishers have APIs of their own).
func vertexModel(provider, model string) error {
	m := strings.ToLower(strings.TrimPrefix(model, "models/"))
	for _, p := range []string{"llama", "meta/", "mistral", "codestral", "jamba", "deepseek", "qwen", "ai21/", "openai/"} {
		// A publisher-qualified name (xai/…, moonshotai/…, zai-org/…) is a partner's too:
		// Google's own models have no "/" in their ids.
		if strings.HasPrefix(m, p) || strings.Contains(m, "/") {
			return &UnsupportedError{Provider: provider, Field: "model",
				Reason: "Vertex AI serves " + model + " through its publisher's own API, which Switchyard does not call: only Google's models (Gemini, Gemma, text-embedding) and Anthropic's (Claude) are served; use the publisher's own provider"}
		}
	}
	return nil
}

// tokenFailure is the *Error of a call whose access token could not be had: the
// request's own end, else a failure of the token endpoint (KindRateLimited when it
// answered 429, KindOverloaded when it failed, KindAuth when it refused the credentials,
// KindConnection when it could not be reached), else credentials that cannot be used
// (KindAuth).
func (g *Gemini) tokenFailure(ctx context.Context, model string, err error) *Error {
	pe := &Error{Provider: g.Name(), Model: model, Kind: KindAuth, Message: trimMessage("Vertex AI access token: "+err.Error(), ""), Err: err}
	var (
		re *oauth2.RetrieveError
		ue *url.Error
		ne net.Error
	)
	switch {
	case ctx.Err() != nil:
		pe.Kind = classifyTransport(ctx.Err(), context.Cause(ctx))
	case errors.As(err, &re) && re.Response != nil:
		pe.StatusCode = re.Response.StatusCode
		switch code := re.Response.StatusCode; {
		case code == http.StatusTooManyRequests:
			pe.Kind = KindRateLimited
			if secs, err := strconv.Atoi(strings.TrimSpace(re.Response.Header.Get("Retry-After"))); err == nil && secs > 0 {
				pe.RetryAfter = time.Duration(secs) * time.Second
			}
		case code >= 500:
			pe.Kind = KindOverloaded
		}
	case errors.As(err, &re):
		// refused, with no response kept: the credentials
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ue) || errors.As(err, &ne):
		pe.Kind = KindConnection
	}
	return pe
}

// vertexEmbedMaxInputs and vertexEmbedMaxTokens bound one :predict call of a
// text-embedding model: Vertex takes 250 texts and 20,000 tokens, which a local count (not
// Google's tokenizer) keeps well under.
const (
	vertexEmbedMaxInputs = 250
	vertexEmbedMaxTokens = 15000
)

// vertexEmbedBatches splits inputs into the batches of :predict calls (see embedBatches):
// one text a call for the gemini-embedding models, else up to vertexEmbedMaxInputs texts of
// at most vertexEmbedMaxTokens counted tokens (a longer text alone: Vertex truncates it).
func vertexEmbedBatches(model string, inputs []string) []int {
	bounds := make([]int, 0, 2)
	if strings.HasPrefix(model, "gemini-embedding") {
		for i := range inputs {
			bounds = append(bounds, i)
		}
		return append(bounds, len(inputs))
	}
	n, tokens := 0, 0
	for i, in := range inputs {
		t := CountTokens(model, in)
		if i == 0 || n == vertexEmbedMaxInputs || tokens+t > vertexEmbedMaxTokens {
			bounds = append(bounds, i)
			n, tokens = 0, 0
		}
		n, tokens = n+1, tokens+t
	}
	return append(bounds, len(inputs))
}

type vertexPredictRequest struct {
	Instances  []vertexEmbedInstance `json:"instances"`
	Parameters *vertexEmbedParams    `json:"parameters,omitempty"`
}

type vertexEmbedInstance struct {
	Content string `json:"content"`
}

type vertexEmbedParams struct {
	OutputDimensionality int `json:"outputDimensionality,omitempty"`
}

type vertexPredictResponse struct {
	Predictions []struct {
		Embeddings struct {
			Values     []float32 `json:"values"`
			Statistics *struct {
				TokenCount float64 `json:"token_count"`
			} `json:"statistics"`
		} `json:"embeddings"`
	} `json:"predictions"`
}

// vertexEmbedContentModel reports whether Vertex AI embeds with model through
// {model}:embedContent, as the google-genai SDK decides it: the Gemini embedding models
// but gemini-embedding-001 (which, like the text-embedding models, takes :predict).
func vertexEmbedContentModel(model string) bool {
	m := strings.ToLower(strings.TrimPrefix(model, "models/"))
	return strings.Contains(m, "gemini") && m != "gemini-embedding-001"
}

type vertexEmbedContentRequest struct {
	Content              geminiEmbedContent `json:"content"`
	OutputDimensionality int                `json:"outputDimensionality,omitempty"`
}

type vertexEmbedContentResponse struct {
	Embedding *struct {
		Values []float32 `json:"values"`
	} `json:"embedding"`
	Embeddings []struct {
		Values []float32 `json:"values"`
	} `json:"embeddings"`
	UsageMetadata *struct {
		PromptTokenCount int `json:"promptTokenCount"`
	} `json:"usageMetadata"`
}

// vertexEmbedContent embeds one text (a batch of one: vertexEmbedBatches) with
// {model}:embedContent, {"content": {"parts": [{"text": …}]}}.
func (g *Gemini) vertexEmbedContent(ctx context.Context, req *EmbeddingRequest, model string, batch []string, vectors [][]float32) (int, bool, error) {
	h := http.Header{}
	if err := g.setAuth(ctx, req.Model, h); err != nil {
		return 0, false, err
	}
	tokens, counted := 0, true
	for i, text := range batch {
		body := vertexEmbedContentRequest{Content: geminiEmbedContent{Parts: []geminiPart{{Text: text}}}, OutputDimensionality: req.Dimensions}
		c, err := g.ep.send(ctx, req.Model, operationURL(g.baseURL, "/models/"+url.PathEscape(model)+":embedContent"), h, body, parseGeminiError)
		if err != nil {
			return 0, false, err
		}
		var r vertexEmbedContentResponse
		err = c.decodeAll(maxEmbeddingBody, &r, "embeddings response")
		if err != nil {
			c.Close()
			return 0, false, err
		}
		var values []float32
		switch {
		case r.Embedding != nil:
			values = r.Embedding.Values
		case len(r.Embeddings) == 1:
			values = r.Embeddings[0].Values
		}
		if len(values) == 0 {
			err := c.failure(KindStreamBroken, "embeddings response has no vector", nil)
			c.Close()
			return 0, false, err
		}
		c.Close()
		vectors[i] = values
		if r.UsageMetadata != nil && r.UsageMetadata.PromptTokenCount > 0 {
			tokens += r.UsageMetadata.PromptTokenCount
		} else {
			counted = false
		}
	}
	if !counted {
		return countInputs(req.Model, batch), false, nil
	}
	return tokens, true, nil
}

// vertexPredict embeds one batch with {model}:predict (see embedBatch).
func (g *Gemini) vertexPredict(ctx context.Context, req *EmbeddingRequest, model string, batch []string, vectors [][]float32) (int, bool, error) {
	body := vertexPredictRequest{Instances: make([]vertexEmbedInstance, len(batch))}
	for i, text := range batch {
		body.Instances[i].Content = text
	}
	if req.Dimensions > 0 {
		body.Parameters = &vertexEmbedParams{OutputDimensionality: req.Dimensions}
	}
	h := http.Header{}
	if err := g.setAuth(ctx, req.Model, h); err != nil {
		return 0, false, err
	}
	c, err := g.ep.send(ctx, req.Model, operationURL(g.baseURL, "/models/"+url.PathEscape(model)+":predict"), h, body, parseGeminiError)
	if err != nil {
		return 0, false, err
	}
	defer c.Close()
	var r vertexPredictResponse
	if err := c.decodeAll(maxEmbeddingBody, &r, "embeddings response"); err != nil {
		return 0, false, err
	}
	if len(r.Predictions) != len(batch) {
		return 0, false, c.failure(KindStreamBroken, "embeddings response has "+strconv.Itoa(len(r.Predictions))+" vectors for "+strconv.Itoa(len(batch))+" inputs", nil)
	}
	tokens, counted := 0, true
	for i, p := range r.Predictions {
		if len(p.Embeddings.Values) == 0 {
			return 0, false, c.failure(KindStreamBroken, "embeddings response has an empty vector", nil)
		}
		vectors[i] = p.Embeddings.Values
		if s := p.Embeddings.Statistics; s != nil && s.TokenCount > 0 {
			tokens += int(s.TokenCount)
		} else {
			counted = false
		}
	}
	if !counted {
		return countInputs(req.Model, batch), false, nil
	}
	return tokens, true, nil
}

// vertexEnv is the Vertex AI configuration of the environment: the project from
// VERTEXAI_PROJECT (LiteLLM's), else GOOGLE_CLOUD_PROJECT (the google-genai SDK's), else the
// credentials file's; the location from VERTEXAI_LOCATION, else GOOGLE_CLOUD_LOCATION; and
// the credentials, the first there is of: a fixed token in VERTEXAI_ACCESS_TOKEN; the
// credentials file VERTEXAI_CREDENTIALS names (or holds, as JSON: LiteLLM's), else
// GOOGLE_APPLICATION_CREDENTIALS, else gcloud's application-default file; the metadata
// server when GCE_METADATA_HOST names one. A credentials file that cannot be read or parsed
// leaves the provider unconfigured, with the reason.
func vertexEnv(getenv func(string) string) (VertexConfig, string) {
	first := func(names ...string) string { return firstEnv(getenv, names...) }
	cfg := VertexConfig{Config: Config{Name: "vertex_ai"}}
	cfg.Project = first("VERTEXAI_PROJECT", "GOOGLE_CLOUD_PROJECT")
	cfg.Location = first("VERTEXAI_LOCATION", "GOOGLE_CLOUD_LOCATION")
	cfg.AccessToken = first("VERTEXAI_ACCESS_TOKEN")
	if cfg.AccessToken != "" {
		return cfg, ""
	}
	if v := credentialsValue(first("VERTEXAI_CREDENTIALS")); strings.HasPrefix(v, "{") {
		cfg.CredentialsJSON, cfg.credentialsFrom = []byte(v), "VERTEXAI_CREDENTIALS"
		return cfg, ""
	} else if v != "" {
		return readCredentials(cfg, "VERTEXAI_CREDENTIALS", v)
	}
	if v := first("GOOGLE_APPLICATION_CREDENTIALS"); v != "" {
		return readCredentials(cfg, "GOOGLE_APPLICATION_CREDENTIALS", v)
	}
	if p := gcloudADCFile(getenv); p != "" {
		return readCredentials(cfg, "gcloud's application default credentials", p)
	}
	if first("GCE_METADATA_HOST") != "" {
		cfg.TokenSource = google.ComputeTokenSource("", googleCloudScope)
	}
	return cfg, ""
}

// credentialsValue is a credentials variable's value without what wraps JSON pasted into
// it: a byte-order mark, the quotes an env file keeps, spaces.
func credentialsValue(v string) string {
	for {
		t := strings.TrimSpace(strings.TrimPrefix(v, "\ufeff"))
		if len(t) >= 2 && (t[0] == '\'' || t[0] == '"') && t[len(t)-1] == t[0] {
			t = t[1 : len(t)-1]
		}
		if t == v {
			return v
		}
		v = t
	}
}

// firstEnv is the first of the variables names that is set (spaces trimmed), "" when none.
func firstEnv(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			return v
		}
	}
	return ""
}

// readCredentials reads the credentials file at path into cfg, or says why it cannot. what
// names where path came from (a variable). The path is said only when it looks like one: a
// variable's value may be credentials pasted in the wrong form, which no message quotes.
func readCredentials(cfg VertexConfig, what, path string) (VertexConfig, string) {
	b, err := os.ReadFile(path)
	if err != nil {
		if len(path) > 512 || strings.ContainsAny(path, "{}\"'\n\r") || strings.Contains(path, "PRIVATE") {
			return cfg, what + ": neither a readable credentials file's path nor credentials JSON (which starts with {)"
		}
		return cfg, fmt.Sprintf("%s: %v", what, err)
	}
	cfg.CredentialsJSON, cfg.credentialsFrom = b, what
	return cfg, ""
}
