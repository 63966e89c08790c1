package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// passThroughRoute is one of LiteLLM's provider pass-through endpoints: requests under
// prefix go as they are to provider's own API (see handlePassThrough).
type passThroughRoute struct {
	prefix   string // "/anthropic"
	provider string // the registry's name of the provider
	// envelope is the provider's error envelope, for the failures the server answers.
	envelope errorEnvelope
	// sdk says how the provider's SDK is pointed here, for the route's summary.
	sdk string
}

// passThroughRoutes are the pass-through endpoints, as LiteLLM's proxy serves them.
var passThroughRoutes = []passThroughRoute{
	{prefix: "/anthropic", provider: "anthropic", envelope: envelopeAnthropic,
		sdk: "ANTHROPIC_BASE_URL=http://host/anthropic; key in x-api-key or Authorization"},
	{prefix: "/gemini", provider: "gemini", envelope: envelopeGemini,
		sdk: "google-genai http_options base_url=http://host/gemini; key in x-goog-api-key or ?key= or Authorization"},
	{prefix: "/openai", provider: "openai", envelope: envelopeOpenAI,
		sdk: "OpenAI SDK base_url=http://host/openai/v1; key in Authorization"},
}

// passThroughOf is the pass-through route path is under, and whether it is under one.
func passThroughOf(path string) (passThroughRoute, bool) {
	for _, pt := range passThroughRoutes {
		if strings.HasPrefix(path, pt.prefix+"/") {
			return pt, true
		}
	}
	return passThroughRoute{}, false
}

// isPassThroughPath reports whether path is under a pass-through endpoint.
func isPassThroughPath(path string) bool {
	_, ok := passThroughOf(path)
	return ok
}

// passThroughEnvelope is the envelope of the failures answered under a pass-through
// endpoint (the provider's own), and whether path is under one.
func passThroughEnvelope(path string) (errorEnvelope, bool) {
	pt, ok := passThroughOf(path)
	return pt.envelope, ok
}

// passThroughKey is the key of a request under a pass-through endpoint sent as the
// provider's SDK sends its own: x-api-key (Anthropic's) or x-goog-api-key or ?key=
// (Google's); "" elsewhere or when none came.
func passThroughKey(r *http.Request) string {
	pt, ok := passThroughOf(r.URL.Path)
	switch {
	case !ok:
		return ""
	case pt.envelope == envelopeAnthropic:
		return strings.TrimSpace(r.Header.Get("X-Api-Key"))
	case pt.envelope == envelopeGemini:
		return geminiKey(r)
	}
	return ""
}

// passThroughKeyHint says, in a 401, the other ways a pass-through path takes the key.
func passThroughKeyHint(path string) string {
	pt, ok := passThroughOf(path)
	switch {
	case !ok:
		return ""
	case pt.envelope == envelopeAnthropic:
		return " (or x-api-key: <key>)"
	case pt.envelope == envelopeGemini:
		return " (or x-goog-api-key: <key>, or ?key=<key>)"
	}
	return ""
}

// passThroughDropped are the request headers never forwarded: hop-by-hop headers (RFC
// 9110 7.6.1), the caller's credentials (the provider gets the server's own), the
// server's own (LiteLLM's x-litellm-…, dropped by prefix), cookies, and Accept-Encoding
// (Forward asks for gzip itself and hands a gzip or deflate answer on decoded, so that its
// usage can be read).
var passThroughDropped = []string{"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Proxy-Connection",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Host", "Content-Length", "Accept-Encoding",
	"Authorization", "X-Api-Key", "X-Goog-Api-Key", "Api-Key", "Cookie"}

