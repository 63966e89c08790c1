package providers

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ForwardRequest is a client's own request to a provider's API, which a Forwarder sends
// there as it is with the adapter's credential: LiteLLM's pass-through endpoints
// (/anthropic/…, /gemini/…, /openai/…), where a client uses the provider's own SDK.
type ForwardRequest struct {
	// Method is the request's HTTP method.
	Method string
	// Path is the request's path below the provider's API root, escaped as it came, as the
	// provider's SDK sends it with its base URL cut: "v1/messages" (Anthropic),
	// "v1beta/models/gemini-2.0-flash:generateContent" (Gemini), "v1/chat/completions" or
	// "chat/completions" (OpenAI, whose base URL is the /v1 root).
	Path string
	// RawQuery is the query string, without the caller's own credential.
	RawQuery string
	// Header are the headers to send: the caller's, without its credentials and hop-by-hop
	// headers. The adapter adds its own credential and its configured Config.Headers.
	Header http.Header
	// Body is the request body, sent unchanged (nil: none).
	Body []byte
}

// Forwarder is implemented by the adapters that can forward a ForwardRequest to their
// provider's own API: OpenAI's format (not Azure OpenAI), Anthropic (not on a cloud) and
// Gemini (not Vertex AI).
type Forwarder interface {
	// Forward sends req to the provider with the adapter's credential and returns its
	// response whatever its status; the caller reads and closes its body. The request asks
	// for gzip (Accept-Encoding, whatever req.Header says); an answer in gzip or deflate is
	// read decoded, without its Content-Encoding and the headers describing the encoded
	// bytes, its ETag weak (see decodeForwarded; OpenForwardedEncoding finds a body not in
	// its encoding before any is read), and one in another encoding (br, zstd) or a partial
	// one (206) as it came, with its Content-Encoding. It fails, with a
	// *Error, only when nothing was answered: no credential configured (matching
	// ErrNotConfigured), a path that leaves the API root or percent-encodes a dot segment or
	// a path separator in any mix (".%2e", "%2F": KindBadRequest), or a transport failure.
	Forward(ctx context.Context, req *ForwardRequest) (*http.Response, error)
	// CanForward reports whether the adapter forwards at all (false for Azure OpenAI,
	// Vertex AI and Claude on a cloud, whose URLs and credentials are not the provider's
	// own API's).
	CanForward() bool
}

// forwardURL is root + "/" + path with the caller's query: a root with a query of its own
// (an api_base such as Azure Functions' …/api/chat?code=…) keeps it, before the caller's,
// rather than having the path appended to its query.
func forwardURL(root, path, rawQuery string) string {
	root, _, _ = strings.Cut(root, "#")
	root, query, _ := strings.Cut(root, "?")
	u := strings.TrimRight(root, "/") + "/" + path
	if rawQuery != "" {
		if query != "" {
			query += "&"
		}
		query += rawQuery
	}
	if query != "" {
		u += "?" + query
	}
	return u
}

// forward sends req to root + "/" + path with header h (the adapter's credential already
// set in it).
func (e *endpoint) forward(ctx context.Context, root, path string, req *ForwardRequest, h http.Header) (*http.Response, error) {
	if err := e.checkKey(""); err != nil {
		return nil, err
	}
	if err := CheckForwardPath(path); err != nil {
		return nil, e.errorf("", KindBadRequest, "%s", err.Error())
	}
	u := forwardURL(root, path, req.RawQuery)
	var body *bytes.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	method := req.Method
	if method == "" {
		method = http.MethodPost
	}
	var hr *http.Request
	var err error
	if body != nil {
		hr, err = http.NewRequestWithContext(ctx, method, u, body)
	} else {
		hr, err = http.NewRequestWithContext(ctx, method, u, nil)
	}
	if err != nil {
		return nil, &Error{Provider: e.cfg.Name, Kind: KindBadRequest, Message: "building request: invalid base URL or path", Err: err}
	}
	for k, vs := range req.Header {
		hr.Header[k] = vs
	}
	for k, v := range e.cfg.Headers {
		if http.CanonicalHeaderKey(k) == "Anthropic-Beta" && hr.Header.Get(k) != "" {
			// The caller's beta flags (Claude Code's) stay beside the configured ones, as a
			// gateway call's do.
			hr.Header.Set(k, strings.Join(append(hr.Header.Values(k), v), ","))
			continue
		}
		hr.Header.Set(k, v)
	}
	for k, vs := range h {
		hr.Header[k] = vs
	}
	// Asked by the gateway, not by the transport (which would decode gzip itself): the
	// answer is decoded here, gzip and deflate alike, whatever else comes.
	hr.Header.Set("Accept-Encoding", forwardAcceptEncoding)
	resp, err := e.client.Do(hr)
	if err != nil {
		kind := classifyTransport(err, context.Cause(ctx))
		return nil, &Error{Provider: e.cfg.Name, Kind: kind, Message: e.trim(transportMessage(err, kind), sentCredentials(hr.Header)...), Err: err}
	}
	e.log.DebugContext(ctx, "forwarded request answered", "provider", e.cfg.Name, "status", resp.StatusCode)
	decodeForwarded(resp)
	return resp, nil
}

