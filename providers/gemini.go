package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// DefaultGeminiBaseURL is the Gemini API host used when Config.BaseURL is empty.
const DefaultGeminiBaseURL = "https://generativelanguage.googleapis.com"

// Gemini speaks the Google Gemini API (models/{model}:generateContent and
// :streamGenerateContent?alt=sse, key in the x-goog-api-key header). Thought parts are not
// returned as text but their tokens are billed as completion (reasoning) tokens. Safety,
// recitation and prompt blocks fail with KindContentFilter. Finish reasons are normalised:
// STOP → "stop", MAX_TOKENS → "length", others lower-cased.
type Gemini struct {
	ep      endpoint
	baseURL string // includes the API version, e.g. ".../v1beta"
}

// NewGemini returns a Gemini adapter. A BaseURL without a version path gets "/v1beta".
func NewGemini(cfg Config) *Gemini {
	if cfg.Name == "" {
		cfg.Name = "gemini"
	}
	if cfg.KeyEnv == "" {
		cfg.KeyEnv = "GEMINI_API_KEY"
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultGeminiBaseURL
	}
	if !strings.HasSuffix(base, "/v1beta") && !strings.HasSuffix(base, "/v1") && !strings.HasSuffix(base, "/v1alpha") {
		base += "/v1beta"
	}
	return &Gemini{ep: newEndpoint(cfg), baseURL: base}
}

// Name returns the provider prefix.
func (g *Gemini) Name() string { return g.ep.cfg.Name }

// Configured reports whether an API key is set.
func (g *Gemini) Configured() bool { return g.ep.cfg.APIKey != "" || g.ep.cfg.KeyOptional }

// SupportsSearch reports whether model takes the google_search tool (Gemini 2 and later).
func (g *Gemini) SupportsSearch(model string) bool {
	m := strings.TrimPrefix(model, "models/")
	return strings.HasPrefix(m, "gemini-") && !strings.HasPrefix(m, "gemini-1.") && !strings.HasPrefix(m, "gemini-pro")
}

type geminiPart struct {
	Text    string `json:"text,omitempty"`
	Thought bool   `json:"thought,omitempty"`
}

type geminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []geminiPart `json:"parts"`
}

type geminiGenerationConfig struct {
	Temperature     *float64 `json:"temperature,omitempty"`
	TopP            *float64 `json:"topP,omitempty"`
	MaxOutputTokens int      `json:"maxOutputTokens,omitempty"`
	StopSequences   []string `json:"stopSequences,omitempty"`
}

type geminiRequest struct {
	Contents          []geminiContent         `json:"contents"`
	SystemInstruction *geminiContent          `json:"systemInstruction,omitempty"`
	GenerationConfig  *geminiGenerationConfig `json:"generationConfig,omitempty"`
	Tools             []map[string]any        `json:"tools,omitempty"`
}

func (g *Gemini) body(req *Request) geminiRequest {
	var b geminiRequest
	var system []geminiPart
	for _, m := range req.Messages {
		switch m.Role {
		case "system", "developer":
			system = append(system, geminiPart{Text: m.Content})
		case "assistant", "model":
			b.Contents = append(b.Contents, geminiContent{Role: "model", Parts: []geminiPart{{Text: m.Content}}})
		default:
			b.Contents = append(b.Contents, geminiContent{Role: "user", Parts: []geminiPart{{Text: m.Content}}})
		}
	}
	if len(system) > 0 {
		b.SystemInstruction = &geminiContent{Parts: system}
	}
	if req.Temperature != nil || req.MaxTokens > 0 || req.TopP != nil || len(req.Stop) > 0 {
		b.GenerationConfig = &geminiGenerationConfig{Temperature: req.Temperature, TopP: req.TopP,
			MaxOutputTokens: req.MaxTokens, StopSequences: req.Stop}
	}
	if req.Search {
		b.Tools = []map[string]any{{"google_search": map[string]any{}}}
	}
	return b
}

func (g *Gemini) start(ctx context.Context, req *Request, stream bool) (*call, error) {
	if err := g.ep.checkKey(req.Model); err != nil {
		return nil, err
	}
	if req.Search && !g.SupportsSearch(req.Model) {
		return nil, g.ep.errorf(req.Model, KindBadRequest, "model %s/%s does not support search", g.Name(), req.Model)
	}
	model := strings.TrimPrefix(req.Model, "models/")
	u := g.baseURL + "/models/" + url.PathEscape(model)
	if stream {
		u += ":streamGenerateContent?alt=sse"
	} else {
		u += ":generateContent"
	}
	h := http.Header{}
	h.Set("X-Goog-Api-Key", g.ep.cfg.APIKey)
	if stream {
		h.Set("Accept", "text/event-stream")
	}
	return g.ep.send(ctx, req.Model, u, h, g.body(req), parseGeminiError)
}

type geminiErrorBody struct {
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Details []struct {
			Reason string `json:"reason"`
		} `json:"details"`
	} `json:"error"`
}

// parseGeminiError returns the ErrorInfo reason when present (e.g. API_KEY_INVALID, which
// Gemini sends with HTTP 400), else the status (e.g. RESOURCE_EXHAUSTED).
func parseGeminiError(body []byte) (code, msg string) {
	var e geminiErrorBody
	if json.Unmarshal(body, &e) != nil || e.Error == nil {
		return "", ""
	}
	code = e.Error.Status
	for _, d := range e.Error.Details {
		if d.Reason != "" {
			code = d.Reason
			break
		}
	}
	return code, e.Error.Message
}