// passThroughAnswerDropped are the upstream's response headers not handed on: hop-by-hop
// ones, its length (a gzip or deflate answer is relayed decoded, see providers.Forwarder,
// whose decoding also drops the headers describing the encoded bytes and weakens the ETag;
// one in another encoding keeps its Content-Encoding, its bytes relayed as they came),
// its cookies, and its X-Request-Id, which would hide the server's own (kept in the
// history; the provider's is handed on as passThroughUpstreamRequestID).
var passThroughAnswerDropped = []string{"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Connection", "Te", "Trailer",
	"Transfer-Encoding", "Upgrade", "Content-Length", "Set-Cookie", "X-Request-Id", "X-Litellm-Call-Id"}

// passThroughUpstreamRequestID is the header the provider's own X-Request-Id (OpenAI's) is
// handed on in, the server's X-Request-Id keeping its place: LiteLLM's name for a
// provider's response header (llm_provider-…). Anthropic's request-id goes as it came.
const passThroughUpstreamRequestID = "llm_provider-x-request-id"

// forwardHeaders is h without what passThroughDropped names and the headers its
// Connection header names.
func forwardHeaders(h http.Header) http.Header {
	out := h.Clone()
	for _, c := range h.Values("Connection") {
		for name := range strings.SplitSeq(c, ",") {
			out.Del(strings.TrimSpace(name))
		}
	}
	for _, k := range passThroughDropped {
		out.Del(k)
	}
	for k := range out {
		if strings.HasPrefix(k, "X-Litellm-") {
			delete(out, k)
		}
	}
	return out
}

// withoutKeyParam is the raw query q without its key parameters (the caller's key as
// Google's SDKs may send it), the others as they came. A parameter is a key parameter
// when its name decodes to key, as the server reads it (?k%65y= too).
func withoutKeyParam(q string) string {
	if q == "" {
		return ""
	}
	var kept []string
	for part := range strings.SplitSeq(q, "&") {
		name, _, _ := strings.Cut(part, "=")
		if dec, err := url.QueryUnescape(name); name == "key" || err == nil && dec == "key" {
			continue
		}
		kept = append(kept, part)
	}
	return strings.Join(kept, "&")
}

// passThroughAsk is the model a pass-through request names and whether it asks for a
// stream: Gemini's models/{model}:{method} in its path (streamGenerateContent streams),
// a multipart/form-data body's model and stream form fields (contentType is the
// request's; see formAsk), else the JSON body's model and stream, read as the provider
// reads them: keys matched exactly (Go's decoder would take "Model" for model, which a
// provider ignores). A body naming model more than once is refused: a provider may take
// another of them than the one checked.
func passThroughAsk(pt passThroughRoute, path, contentType string, body []byte) (model string, stream bool, err error) {
	if pt.envelope == envelopeGemini {
		segs := strings.Split(path, "/")
		for i, seg := range segs {
			if (seg == "models" || seg == "tunedModels") && i+1 < len(segs) {
				m, method, _ := strings.Cut(segs[i+1], ":")
				return m, method == "streamGenerateContent", nil
			}
		}
		return "", false, nil
	}
	if boundary, ok := isMultipartForm(contentType); ok {
		return formAsk(boundary, body)
	}
	fields, ok := topLevelFields(body)
	if !ok {
		return "", false, nil
	}
	if n := len(fields["model"]); n > 1 {
		return "", false, Errorf(http.StatusBadRequest, KindBadRequest, "model: the body names model %d times; name it once", n)
	}
	if vs := fields["model"]; len(vs) == 1 {
		json.Unmarshal(vs[0], &model)
	}
	if vs := fields["stream"]; len(vs) > 0 {
		json.Unmarshal(vs[len(vs)-1], &stream)
	}
	return model, stream, nil
}

// topLevelFields is each top-level key of the JSON object body with its values in order
// (a key may come more than once), keys as they decode; ok is false when body is not one
// JSON object.
func topLevelFields(body []byte) (map[string][]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	fields := map[string][]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if key == "model" || key == "stream" {
			fields[key] = append(fields[key], v)
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, false
	}
	return fields, true
}

