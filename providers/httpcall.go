package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	jsonv2 "github.com/go-json-experiment/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultIdleTimeout is how long a response body may stall before it fails with KindTimeout
// when Config.IdleTimeout is zero. It is generous because reasoning models may send nothing
// while they think; gateways wanting faster failover set a shorter one.
const DefaultIdleTimeout = 120 * time.Second

// Config configures one adapter. The zero value of every field except Name means "default".
type Config struct {
	// Name is the provider prefix ("openai", "groq", "my-vllm", ...).
	Name string
	// BaseURL overrides the adapter's default endpoint (e.g. "https://api.openai.com/v1",
	// "https://api.anthropic.com", "https://generativelanguage.googleapis.com").
	BaseURL string
	// APIKey is sent in the format's auth header. It is never logged or put in errors.
	APIKey string
	// KeyOptional lets requests go out without a key (local servers such as Ollama).
	// Otherwise a missing key fails every call with KindAuth before anything is sent.
	KeyOptional bool
	// Unnamed marks a keyless preset the environment does not name (FromEnv: no key and
	// no base URL set, such as ollama on a machine that may run none): it is served, but
	// the gateway's native listings leave its catalogued models out (IsNamed).
	Unnamed bool
	// KeyEnv names the environment variable the key is conventionally read from; it only
	// appears in the "no API key" error message.
	KeyEnv string
	// HTTPClient is used for all calls; nil means http.DefaultClient.
	HTTPClient *http.Client
	// IdleTimeout is the longest a response body may stall between reads before the call
	// fails with KindTimeout; 0 means DefaultIdleTimeout, negative disables it.
	IdleTimeout time.Duration
	// ResponseTimeout bounds the wait for response headers ("no response" fails with
	// KindTimeout); 0 leaves it to the caller's context.
	ResponseTimeout time.Duration
	// MaxTokensField is the OpenAI-format body field for Request.MaxTokens:
	// "max_tokens" (default) or "max_completion_tokens". Other formats ignore it.
	MaxTokensField string
	// OmitStreamOptions leaves stream_options out of OpenAI-format streamed requests, for
	// servers that reject it (Mistral sends usage in its last chunk unasked).
	OmitStreamOptions bool
	// ShortToolCallIDs: the OpenAI-format server accepts only tool-call ids of 9 letters and
	// digits (Mistral); other ids in the history (OpenAI's call_…, Anthropic's toolu_…) are
	// sent as a 9-character hash of themselves, the same for a call and its result.
	ShortToolCallIDs bool
	// Prefill is how an OpenAI-format server continues an assistant prefix
	// (Request.AssistantPrefix); empty when it cannot. Other formats ignore it.
	Prefill PrefillMode
	// ResponsesAPI says when an OpenAI-format adapter calls OpenAI's Responses API instead
	// of chat completions (see ResponsesMode); other formats ignore it.
	ResponsesAPI ResponsesMode
	// EmbeddingsOnly marks an OpenAI-format provider that serves embeddings (and rerank,
	// when Rerank is set) and no chat (Voyage AI, Jina AI): the gateway routes no chat
	// request to it.
	EmbeddingsOnly bool
	// EmbeddingDimensionsField is the embeddings body's field for the vectors' size:
	// "dimensions" (OpenAI's; the default) or "output_dimension" (Voyage AI's).
	EmbeddingDimensionsField string
	// AWS is Amazon Bedrock's region and credentials (FormatBedrock); other formats ignore
	// it.
	AWS AWSConfig
	// Rerank is the provider's rerank API (RerankCohere, RerankJina or RerankVoyage); ""
	// when it has none. RerankPath is where it is under BaseURL (DefaultRerankPath when
	// empty).
	Rerank     RerankAPI
	RerankPath string
	// RerankOnly marks an OpenAI-format provider that serves rerank and nothing else
	// (Cohere, whose chat and embeddings APIs are not OpenAI's): the gateway routes it no
	// chat or embeddings request.
	RerankOnly bool
	// Headers are extra headers sent with every request (e.g. OpenRouter's HTTP-Referer).
	Headers map[string]string
	// Logger receives debug logs of calls (never keys or bodies); nil discards them.
	Logger *slog.Logger
}