// geminiBodyError classifies an error object sent with HTTP 200 or mid-stream.
func geminiBodyError(body []byte) (ErrorKind, string, bool) {
	var e geminiErrorBody
	if json.Unmarshal(body, &e) != nil || e.Error == nil {
		return 0, "", false
	}
	code, msg := parseGeminiError(body)
	k := classifyStatus(e.Error.Code, code, msg)
	if k == KindBadRequest || k == KindUnknown {
		// e.g. 499 CANCELLED after some chunks: the answer is incomplete.
		k = KindStreamBroken
	}
	return k, msg, true
}

type geminiUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
}

func (u geminiUsage) usage() Usage {
	return Usage{
		PromptTokens:     u.PromptTokenCount,
		CompletionTokens: u.CandidatesTokenCount + u.ThoughtsTokenCount,
		ReasoningTokens:  u.ThoughtsTokenCount,
		CachedTokens:     u.CachedContentTokenCount,
	}
}

type geminiResponse struct {
	Candidates []struct {
		Content      *geminiContent `json:"content"`
		FinishReason string         `json:"finishReason"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *geminiUsage `json:"usageMetadata"`
	ModelVersion  string       `json:"modelVersion"`
}

// blocked reports a content-filter outcome of a response or chunk.
func (r *geminiResponse) blocked() (string, bool) {
	if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
		return "prompt blocked: " + r.PromptFeedback.BlockReason, true
	}
	for _, c := range r.Candidates {
		switch c.FinishReason {
		case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
			return "response blocked: finishReason " + c.FinishReason, true
		}
	}
	return "", false
}

func (r *geminiResponse) text() string {
	var b strings.Builder
	if len(r.Candidates) > 0 && r.Candidates[0].Content != nil {
		for _, p := range r.Candidates[0].Content.Parts {
			if !p.Thought {
				b.WriteString(p.Text)
			}
		}
	}
	return b.String()
}

func (r *geminiResponse) finish() string {
	if len(r.Candidates) == 0 {
		return ""
	}
	return r.Candidates[0].FinishReason
}

func geminiFinish(s string) string {
	switch s {
	case "STOP":
		return "stop"
	case "MAX_TOKENS":
		return "length"
	}
	return strings.ToLower(s)
}

// Complete calls generateContent.
func (g *Gemini) Complete(ctx context.Context, req *Request) (*Response, error) {
	c, err := g.start(ctx, req, false)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	raw, err := c.readAll(maxResponseBody)
	if err != nil {
		return nil, err
	}
	if kind, msg, ok := geminiBodyError(raw); ok {
		return nil, c.failure(kind, msg, nil)
	}
	var r geminiResponse
	if err := decodeUpstream(raw, &r); err != nil {
		return nil, c.failure(KindStreamBroken, "malformed response body", err)
	}
	if msg, ok := r.blocked(); ok {
		return nil, c.failure(KindContentFilter, msg, nil)
	}
	if len(r.Candidates) == 0 {
		return nil, c.failure(KindStreamBroken, "response has no candidates", nil)
	}
	resp := &Response{Text: r.text(), FinishReason: geminiFinish(r.finish()), Model: r.ModelVersion}
	if r.UsageMetadata != nil {
		resp.Usage = r.UsageMetadata.usage()
	}
	return resp, nil
}

// Stream calls streamGenerateContent?alt=sse. Usage comes from the last chunk and is
// delivered, with the finish reason, in a final chunk just before io.EOF.
func (g *Gemini) Stream(ctx context.Context, req *Request) (Stream, error) {
	c, err := g.start(ctx, req, true)
	if err != nil {
		return nil, err
	}
	return &geminiStream{streamState: newStreamState(c)}, nil
}

type geminiStream struct {
	streamState
	usage  *geminiUsage
	finish string
}

// Recv returns the next text chunk; when the body ends after a chunk with a finishReason
// it returns a final chunk with usage and then io.EOF.
func (s *geminiStream) Recv() (Chunk, error) {
	if s.err != nil {
		return Chunk{}, s.err
	}
	for {
		ev, err := s.next()
		if err == io.EOF {
			if s.finish == "" {
				return Chunk{}, s.fail(KindStreamBroken, "stream ended without a finishReason", nil)
			}
			s.stop(io.EOF)
			out := Chunk{FinishReason: geminiFinish(s.finish)}
			if s.usage != nil {
				u := s.usage.usage()
				out.Usage = &u
			}
			return out, nil
		}
		if err != nil {
			return Chunk{}, err
		}
		data := bytes.TrimSpace(ev.data)
		if kind, msg, ok := geminiBodyError(data); ok {
			return Chunk{}, s.fail(kind, "error mid-stream: "+msg, nil)
		}
		if ev.raw {
			return Chunk{}, s.fail(KindStreamBroken, "malformed stream: non-SSE data", nil)
		}
		var r geminiResponse
		if err := decodeUpstream(data, &r); err != nil {
			return Chunk{}, s.fail(KindStreamBroken, "malformed stream chunk", err)
		}
		if r.Candidates == nil && r.UsageMetadata == nil && r.PromptFeedback == nil {
			return Chunk{}, s.fail(KindStreamBroken, "malformed stream chunk: no candidates, usage or feedback", nil)
		}
		if msg, ok := r.blocked(); ok {
			return Chunk{}, s.fail(KindContentFilter, msg, nil)
		}
		if r.UsageMetadata != nil {
			s.usage = r.UsageMetadata
		}
		if f := r.finish(); f != "" {
			s.finish = f
		}
		if t := r.text(); t != "" {
			return Chunk{Text: t}, nil
		}
	}
}