// passThroughModelCalls are, per provider, the paths (below the prefix, without OpenAI's
// v1/) of the operations that call the model the body names and report its usage: the
// only ones a key held to models may forward.
var passThroughModelCalls = map[string][]string{
	"anthropic": {"v1/messages", "v1/messages/count_tokens", "v1/complete"},
	"openai": {"chat/completions", "completions", "responses", "embeddings", "moderations",
		"audio/speech", "images/generations",
		// multipart/form-data, their model a form field
		"audio/transcriptions", "audio/translations", "images/edits", "images/variations"},
}

// geminiModelCalls are the methods of Gemini's models/{model}:{method} that call the model
// of the path.
var geminiModelCalls = []string{"generateContent", "streamGenerateContent", "countTokens", "embedContent", "batchEmbedContents"}

// isModelCall reports whether a pass-through request (method, path below pt's prefix) is
// a call of the model it names: a POST of one of the provider's model operations
// (passThroughModelCalls; Gemini's {version}/models/{model}:{method} of geminiModelCalls).
// Files, batches, fine-tuning jobs and the like are not, whatever model their body names.
func isModelCall(pt passThroughRoute, method, path string) bool {
	if method != http.MethodPost {
		return false
	}
	if pt.envelope == envelopeGemini {
		segs := strings.Split(path, "/")
		if len(segs) != 3 || segs[1] != "models" && segs[1] != "tunedModels" {
			return false
		}
		_, m, _ := strings.Cut(segs[2], ":")
		return slices.Contains(geminiModelCalls, m)
	}
	if pt.provider == "openai" {
		path = strings.TrimPrefix(path, "v1/")
	}
	return slices.Contains(passThroughModelCalls[pt.provider], path)
}

// passThroughEstimated are, per provider, the model operations (paths as in
// passThroughModelCalls) whose usage is estimated when their answer reports none: those
// that generate or embed text and are billed by its tokens. Counting tokens is free,
// moderations are free, and speech and images are not priced by tokens.
var passThroughEstimated = map[string][]string{
	"anthropic": {"v1/messages", "v1/complete"},
	"openai":    {"chat/completions", "completions", "responses", "embeddings"},
}

// geminiEstimated are the methods of Gemini's models/{model}:{method} whose usage is
// estimated when their answer reports none (see passThroughEstimated).
var geminiEstimated = []string{"generateContent", "streamGenerateContent", "embedContent", "batchEmbedContents"}

// estimatesUsage reports whether a pass-through request (method, path below pt's prefix)
// is a model call billed by the estimate of its usage when its answer reports none (see
// passThroughEstimated).
func estimatesUsage(pt passThroughRoute, method, path string) bool {
	if !isModelCall(pt, method, path) {
		return false
	}
	if pt.envelope == envelopeGemini {
		_, m, _ := strings.Cut(path[strings.LastIndexByte(path, '/')+1:], ":")
		return slices.Contains(geminiEstimated, m)
	}
	if pt.provider == "openai" {
		path = strings.TrimPrefix(path, "v1/")
	}
	return slices.Contains(passThroughEstimated[pt.provider], path)
}

// passThroughEmbeddings are, per provider, the model operations (paths as in
// passThroughModelCalls; Gemini's methods) that embed: priced at the catalogue's
// embedding prices, as the gateway's /v1/embeddings prices them.
var passThroughEmbeddings = map[string][]string{
	"openai": {"embeddings"},
	"gemini": {"embedContent", "batchEmbedContents"},
}

// isEmbeddingsCall reports whether a pass-through request (method, path below pt's
// prefix) is a model call that embeds (see passThroughEmbeddings).
func isEmbeddingsCall(pt passThroughRoute, method, path string) bool {
	if !isModelCall(pt, method, path) {
		return false
	}
	if pt.envelope == envelopeGemini {
		_, m, _ := strings.Cut(path[strings.LastIndexByte(path, '/')+1:], ":")
		return slices.Contains(passThroughEmbeddings["gemini"], m)
	}
	return slices.Contains(passThroughEmbeddings[pt.provider], strings.TrimPrefix(path, "v1/"))
}

