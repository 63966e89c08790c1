package providers

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
)

// VertexAnthropicVersion is the anthropic_version Vertex AI requires in the body of a
// Claude request (where Anthropic's API takes the anthropic-version header).
const VertexAnthropicVersion = "vertex-2023-10-16"

// newVertexClaude returns the Anthropic adapter that serves Claude for v: Anthropic's
// Messages bodies, answers and streams, sent to
//
//	POST {root}/v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:rawPredict
//	POST …/{model}:streamRawPredict
//
// without the model in the body, with anthropic_version vertex-2023-10-16 and the
// anthropic-beta values both as the header and as the body's anthropic_beta (as LiteLLM
// sends them), authenticated with v's OAuth 2.0 access token.
func newVertexClaude(v *Vertex, cfg Config, base string) *Anthropic {
	a := NewAnthropic(cfg)
	a.ep.missing = v.ep.missing // what Vertex lacks, Claude on Vertex lacks too
	a.host = &anthropicHost{
		url: func(model string, stream bool) string {
			method := ":rawPredict"
			if stream {
				method = ":streamRawPredict"
			}
			return operationURL(base, "/models/"+url.PathEscape(model)+method)
		},
		auth:        v.setAuth,
		version:     VertexAnthropicVersion,
		betasInBody: true,
		parseError:  parseVertexClaudeError,
	}
	return a
}

// isVertexClaude reports whether model is one of Anthropic's on Vertex AI
// ("claude-sonnet-4@20250514", "claude-opus-4-1@20250805", "claude-3-5-sonnet-v2@20241022").
func isVertexClaude(model string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimPrefix(model, "models/")), "claude")
}

// parseVertexClaudeError reads the error bodies of Claude on Vertex AI, which come in
// Anthropic's shape ({"type": "error", "error": {"type", "message"}}: Claude's own
// refusals, overloaded_error) or in Google's ({"error": {"code", "message", "status"}}, also
// as a one-element array: Vertex's quota, permission and routing errors).
func parseVertexClaudeError(body []byte) (code, msg string) {
	if code, msg = parseAnthropicError(body); code != "" {
		return code, msg
	}
	if code, msg = parseGeminiError(body); code != "" || msg != "" {
		return code, msg
	}
	var list []json.RawMessage
	if json.Unmarshal(body, &list) == nil && len(list) > 0 {
		return parseGeminiError(list[0])
	}
	return parseAnthropicError(body)
}

// claudeModel returns the Claude adapter for model, or nil for a model of Google's.
func (v *Vertex) claudeModel(model string) *Anthropic {
	if isVertexClaude(model) {
		return v.claude
	}
	return nil
}

// Complete implements Provider: Claude models through Anthropic's Messages API on Vertex
// AI (rawPredict), the others through Gemini's generateContent.
func (v *Vertex) Complete(ctx context.Context, req *Request) (*Response, error) {
	if a := v.claudeModel(req.Model); a != nil {
		return a.Complete(ctx, req)
	}
	return v.Gemini.Complete(ctx, req)
}

// Stream implements Provider: Claude models through streamRawPredict (Anthropic's SSE
// events), the others through Gemini's streamGenerateContent.
func (v *Vertex) Stream(ctx context.Context, req *Request) (Stream, error) {
	if a := v.claudeModel(req.Model); a != nil {
		return a.Stream(ctx, req)
	}
	return v.Gemini.Stream(ctx, req)
}

// SupportsSearch reports whether model takes a web search: Claude's web_search tool for the
// Claude models that have it, Google Search grounding for Gemini.
func (v *Vertex) SupportsSearch(model string) bool {
	if a := v.claudeModel(model); a != nil {
		return a.SupportsSearch(model)
	}
	return v.Gemini.SupportsSearch(model)
}

// BaseModel implements BaseModeler for the Claude models: a call on an entry of another
// name (a second vertex_ai entry for Claude's region) is priced by the catalogue's
// vertex_ai/claude-… entries, as on vertex_ai itself.
func (v *Vertex) BaseModel(model string) (string, bool) {
	if isVertexClaude(model) {
		return "vertex_ai/" + model, true
	}
	return "", false
}