// endpoint is the HTTP plumbing shared by the adapters.
type endpoint struct {
	cfg    Config
	client *http.Client
	idle   time.Duration
	log    *slog.Logger
	// missing names what the configuration lacks besides a key (Azure's endpoint, Vertex
	// AI's project or credentials); "" when nothing is. Calls then fail as without a key.
	missing string
	// secrets are further credentials (besides cfg.APIKey) redacted from every message an
	// *Error carries: Bedrock's AWS secret key and session token.
	secrets []string
	// classify, when set, classifies a non-2xx response in place of the error parser and
	// classifyStatus: Bedrock names its error in a header (x-amzn-errortype). It returns the
	// kind, the upstream's error code ("" when none) and its message.
	classify func(status int, h http.Header, body []byte) (kind ErrorKind, code, msg string)
}

// trim is trimMessage with every credential of the endpoint, and extra (the credentials a
// request was signed with), redacted before the message is cut.
func (e *endpoint) trim(msg string, extra ...string) string {
	secrets := make([]string, 0, 1+len(e.secrets)+len(extra))
	secrets = append(secrets, e.cfg.APIKey)
	secrets = append(secrets, e.secrets...)
	secrets = append(secrets, extra...)
	return trimMessage(msg, secrets...)
}

func newEndpoint(cfg Config) endpoint {
	e := endpoint{cfg: cfg, client: cfg.HTTPClient, idle: cfg.IdleTimeout, log: cfg.Logger}
	for k, v := range cfg.Headers {
		// An extra header may carry a credential (a proxy's own key): never in a message.
		// One named as a credential is, whatever its length; any other of 8 bytes or more
		// is too, since a credential may hide under any name (a shorter one is more likely
		// a title or a flag, whose every mention would be cut).
		if secretHeader(k) || len(v) >= shortSecret {
			e.secrets = append(e.secrets, headerCredentials(k, v)...)
		}
	}
	if e.client == nil {
		e.client = http.DefaultClient
	}
	if e.idle == 0 {
		e.idle = DefaultIdleTimeout
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	return e
}

// errorf builds an *Error for this provider.
func (e *endpoint) errorf(model string, kind ErrorKind, format string, args ...any) *Error {
	return &Error{Provider: e.cfg.Name, Model: model, Kind: kind, Message: e.trim(fmt.Sprintf(format, args...))}
}

// checkKey fails with KindAuth, matching ErrNotConfigured, when a required key (or
// anything else the configuration needs, endpoint.missing) is missing.
func (e *endpoint) checkKey(model string) error {
	env := e.needs()
	if env == "" {
		return nil
	}
	pe := e.errorf(model, KindAuth, "provider %q is not configured: set %s", e.cfg.Name, env)
	pe.Err = ErrNotConfigured
	return pe
}

// needs is what the configuration lacks ("" when nothing): the key's variable, and
// anything else it needs (endpoint.missing).
func (e *endpoint) needs() string {
	if e.missing == "" && (e.cfg.APIKey != "" || e.cfg.KeyOptional) {
		return ""
	}
	env := e.cfg.KeyEnv
	if env == "" {
		env = "an API key"
	}
	if e.missing != "" && (e.cfg.APIKey != "" || e.cfg.KeyOptional) {
		env = e.missing
	} else if e.missing != "" {
		env += " and " + e.missing
	}
	return env
}

// errorParser extracts the upstream's error code and message from an error body.
type errorParser func(body []byte) (code, msg string)

// call is one in-flight HTTP response whose body reads are guarded by the idle timeout.
type call struct {
	ep     *endpoint
	model  string
	resp   *http.Response
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	body   io.Reader
	once   sync.Once
	// responses: the call went to OpenAI's Responses API (OpenAI.useResponses), whose
	// answer is read as one.
	responses bool
	// signed are the credentials this request was signed with (Bedrock's, retrieved from
	// an aws.CredentialsProvider per request), and header the headers it was sent with:
	// their credentials are redacted from its errors like the endpoint's (secrets).
	signed []string
	header http.Header
}

// secrets are the credentials c's errors are redacted of besides the endpoint's: those it
// was signed with and those its headers carried (sentCredentials). Worked out only for an
// error: an answer needs none.
func (c *call) secrets() []string {
	return append(slices.Clip(c.signed), sentCredentials(c.header)...)
}

// secretWords are the words a header's name has when its value is a credential:
// Authorization, Proxy-Authorization, Api-Key, X-Api-Key, X-Goog-Api-Key,
// X-Amz-Security-Token, a proxy's X-Auth-Token or X-Proxy-Secret, a Cookie.
var secretWords = []string{"auth", "key", "token", "secret", "passw", "credential", "signature", "cookie", "session"}

// secretHeader reports whether a header of this name carries a credential, so its value is
// redacted from every message whatever its length.
func secretHeader(name string) bool {
	for _, w := range secretWords {
		if containsFold(name, w) {
			return true
		}
	}
	return false
}

// containsFold reports whether s contains the lower-case ASCII word w, in any case; unlike
// strings.ToLower it allocates nothing (it runs on every header of every upstream call).
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}