// passThroughErrors are the failures a pass-through endpoint answers itself, in its
// provider's envelope; every other status is the provider's own, unchanged.
var passThroughErrors = map[int]string{
	400: "the provider's own answer (every status the provider answers comes back unchanged), a path that leaves the provider's API root, or a body (JSON or multipart form) naming model more than once",
	403: "Gemini's PERMISSION_DENIED: the key may not call the model the path names, or it is held to models and the request is not a call of a model (files, batches and the like)",
	404: "no provider of this name is configured here",
	401: "missing or invalid key, or a blocked key (LiteLLM's Authentication Error: Key is blocked); or (LiteLLM's key_model_access_denied) the key may not call the model the body names, or it is held to models and the request is not a call of a model (files, batches, fine-tuning and the like)",
	429: "the key's budget or token rate is spent",
	502: "the provider could not be reached, or its answer's body is not in the Content-Encoding (gzip, deflate) it is labelled with",
	503: "the provider has no credential configured (its API key variable), or its adapter cannot forward (Azure OpenAI, Vertex AI)",
}

// maxPassThroughFormBytes bounds a pass-through multipart/form-data body (an audio file of
// up to OpenAI's 25 MiB, image edits, file uploads); other bodies keep the server's
// Config.MaxBodyBytes.
const maxPassThroughFormBytes = maxImageEditFormBytes

// passThroughLimitHint says, in a 413, what bounds a pass-through body.
const passThroughLimitHint = "this route's own: a multipart/form-data upload up to 64 MiB, any other body serve --max-body-bytes"

// passThroughEndpoints registers LiteLLM's provider pass-through endpoints over g's
// providers (see handlePassThrough), for every method.
func (s *Server) passThroughEndpoints(g *completions.Gateway) {
	for _, pt := range passThroughRoutes {
		s.handleGateway(Route{Method: "POST", AnyMethod: true, Path: pt.prefix + "/{path...}",
			Summary: "LiteLLM's " + pt.provider + " pass-through: the request goes as it is to " + pt.provider +
				"'s own API with the server's credential and its answer comes back as it is (any method; " + pt.sdk +
				"); held to the key's models and budget and billed by the usage the answer reports",
			Tags: []string{"LiteLLM compatibility"}, Stream: true, ScopedKeys: true, Errors: passThroughErrors,
			MaxBodyBytes: max(s.cfg.MaxBodyBytes, maxPassThroughFormBytes), MaxBodyHint: passThroughLimitHint},
			g, completions.OperationPassThrough, func(w http.ResponseWriter, r *http.Request) error {
				return s.handlePassThrough(g, pt, w, r)
			})
	}
}