// CheckForwardPath reports why path, a ForwardRequest's Path (escaped, as it came), may
// not be forwarded: it begins with a slash, is not validly percent-encoded, or has a dot
// segment or a path separator, percent-encoded in any mix (".%2e", "%2F", "%5C"), which
// the provider could decode to leave the API root or reach another model or resource
// than the one the path seems to name. Forward refuses such a path; a server checks it
// before it admits the request.
func CheckForwardPath(path string) error {
	if strings.HasPrefix(path, "/") {
		return fmt.Errorf("the path %q is not below the provider's API root", path)
	}
	for seg := range strings.SplitSeq(path, "/") {
		dec, err := url.PathUnescape(seg)
		if err != nil {
			return fmt.Errorf("the path %q is not validly percent-encoded", path)
		}
		if dec == "." || dec == ".." || strings.ContainsAny(dec, "/\\") {
			return fmt.Errorf("the path %q leaves the provider's API root or encodes a path separator", path)
		}
	}
	return nil
}

// CanForward reports whether o forwards requests: not for Azure OpenAI.
func (o *OpenAI) CanForward() bool { return o.azure == nil }

// Forward sends req to o's base URL, which is the API's /v1 root (OPENAI_BASE_URL's
// convention): a path beginning with v1/ has it cut, so that both an SDK given
// …/openai/v1 and one given …/openai reach the same operation. The credential is
// Authorization: Bearer with the configured key.
func (o *OpenAI) Forward(ctx context.Context, req *ForwardRequest) (*http.Response, error) {
	if !o.CanForward() {
		return nil, o.ep.errorf("", KindBadRequest, "provider %q is Azure OpenAI, whose deployments' URLs are not OpenAI's API", o.Name())
	}
	path := req.Path
	if path == "v1" {
		path = ""
	}
	path = strings.TrimPrefix(path, "v1/")
	h := http.Header{}
	if err := o.setAuth(ctx, "", h); err != nil {
		return nil, err
	}
	return o.ep.forward(ctx, o.baseURL, path, req, h)
}

// needs is what a's configuration lacks to call upstream (see Needs).
func (a *Anthropic) needs() string { return a.ep.needs() }

// CanForward reports whether a forwards requests: not for Claude on a cloud (Vertex AI,
// Bedrock).
func (a *Anthropic) CanForward() bool { return a.host == nil }

// Forward sends req to a's base URL (without /v1: the path has it, as Anthropic's SDKs
// send it) with x-api-key, and anthropic-version when the caller sent none. The caller's
// anthropic-beta and other headers go as they came.
func (a *Anthropic) Forward(ctx context.Context, req *ForwardRequest) (*http.Response, error) {
	if !a.CanForward() {
		return nil, a.ep.errorf("", KindBadRequest, "provider %q runs Claude on a cloud, whose API is not Anthropic's", a.Name())
	}
	h := http.Header{}
	h.Set("X-Api-Key", a.ep.cfg.APIKey)
	if req.Header.Get("Anthropic-Version") == "" {
		h.Set("Anthropic-Version", AnthropicVersion)
	}
	return a.ep.forward(ctx, a.baseURL, req.Path, req, h)
}

// CanForward reports whether g forwards requests: not for Vertex AI.
func (g *Gemini) CanForward() bool { return g.tokens == nil }

// Forward sends req to g's API root (the base URL without its version: the path has it,
// as Google's SDKs send it, "v1beta/models/…") with x-goog-api-key.
func (g *Gemini) Forward(ctx context.Context, req *ForwardRequest) (*http.Response, error) {
	if !g.CanForward() {
		return nil, g.ep.errorf("", KindBadRequest, "provider %q is Vertex AI, whose URLs and credentials are not the Gemini API's", g.Name())
	}
	root := g.baseURL
	for _, v := range []string{"/v1beta", "/v1alpha", "/v1"} {
		if r, ok := strings.CutSuffix(root, v); ok {
			root = r
			break
		}
	}
	h := http.Header{}
	if err := g.setAuth(ctx, "", h); err != nil {
		return nil, err
	}
	return g.ep.forward(ctx, root, req.Path, req, h)
}

// ForwardFormat is the wire format a Forwarder's provider speaks (FormatOpenAI,
// FormatAnthropic or FormatGemini), for a UsageMeter of its answers; "" for another.
func ForwardFormat(f Forwarder) Format {
	switch f.(type) {
	case *OpenAI:
		return FormatOpenAI
	case *Anthropic:
		return FormatAnthropic
	case *Gemini:
		return FormatGemini
	}
	return ""
}

// forwardCheck documents that the adapters implement Forwarder.
var (
	_ Forwarder = (*OpenAI)(nil)
	_ Forwarder = (*Anthropic)(nil)
	_ Forwarder = (*Gemini)(nil)
)

// errForwardFormat is UsageMeter's refusal of a format it cannot read.
func errForwardFormat(f Format) error {
	return fmt.Errorf("providers: no usage meter for format %q", f)
}