// headerCredentials are the strings to redact for a header's value: the value and, when it
// is a scheme and a credential ("Bearer sk-…", "Basic dXNlcjpwYXNz"), the credential alone,
// since a message may echo either.
func headerCredentials(name, v string) []string {
	if v == "" {
		return nil
	}
	out := []string{v}
	if _, cred, ok := strings.Cut(v, " "); ok && containsFold(name, "auth") {
		if cred = strings.TrimSpace(cred); cred != "" {
			out = append(out, cred)
		}
	}
	return out
}

// sentCredentials are the credentials in h, to redact from a call's errors: the values of
// every header named as a credential (secretHeader), whatever their length, and for an
// Authorization the part after its scheme.
func sentCredentials(h http.Header) []string {
	var out []string
	for k, vs := range h {
		if !secretHeader(k) {
			continue
		}
		for _, v := range vs {
			out = append(out, headerCredentials(k, v)...)
		}
	}
	return out
}

// send posts body as JSON (a []byte is taken as already encoded) and returns the open response, or a classified *Error for
// transport failures and non-2xx statuses.
func (e *endpoint) send(ctx context.Context, model, url string, header http.Header, body any, parse errorParser) (*call, error) {
	return e.sendSigned(ctx, model, url, header, body, parse, nil, nil)
}