// handlePassThrough forwards r to pt's provider as it is — method, path below the prefix,
// query and body unchanged, headers without the caller's credentials and hop-by-hop ones —
// with the provider's configured credential, and relays its answer as it comes (status,
// headers and body, each read flushed to the client). The key is held to the model the
// request names and to its budget as a gateway request (completions.BeginPassThrough);
// the usage the answer reports is billed and the request recorded when it ends. A client
// that goes away cancels the upstream call.
func (s *Server) handlePassThrough(g *completions.Gateway, pt passThroughRoute, w http.ResponseWriter, r *http.Request) error {
	received := time.Now()
	reader := r.Body
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
		// Only an upload gets the route's larger bound.
		if limit := s.cfg.MaxBodyBytes; r.ContentLength > limit {
			return Errorf(http.StatusRequestEntityTooLarge, KindTooLarge, "request body of %d bytes exceeds the limit of %d bytes (serve --max-body-bytes; a multipart/form-data upload may be up to %d)", r.ContentLength, limit, maxPassThroughFormBytes)
		}
		reader = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	}
	body, err := io.ReadAll(reader)
	if err != nil {
		return fmt.Errorf("reading the request body: %w", err)
	}
	fpath := strings.TrimPrefix(r.URL.EscapedPath(), pt.prefix+"/")
	if err := providers.CheckForwardPath(fpath); err != nil {
		return Errorf(http.StatusBadRequest, KindBadRequest, "%s", err.Error())
	}
	if n := len(r.Header.Values("Content-Type")); n > 1 {
		// The provider may read the body by another of them (a form by another boundary)
		// than the one the model was checked by.
		return Errorf(http.StatusBadRequest, KindBadRequest, "Content-Type: the request names it %d times; name it once", n)
	}
	model, stream, err := passThroughAsk(pt, r.PathValue("path"), r.Header.Get("Content-Type"), body)
	if err != nil {
		return err
	}
	if !isModelCall(pt, r.Method, r.PathValue("path")) {
		// A model named elsewhere (a file list fetched with a body, a batch, a fine-tuning
		// job) is not the model called: the request names none, which a key held to
		// models may not forward.
		model = ""
	}
	// The headers' tags and the key's (the body is the provider's own: its fields are not read).
	tags, err := headerTags(r, nil)
	if err != nil {
		return err
	}
	scope, err := s.keyScope(withEndUserOf(r), received)
	if err != nil {
		return err
	}
	if model != "" || scope.Budget != nil {
		// A request naming no model costs nothing the gateway can count: the operator's
		// key forwards it whatever the proxy-wide account (which would refuse it as a
		// budget held to models does).
		scope = s.withProxyBudget(scope)
	}
	call, err := g.BeginPassThrough(r.Context(), scope, pt.provider, model, stream, tags...)
	if err != nil {
		return passThroughRefusal(err)
	}
	ctx := r.Context()
	// The accounting outlives a caller gone away: its usage is billed all the same.
	endCtx := context.WithoutCancel(ctx)
	freq := &providers.ForwardRequest{Method: r.Method, Path: fpath,
		RawQuery: withoutKeyParam(r.URL.RawQuery), Header: forwardHeaders(r.Header)}
	if len(body) > 0 || r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
		freq.Body = body
	}
	f := call.Forwarder()
	resp, err := f.Forward(ctx, freq)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		call.End(endCtx, completions.PassThroughUsage{}, 0, err)
		if ctx.Err() != nil {
			return err
		}
		return passThroughRefusal(err)
	}
	defer resp.Body.Close()
	if err := providers.OpenForwardedEncoding(resp); err != nil {
		// Nothing is handed on yet: a body labelled gzip that is not gzip is answered a 502
		// saying so (as a client decoding it itself would fail), not a status with an
		// empty body.
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
			call.End(endCtx, completions.PassThroughUsage{}, 0, err)
			return err
		}
		msg := fmt.Sprintf("provider %q answered %d but its body could not be read (%v); nothing of it was relayed", pt.provider, resp.StatusCode, err)
		if errors.Is(err, providers.ErrForwardEncoding) {
			msg = fmt.Sprintf("provider %q answered %d but %v; nothing of it was relayed", pt.provider, resp.StatusCode, err)
		}
		call.End(endCtx, completions.PassThroughUsage{}, 0, &providers.Error{Provider: pt.provider, Model: model, StatusCode: resp.StatusCode,
			Kind: providers.KindOverloaded, Message: msg, Err: err})
		return Errorf(http.StatusBadGateway, KindBadGateway, "%s", msg)
	}
	for k, vs := range resp.Header {
		if !slices.Contains(passThroughAnswerDropped, k) {
			w.Header()[k] = vs
		}
	}
	if id := resp.Header.Get("X-Request-Id"); id != "" {
		w.Header().Set(passThroughUpstreamRequestID, id)
	}
	w.WriteHeader(resp.StatusCode)
	// An encoding Forward did not decode (br, zstd): the bytes go as they came, with their
	// Content-Encoding, and their usage cannot be read.
	encoding := resp.Header.Get("Content-Encoding")
	encoded := encoding != "" && !strings.EqualFold(encoding, "identity")
	var meter *providers.UsageMeter
	if !encoded {
		var merr error
		meter, merr = providers.NewUsageMeter(providers.ForwardFormat(f), resp.Header.Get("Content-Type"))
		if merr != nil {
			s.log.WarnContext(ctx, "pass-through: the answer's usage cannot be read", "provider", pt.provider, "err", merr)
		}
	}
	var answer io.Reader = resp.Body
	media := passThroughMedia(pt, r.Method, r.PathValue("path"))
	var kept *cappedBuffer
	if media != "" && !encoded && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		// Transcriptions and images are billed by the audio's length or per image, which
		// the answer's body says (or lets estimate): it is kept to read them.
		kept = &cappedBuffer{limit: maxMediaAnswer}
		answer = io.TeeReader(resp.Body, kept)
	}
	ttft, err := relayAnswer(w, answer, meter, received)
	if err == nil && (resp.StatusCode < 200 || resp.StatusCode > 299) {
		err = &providers.Error{Provider: pt.provider, Model: model, StatusCode: resp.StatusCode,
			Kind: passThroughKind(resp.StatusCode), Message: fmt.Sprintf("the provider answered %d", resp.StatusCode)}
	}
	unbilled, answerFailed := false, false
	if err == nil && meter != nil {
		if f, early := meter.StreamFailure(); f != nil {
			// A stream that ended with an error event (Anthropic's; an OpenAI chunk's or a
			// Gemini error object) failed, though its status was 200. Before any content
			// (only Anthropic's message_start, which counted the prompt, say) it
			// answered nothing and is billed nothing, as the gateway's own routes bill a
			// stream failing before its first fragment: Anthropic gives such an event as what
			// a request answered with an error status gets (an overloaded_error is a 529),
			// which it does not bill, nor does LiteLLM. After content it is billed as a
			// stream cut short (the prompt and the answer so far). A Responses API
			// response.failed reporting usage is billed that usage, as OpenAI charges it.
			f.Provider, f.Model, f.StatusCode = pt.provider, model, resp.StatusCode
			f.Message = "the stream ended with an error event: " + f.Message
			err, unbilled = f, early && !meter.FailureBilled()
		} else if f := meter.AnswerFailure(); f != nil {
			// A 200 whose body is an error object ({"error": …}, as some compatible
			// servers answer a failure) answered nothing: an upstream error, billed
			// nothing (a failed Responses API response reporting usage is billed it).
			f.Provider, f.Model, f.StatusCode = pt.provider, model, resp.StatusCode
			f.Message = fmt.Sprintf("the provider answered %d with an error: %s", resp.StatusCode, f.Message)
			err, unbilled, answerFailed = f, !meter.FailureBilled(), true
		}
	}
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	var pu completions.PassThroughUsage
	if meter != nil && !unbilled {
		pu.Usage, _, pu.Reported = meter.Usage()
	}
	if pu.Reported && !meter.Final() && resp.StatusCode >= 200 && resp.StatusCode <= 299 && estimatesUsage(pt, r.Method, r.PathValue("path")) {
		// A stream cut before its last usage (Anthropic's message_delta, Gemini's last
		// event): its first events reported the prompt, not the completion relayed since.
		if n := meter.AnswerTokens(call.Model()); n > pu.Usage.CompletionTokens {
			pu.Usage.CompletionTokens, pu.Estimated = n, true
		}
	}
	// An answer that ended before any of its body (ttft 0) is not estimated: unbilled, as
	// the gateway's routes bill no attempt that failed before its first fragment.
	if !pu.Reported && !unbilled && ttft > 0 && resp.StatusCode >= 200 && resp.StatusCode <= 299 && estimatesUsage(pt, r.Method, r.PathValue("path")) {
		// The answer reported no usage (an OpenAI stream without include_usage, a JSON
		// answer too large to read): bill an estimate, as LiteLLM works it out.
		var whole bool
		pu.Usage, whole = call.EstimateUsage(body, meter)
		pu.Estimated = true
		switch {
		case encoded:
			s.log.WarnContext(ctx, "pass-through: the answer's encoding cannot be decoded to read its usage; billed the prompt's estimate only",
				"provider", pt.provider, "model", call.Model(), "prompt_tokens", pu.Usage.PromptTokens, "content_encoding", encoding)
		case !whole:
			s.log.WarnContext(ctx, "pass-through: the answer was too large to read its usage; billed the prompt's estimate only",
				"provider", pt.provider, "model", call.Model(), "prompt_tokens", pu.Usage.PromptTokens, "limit_bytes", providers.MaxMeteredBody)
		}
	}
	if kept != nil && err == nil && ttft > 0 {
		// (An answer that ended before any of its body stays unbilled, as above.)
		mediaUsage(&pu, media, r.Header.Get("Content-Type"), body, kept.Bytes(), kept.Over())
	}
	pu.Embeddings = isEmbeddingsCall(pt, r.Method, r.PathValue("path"))
	call.End(endCtx, pu, ttft, err)
	switch {
	case answerFailed:
		s.log.WarnContext(ctx, "pass-through: the provider's answer is an error", "request_id", requestID(ctx), "err", err)
	case err != nil && ctx.Err() == nil && (resp.StatusCode >= 200 && resp.StatusCode <= 299):
		s.logStreamEnd(r, "pass-through", err)
	}
	return nil
}

// relayAnswer copies body to w as it comes, each read flushed (server-sent events reach
// the client event by event), and into meter (nil: none). It returns how long the first
// bytes took from received (0: none came) and why the copy stopped before body's end (a
// read's failure, or the client gone); nil when it reached the end.
func relayAnswer(w http.ResponseWriter, body io.Reader, meter *providers.UsageMeter, received time.Time) (time.Duration, error) {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	var ttft time.Duration
	for {
		n, rerr := body.Read(buf)
		if n > 0 {
			if ttft == 0 {
				ttft = max(time.Since(received), time.Nanosecond)
			}
			if meter != nil {
				meter.Write(buf[:n])
			}
			if _, err := w.Write(buf[:n]); err != nil {
				return ttft, fmt.Errorf("relaying the answer: %w", err)
			}
			if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
				return ttft, fmt.Errorf("relaying the answer: %w", err)
			}
		}
		if rerr == io.EOF {
			return ttft, nil
		}
		if rerr != nil {
			return ttft, fmt.Errorf("reading the provider's answer: %w", rerr)
		}
	}
}

// passThroughKind classifies an upstream's error status for the request's record.
func passThroughKind(status int) providers.ErrorKind {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return providers.KindAuth
	case status == http.StatusTooManyRequests:
		return providers.KindRateLimited
	case status >= 500:
		return providers.KindOverloaded
	}
	return providers.KindBadRequest
}

// passThroughRefusal is the server's answer to err, a refusal of a pass-through request
// before anything was relayed: a provider not configured here 404 (unknown) or 503, the
// provider unreachable 502, the gateway's refusals (model not allowed, budget spent,
// blocked) as its surfaces answer them.
func passThroughRefusal(err error) error {
	var ue *completions.PassThroughUnavailableError
	if errors.As(err, &ue) {
		if ue.Unknown {
			return NotFound("%s", ue.Error())
		}
		return Errorf(http.StatusServiceUnavailable, KindUnavailable, "%s", ue.Error())
	}
	var pe *providers.Error
	if errors.As(err, &pe) {
		if errors.Is(err, providers.ErrNotConfigured) {
			return Errorf(http.StatusServiceUnavailable, KindUnavailable, "provider %q is not available for pass-through: %s", pe.Provider, pe.Message)
		}
		if pe.Kind == providers.KindBadRequest {
			return Errorf(http.StatusBadRequest, KindBadRequest, "%s", pe.Message)
		}
		return Errorf(http.StatusBadGateway, KindBadGateway, "provider %q could not be reached: %s", pe.Provider, pe.Message)
	}
	return err
}