// sendSigned is send with sign, when not nil, called on the request once its headers are
// set, with its encoded body (Bedrock's SigV4 signs both); a signing failure is an *Error
// of kind KindAuth and nothing is sent. secrets are the credentials sign uses, redacted
// from every error of the call.
func (e *endpoint) sendSigned(ctx context.Context, model, url string, header http.Header, body any, parse errorParser,
	sign func(*http.Request, []byte) error, secrets []string) (*call, error) {
	payload, ok := body.([]byte) // already encoded
	if !ok {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return nil, &Error{Provider: e.cfg.Name, Model: model, Kind: KindBadRequest, Message: "encoding request", Err: err}
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		cancel(nil)
		return nil, &Error{Provider: e.cfg.Name, Model: model, Kind: KindBadRequest, Message: "building request: invalid base URL", Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range e.cfg.Headers {
		req.Header.Set(k, v)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if sign != nil {
		if err := sign(req, payload); err != nil {
			cancel(nil)
			return nil, &Error{Provider: e.cfg.Name, Model: model, Kind: KindAuth, Message: e.trim("signing request: "+err.Error(), secrets...), Err: err}
		}
	}
	// Whatever credential the request carries (a bearer token fetched per request: Entra
	// ID's, Vertex AI's) is redacted like the configured ones (call.secrets).
	var headerTimer *time.Timer
	if e.cfg.ResponseTimeout > 0 {
		headerTimer = time.AfterFunc(e.cfg.ResponseTimeout, func() { cancel(errNoResponse) })
	}
	start := time.Now()
	resp, err := e.client.Do(req)
	if headerTimer != nil {
		headerTimer.Stop()
	}
	if err != nil {
		kind := classifyTransport(err, context.Cause(ctx))
		cancel(nil)
		e.log.DebugContext(ctx, "upstream call failed", "provider", e.cfg.Name, "model", model, "kind", kind.String(), durationMS(time.Since(start)))
		secrets = append(secrets, sentCredentials(req.Header)...)
		return nil, &Error{Provider: e.cfg.Name, Model: model, Kind: kind, Message: e.trim(transportMessage(err, kind), secrets...), Err: err}
	}
	c := &call{ep: e, model: model, resp: resp, ctx: ctx, cancel: cancel, signed: secrets, header: req.Header}
	c.timer = time.AfterFunc(time.Hour, func() { cancel(errIdle) })
	c.timer.Stop()
	c.body = &idleReader{c: c}
	if e.log.Enabled(ctx, slog.LevelDebug) { // its arguments cost allocations on every call
		e.log.DebugContext(ctx, "upstream responded", "provider", e.cfg.Name, "model", model, "status", resp.StatusCode, durationMS(time.Since(start)))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer c.Close()
		raw := readErrorBody(c.body)
		code, msg := "", ""
		var kind ErrorKind
		if e.classify != nil {
			kind, code, msg = e.classify(resp.StatusCode, resp.Header, raw)
		} else if parse != nil {
			code, msg = parse(raw)
		}
		if msg == "" {
			msg = string(bytes.TrimSpace(raw))
			if msg == "" {
				msg = http.StatusText(resp.StatusCode)
			}
		}
		if e.classify == nil {
			kind = classifyStatus(resp.StatusCode, code, msg)
		}
		pe := &Error{
			Provider: e.cfg.Name, Model: model, StatusCode: resp.StatusCode,
			Kind:       kind,
			RetryAfter: retryAfter(resp.Header, time.Now()),
			Message:    e.trim(msg, c.secrets()...),
		}
		pe.Param, pe.Code = errorParamAndCode(raw)
		if pe.Code == "" && e.classify != nil && len(code) <= 100 {
			pe.Code = code
		}
		if pe.RetryAfter == 0 && pe.Kind == KindRateLimited {
			pe.RetryAfter = geminiRetryDelay(raw) // Google APIs say it in the body
		}
		return nil, pe
	}
	return c, nil
}

// retryAfter is the wait an error response asks for: its Retry-After header, else
// retry-after-ms (milliseconds, which OpenAI and Azure OpenAI send too); 0 when neither.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if d := parseRetryAfter(h.Get("Retry-After"), now); d > 0 {
		return d
	}
	if ms, err := strconv.ParseFloat(strings.TrimSpace(h.Get("Retry-After-Ms")), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	return 0
}

// errorParamAndCode are the field an error body names (OpenAI's error.param) and its
// error code (error.code, when a string), "" when none.
func errorParamAndCode(raw []byte) (param, code string) {
	var b struct {
		Error struct {
			Param string          `json:"param"`
			Code  json.RawMessage `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &b) != nil {
		return "", ""
	}
	if len(b.Error.Param) <= 200 {
		param = b.Error.Param
	}
	if json.Unmarshal(b.Error.Code, &code) != nil || len(code) > 100 {
		code = ""
	}
	return param, code
}

// transportMessage describes a transport failure without the request URL's details.
func transportMessage(err error, kind ErrorKind) string {
	switch kind {
	case KindTimeout:
		return "no response from upstream in time"
	case KindConnection:
		return "connection to upstream failed: " + rootCause(err).Error()
	}
	return rootCause(err).Error()
}

func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// failure builds an *Error for this call's provider, model and status.
func (c *call) failure(kind ErrorKind, msg string, cause error) *Error {
	return &Error{Provider: c.ep.cfg.Name, Model: c.model, Kind: kind, StatusCode: c.resp.StatusCode, Message: c.ep.trim(msg, c.secrets()...), Err: cause}
}

// readFailure classifies an error met while reading the body. In a stream, a connection
// failure means the stream was cut, which is KindStreamBroken.
func (c *call) readFailure(err error, streaming bool) *Error {
	cause := context.Cause(c.ctx)
	if errors.Is(cause, context.Canceled) {
		// The caller cancelled or closed the stream: not an upstream fault.
		return &Error{Provider: c.ep.cfg.Name, Model: c.model, Kind: KindUnknown, StatusCode: c.resp.StatusCode, Message: "call cancelled", Err: fmt.Errorf("%w: %w", context.Canceled, err)}
	}
	kind := classifyTransport(err, cause)
	msg := transportMessage(err, kind)
	if errors.Is(cause, errIdle) {
		msg = "upstream stalled: no data within the idle timeout"
	}
	if streaming && (kind == KindConnection || kind == KindUnknown) && !errors.Is(err, context.Canceled) {
		kind = KindStreamBroken
		msg = "stream cut before its end marker: " + rootCause(err).Error()
	}
	return c.failure(kind, msg, err)
}

// Close releases the response; safe to call more than once.
func (c *call) Close() error {
	c.once.Do(func() {
		c.timer.Stop()
		c.resp.Body.Close()
		c.cancel(context.Canceled)
	})
	return nil
}

// idleReader arms the idle timer only while a read is blocked, so a slow consumer is not
// mistaken for a stalled upstream.
type idleReader struct{ c *call }

func (r *idleReader) Read(p []byte) (int, error) {
	if r.c.ep.idle > 0 {
		r.c.timer.Reset(r.c.ep.idle)
	}
	n, err := r.c.resp.Body.Read(p)
	r.c.timer.Stop()
	return n, err
}

// ErrResponseTooLarge is matched by the *Error (KindBadResponse) of a success body larger
// than the adapter reads of one: the upstream's answer is refused, the request was not at
// fault (the gateway tries the next model, and answers 502 when none answers within it).
var ErrResponseTooLarge = errors.New("providers: upstream answer larger than the cap")

// tooLarge is the failure of a success body past limit: the upstream's fault, not the
// request's, so KindBadResponse (another model is tried; the same one, which was likely
// billed and would answer as much again, is not) rather than a 400 to the client.
// read is how many bytes of the answer were read before it was refused.
func (c *call) tooLarge(limit, read int64) *Error {
	msg := fmt.Sprintf("the upstream's answer exceeded the %s cap on an answer's size", byteSize(limit))
	if n := c.resp.ContentLength; n > limit {
		msg += fmt.Sprintf(" (it announced %d bytes)", n)
	}
	e := c.failure(KindBadResponse, msg, ErrResponseTooLarge)
	e.AnswerBytes = max(read, c.resp.ContentLength)
	return e
}

// byteSize writes n as the caps are set: in MiB when a whole number of them, else bytes.
func byteSize(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// readAll reads a whole (bounded) success body.
func (c *call) readAll(limit int64) ([]byte, error) {
	if c.resp.ContentLength > limit {
		return nil, c.tooLarge(limit, 0) // announced: nothing of it is read
	}
	var b []byte
	var err error
	if n := c.resp.ContentLength; n > 0 && n <= limit {
		// Declared length: one allocation (plus a spare byte to see the end).
		buf := make([]byte, n+1)
		var got int
		got, err = io.ReadFull(c.body, buf)
		switch {
		case int64(got) < n && (err == io.EOF || err == io.ErrUnexpectedEOF):
			// Shorter than declared: the upstream (or a proxy) closed the connection
			// mid-answer.
			if context.Cause(c.ctx) == nil {
				return nil, c.failure(KindConnection, fmt.Sprintf("the upstream closed the connection mid-answer: %d of the %d bytes it announced arrived", got, n), io.ErrUnexpectedEOF)
			}
			err = io.ErrUnexpectedEOF
		case err == io.ErrUnexpectedEOF:
			b, err = buf[:got], nil
		case err == nil: // longer than declared
			var rest []byte
			rest, err = io.ReadAll(io.LimitReader(c.body, limit+1-int64(got)))
			b = append(buf, rest...)
		}
	} else {
		b, err = io.ReadAll(io.LimitReader(c.body, limit+1))
	}
	if err != nil {
		return nil, c.readFailure(err, false)
	}
	if int64(len(b)) > limit {
		return nil, c.tooLarge(limit, int64(len(b)))
	}
	return b, nil
}

// decodeAll decodes a whole (bounded) success body into v as it is read, never holding the
// body itself: for answers, such as a large batch of embeddings, whose JSON is several
// times the size of what it decodes to. A body that is not JSON is KindStreamBroken.
func (c *call) decodeAll(limit int64, v any, what string) error {
	if c.resp.ContentLength > limit {
		return c.tooLarge(limit, 0) // announced: nothing of it is read
	}
	r := &cappedReader{r: c.body, left: limit}
	err := jsonv2.UnmarshalRead(r, v, upstreamJSON)
	switch {
	case r.over:
		return c.tooLarge(limit, r.read+1) // and the byte that went past
	case r.err != nil:
		return c.readFailure(r.err, false)
	case err != nil:
		return c.malformedBody(r.head, r.read, err, what)
	}
	return nil
}

// cappedReader reads at most left bytes of r, recording a read failure and whether the
// body went past the bound, and keeping the body's first bytes (head) and how many were
// read, for the message of a body that is not JSON.
type cappedReader struct {
	r    io.Reader
	left int64
	over bool
	err  error
	head []byte
	read int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			c.over = true
			return 0, errors.New("response body too large")
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	c.read += int64(n)
	if room := 4*malformedSnippetLen - len(c.head); room > 0 {
		c.head = append(c.head, p[:min(n, room)]...)
	}
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// maxResponseBody bounds a non-streamed success body.
const maxResponseBody = 32 << 20

// durationMS is a log line's duration_ms: milliseconds with microseconds as decimals, as
// the server's request lines have it (a time.Duration would print as nanoseconds in JSON).
func durationMS(d time.Duration) slog.Attr {
	return slog.Float64("duration_ms", float64(d.Microseconds())/1000)
}
