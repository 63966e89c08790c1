package providers

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultGeminiBaseURL is the Gemini API host used when Config.BaseURL is empty.
const DefaultGeminiBaseURL = "https://generativelanguage.googleapis.com"

// Gemini speaks the Google Gemini API (models/{model}:generateContent and
// :streamGenerateContent?alt=sse, key in the x-goog-api-key header). Safety, recitation and
// prompt blocks fail with KindContentFilter. Finish reasons are normalised:
// STOP → "stop" ("tool_calls" when the answer holds function calls), MAX_TOKENS →
// "length", others lower-cased.
//
// Tools map to tools.functionDeclarations (parameters converted to Gemini's OpenAPI-subset
// schema dialect; Check refuses what it cannot express) and tool_choice to toolConfig.functionCallingConfig: auto → AUTO,
// none → NONE, required → ANY, a named function → ANY with allowedFunctionNames;
// parallel_tool_calls (and Request.SingleToolCall) has no Gemini setting and is not sent,
// as LiteLLM's Gemini adapter sends none (it refuses false with several tools only when its
// drop_params is off, which Switchyard does not follow). functionCall parts become tool
// calls; Gemini has no call ids, so each call gets one derived from its name, arguments and
// position (the same streamed or not), and a "tool" message is sent back as a
// functionResponse named after the call it answers (found by id among the request's
// assistant messages), consecutive results in one user turn; a result that is not a JSON
// object is wrapped as {"result": …}. Models that validate thought signatures (Gemini 3)
// get Google's documented placeholder on the first function call of a past model turn
// when the history's call carries no signature of its own. Each functionCall part's
// thoughtSignature comes back as ToolCall.ThoughtSignature (ToolCallDelta.ThoughtSignature
// streamed) and goes back, unchanged, on the functionCall part of the call that carried
// it. Streamed function calls arrive whole, as one fragment with id, name, arguments and
// signature.
//
// Structured output: responseMimeType application/json, with responseSchema (the JSON
// Schema converted) for json_schema. Gemini refuses that beside functions, so a json_schema
// with tools is asked, as of Claude, as one more function whose arguments are the answer,
// with functionCallingConfig ANY (a function or the answer; the answer alone with
// tool_choice none): its call comes back as the text. A schema the dialect cannot express
// is refused before any call (see Check).
//
// Thinking: Request.Thinking becomes generationConfig.thinkingConfig with includeThoughts
// (see geminiThinking): a thinkingBudget for Gemini 2.5 (Budget clamped to the model's
// range), a thinkingLevel for Gemini 3 and later; older models get none. Thought parts (the
// thought summaries includeThoughts asks for) are returned as reasoning, never as text: a
// whole answer's consecutive thought parts as one ReasoningBlock of Response.Reasoning, a
// stream's as Chunk.Reasoning fragments (of block 0, or a later block once thoughts come
// back after text: reasoningBlocks), each before the text or calls that came in the same
// event. Their tokens are billed as completion (reasoning) tokens. Thought
// signatures are not reasoning signatures (ReasoningBlock.Signature is Anthropic's) and are
// not returned; Message.Reasoning of the history is never sent, as Gemini takes no
// reasoning back.
type Gemini struct {
	ep      endpoint
	baseURL string // includes the API version, e.g. ".../v1beta"
	// tokens is set when the adapter calls Vertex AI (see Vertex): its OAuth 2.0 access
	// tokens are sent instead of the API key.
	tokens *googleTokens
}

// setAuth sets the request's credentials: the API key, or a Vertex AI access token
// (fetched with ctx when the cached one is stale).
func (g *Gemini) setAuth(ctx context.Context, model string, h http.Header) error {
	if g.tokens == nil {
		h.Set("X-Goog-Api-Key", g.ep.cfg.APIKey)
		return nil
	}
	tok, err := g.tokens.token(ctx)
	if err != nil {
		return g.tokenFailure(ctx, model, err)
	}
	h.Set("Authorization", "Bearer "+tok)
	return nil
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
	base = withBasePath(base, func(path string) string { // also before a ?key= of a gateway
		path = strings.TrimRight(path, "/")
		if !strings.HasSuffix(path, "/v1beta") && !strings.HasSuffix(path, "/v1") && !strings.HasSuffix(path, "/v1alpha") {
			path += "/v1beta"
		}
		return path
	})
	return &Gemini{ep: newEndpoint(cfg), baseURL: base}
}

// Name returns the provider prefix.
func (g *Gemini) Name() string { return g.ep.cfg.Name }

// BaseURL returns the endpoint root requests go to (with the API version, ".../v1beta").
func (g *Gemini) BaseURL() string { return g.baseURL }

// Configured reports whether an API key is set.
func (g *Gemini) Configured() bool {
	return g.ep.missing == "" && (g.ep.cfg.APIKey != "" || g.ep.cfg.KeyOptional)
}

// SupportsSearch reports whether model takes the google_search tool (Gemini 2 and later).
func (g *Gemini) SupportsSearch(model string) bool {
	m := strings.TrimPrefix(model, "models/")
	return strings.HasPrefix(m, "gemini-") && !strings.HasPrefix(m, "gemini-1.") && !strings.HasPrefix(m, "gemini-pro")
}

type geminiPart struct {
	Text             string                  `json:"text,omitempty"`
	InlineData       *geminiBlob             `json:"inlineData,omitempty"`
	FileData         *geminiFileData         `json:"fileData,omitempty"`
	Thought          bool                    `json:"thought,omitempty"`
	FunctionCall     *geminiFunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *geminiFunctionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string                  `json:"thoughtSignature,omitempty"`
	// ExecutableCode and CodeExecutionResult are the code execution tool's parts.
	ExecutableCode      *geminiExecutableCode      `json:"executableCode,omitempty"`
	CodeExecutionResult *geminiCodeExecutionResult `json:"codeExecutionResult,omitempty"`
}

// geminiExecutableCode is code the model ran with the code execution tool.
type geminiExecutableCode struct {
	Language string `json:"language"`
	Code     string `json:"code"`
}

// geminiCodeExecutionResult is the outcome and output of a geminiExecutableCode.
type geminiCodeExecutionResult struct {
	Outcome string `json:"outcome"`
	Output  string `json:"output,omitempty"`
}

// rendered is a code execution part as the answer's text shows it: a Markdown code block
// (the code in its language, the output as plain text), on lines of its own.
func (p *geminiPart) rendered() string {
	if c := p.ExecutableCode; c != nil {
		return "\n```" + strings.ToLower(c.Language) + "\n" + c.Code + "\n```\n"
	}
	if r := p.CodeExecutionResult; r != nil {
		return "\n```\n" + r.Output + "\n```\n"
	}
	return p.Text
}

// geminiBlob is an inline image: base64 data and its type.
type geminiBlob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

// geminiFileData is an image Gemini fetches from a URL.
type geminiFileData struct {
	MimeType string `json:"mimeType"`
	FileURI  string `json:"fileUri"`
}

// geminiParts is a user turn's text, images, documents and recordings as parts. An image URL whose type neither
// its extension nor anything else tells is refused: Gemini's fileData needs the type.
func (g *Gemini) geminiParts(i int, parts []Part) ([]geminiPart, error) {
	out := make([]geminiPart, 0, len(parts))
	for j, p := range parts {
		if f := p.File; f != nil {
			out = append(out, geminiMedia(f.URL, FileMediaType))
			continue
		}
		if a := p.Audio; a != nil {
			out = append(out, geminiPart{InlineData: &geminiBlob{MimeType: AudioMediaType(a.Format), Data: a.Data}})
			continue
		}
		img := p.Image
		if img == nil {
			if p.Text != "" {
				out = append(out, geminiPart{Text: p.Text})
			}
			continue
		}
		mt := ImageMediaType(*img)
		if _, _, ok := ParseDataURL(img.URL); !ok && mt == "" {
			return nil, &UnsupportedError{Provider: g.Name(), Field: fmt.Sprintf("messages[%d].content[%d].image_url", i, j),
				Reason: "Gemini must be told an image URL's type: use a URL ending in .png, .jpg, .jpeg, .gif or .webp, give the type (chat's image_url.format), or send the image as a base64 data URL"}
		}
		out = append(out, geminiMedia(img.URL, mt))
	}
	return out, nil
}

// geminiMedia is the part of an image or document at url: inline data (of mediaType) for
// a data URL, else file data Gemini fetches.
func geminiMedia(url, mediaType string) geminiPart {
	if _, data, ok := ParseDataURL(url); ok {
		return geminiPart{InlineData: &geminiBlob{MimeType: mediaType, Data: data}}
	}
	return geminiPart{FileData: &geminiFileData{MimeType: mediaType, FileURI: url}}
}

type geminiFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type geminiFunctionResponse struct {
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

type geminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []geminiPart `json:"parts"`
}

type geminiGenerationConfig struct {
	Temperature      *float64       `json:"temperature,omitempty"`
	TopP             *float64       `json:"topP,omitempty"`
	TopK             *int           `json:"topK,omitempty"`
	MaxOutputTokens  int            `json:"maxOutputTokens,omitempty"`
	StopSequences    []string       `json:"stopSequences,omitempty"`
	ResponseMimeType string         `json:"responseMimeType,omitempty"`
	ResponseSchema   map[string]any `json:"responseSchema,omitempty"`
	Seed             *int64         `json:"seed,omitempty"`
	PresencePenalty  *float64       `json:"presencePenalty,omitempty"`
	FrequencyPenalty *float64       `json:"frequencyPenalty,omitempty"`
	// ThinkingConfig is set only for models that think (see geminiThinking).
	ThinkingConfig *geminiThinkingConfig `json:"thinkingConfig,omitempty"`
	// ResponseLogprobs and Logprobs ask for the answer's log probabilities and that many
	// top candidates per step (Request.Logprobs, Request.TopLogprobs).
	ResponseLogprobs bool `json:"responseLogprobs,omitempty"`
	Logprobs         *int `json:"logprobs,omitempty"`
}

// geminiThinkingConfig asks a thinking model for its thought summaries (includeThoughts)
// and says how much to think: a token budget (Gemini 2.5) or a level (Gemini 3).
type geminiThinkingConfig struct {
	IncludeThoughts bool   `json:"includeThoughts"`
	ThinkingBudget  int    `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
}

// geminiThinking is the thinkingConfig that carries t to model, nil when t is nil or the
// model does not think (Gemini 1.5 and 2.0, Gemma), so those requests go out as before.
// Gemini 2.5 takes a budget, clamped to a range each model takes (Pro 128–32,768, Flash
// and Flash-Lite 512–24,576), so a large effort cannot be refused as out of range; Gemini 3
// and later take a level, "low" or "high", instead. Thoughts count against
// maxOutputTokens, so with a maxTokens the budget is at most half of it (the model's
// minimum at least): a budget beyond it would end in MAX_TOKENS with no answer.
func geminiThinking(model string, t *Thinking, maxTokens int) *geminiThinkingConfig {
	if t == nil {
		return nil
	}
	m := strings.TrimPrefix(model, "models/")
	if strings.HasPrefix(m, "gemini-2.5") {
		lo, hi := 512, 24576
		if strings.Contains(m, "pro") {
			lo, hi = 128, 32768
		}
		if maxTokens > 0 {
			hi = max(min(hi, maxTokens/2), lo)
		}
		return &geminiThinkingConfig{IncludeThoughts: true, ThinkingBudget: t.Budget(lo, hi)}
	}
	if geminiMajor(m) >= 3 {
		level := "high"
		if e := t.effort(); e == "minimal" || e == "low" {
			level = "low"
		}
		return &geminiThinkingConfig{IncludeThoughts: true, ThinkingLevel: level}
	}
	return nil
}

// geminiSearchWithJSON reports whether model answers in a JSON format (responseMimeType
// application/json, with or without a responseSchema) while grounding on Google Search:
// Gemini 3 and later do ("Gemini 3 lets you combine Structured Outputs with built-in tools,
// including Grounding with Google Search", Gemini's structured output guide); Gemini 2.x
// refuses the request, as it refuses a JSON format beside code execution or URL context.
func geminiSearchWithJSON(model string) bool {
	return geminiMajor(strings.TrimPrefix(model, "models/")) >= 3
}

// geminiBuiltinToolNames names the code execution and URL context tools req asks for, as
// a refusal of them says which.
func geminiBuiltinToolNames(req *Request) string {
	switch {
	case req.CodeExecution && req.URLContext:
		return "code execution and URL context"
	case req.CodeExecution:
		return "code execution"
	default:
		return "URL context"
	}
}

// geminiMajor is the major version of a "gemini-N…" model name, 0 for names without one
// (gemini-pro, gemini-exp-…, gemma-…), so newer generations are recognised unlisted.
func geminiMajor(m string) int {
	rest, ok := strings.CutPrefix(m, "gemini-")
	if !ok {
		return 0
	}
	n := 0
	for i := 0; i < len(rest) && '0' <= rest[i] && rest[i] <= '9' && n < 1000; i++ {
		n = n*10 + int(rest[i]-'0')
	}
	return n
}

type geminiFunctionDeclaration struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
}

type geminiTool struct {
	FunctionDeclarations []geminiFunctionDeclaration `json:"functionDeclarations,omitempty"`
	GoogleSearch         *struct{}                   `json:"google_search,omitempty"`
	CodeExecution        *struct{}                   `json:"codeExecution,omitempty"`
	URLContext           *struct{}                   `json:"urlContext,omitempty"`
}

// SafetySetting is one of Gemini's safetySettings: a harm category (HARM_CATEGORY_…) and
// the threshold at which it blocks (BLOCK_NONE, BLOCK_ONLY_HIGH, …, OFF); Method
// (SEVERITY or PROBABILITY) is Vertex AI's, empty for the default; Google AI Studio, which has
// none, refuses a setting with one before any call (UnsupportedError on its method).
type SafetySetting struct {
	Category  string `json:"category"`
	Threshold string `json:"threshold"`
	Method    string `json:"method,omitempty"`
}

// SupportsBuiltinTools reports whether model runs Gemini's code execution and URL context
// tools (Gemini 2 and later).
func (g *Gemini) SupportsBuiltinTools(model string) bool { return g.SupportsSearch(model) }

type geminiToolConfig struct {
	FunctionCallingConfig struct {
		Mode                 string   `json:"mode"`
		AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
	} `json:"functionCallingConfig"`
}

type geminiRequest struct {
	Contents          []geminiContent         `json:"contents"`
	SystemInstruction *geminiContent          `json:"systemInstruction,omitempty"`
	GenerationConfig  *geminiGenerationConfig `json:"generationConfig,omitempty"`
	Tools             []geminiTool            `json:"tools,omitempty"`
	ToolConfig        *geminiToolConfig       `json:"toolConfig,omitempty"`
	SafetySettings    []SafetySetting         `json:"safetySettings,omitempty"`
}

// geminiSkipSignature is the thoughtSignature Google documents for function calls whose
// signature is not available (history written by another model, or relayed through an
// API without signatures); Gemini 3 refuses a function call in the history without one.
const geminiSkipSignature = "skip_thought_signature_validator"

// needsSignature reports whether model validates thought signatures of past function
// calls (Gemini 3 and later).
func needsSignature(model string) bool {
	m := strings.TrimPrefix(model, "models/")
	return strings.HasPrefix(m, "gemini-") && !strings.HasPrefix(m, "gemini-1") && !strings.HasPrefix(m, "gemini-2") &&
		!strings.HasPrefix(m, "gemini-pro") && !strings.HasPrefix(m, "gemini-exp")
}

func (g *Gemini) body(req *Request) (geminiRequest, error) {
	var b geminiRequest
	var system []geminiPart
	names := map[string]string{} // tool call id -> function name
	for i := range req.Messages {
		m := &req.Messages[i]
		switch m.Role {
		case "system", "developer":
			system = append(system, geminiPart{Text: m.Content})
		case "assistant", "model":
			if strings.TrimSpace(m.Content) == "" && len(m.ToolCalls) == 0 {
				continue // an empty answer sent back: Gemini refuses a turn without parts
			}
			parts := make([]geminiPart, 0, 1+len(m.ToolCalls))
			if m.Content != "" || len(m.ToolCalls) == 0 {
				parts = append(parts, geminiPart{Text: m.Content})
			}
			for j, c := range m.ToolCalls {
				names[c.ID] = c.Name
				p := geminiPart{FunctionCall: &geminiFunctionCall{Name: c.Name, Args: argumentsObject(c.Arguments)}, ThoughtSignature: c.ThoughtSignature}
				if j == 0 && p.ThoughtSignature == "" && needsSignature(req.Model) {
					p.ThoughtSignature = geminiSkipSignature // no signature came back with the call
				}
				parts = append(parts, p)
			}
			b.Contents = append(b.Contents, geminiContent{Role: "model", Parts: parts})
		case "tool":
			name := names[m.ToolCallID]
			if name == "" {
				name = m.ToolCallID
			}
			part := geminiPart{FunctionResponse: &geminiFunctionResponse{Name: name, Response: functionResponse(m.Content)}}
			// The results of one turn's calls go back together, in one user turn.
			if n := len(b.Contents); n > 0 && b.Contents[n-1].Role == "user" {
				if last := b.Contents[n-1].Parts; len(last) > 0 && last[len(last)-1].FunctionResponse != nil {
					b.Contents[n-1].Parts = append(last, part)
					continue
				}
			}
			b.Contents = append(b.Contents, geminiContent{Role: "user", Parts: []geminiPart{part}})
		default:
			if len(m.Parts) > 0 {
				parts, err := g.geminiParts(i, m.Parts)
				if err != nil {
					return b, err
				}
				b.Contents = append(b.Contents, geminiContent{Role: "user", Parts: parts})
				continue
			}
			b.Contents = append(b.Contents, geminiContent{Role: "user", Parts: []geminiPart{{Text: m.Content}}})
		}
	}
	if len(system) > 0 {
		b.SystemInstruction = &geminiContent{Parts: system}
	}
	if req.Temperature != nil || req.MaxTokens > 0 || req.TopP != nil || req.TopK != nil || len(req.Stop) > 0 ||
		req.Seed != nil || req.PresencePenalty != nil || req.FrequencyPenalty != nil {
		b.GenerationConfig = &geminiGenerationConfig{Temperature: req.Temperature, TopP: req.TopP, TopK: req.TopK,
			MaxOutputTokens: req.MaxTokens, StopSequences: req.Stop,
			Seed: req.Seed, PresencePenalty: req.PresencePenalty, FrequencyPenalty: req.FrequencyPenalty}
	}
	if req.Logprobs {
		if b.GenerationConfig == nil {
			b.GenerationConfig = &geminiGenerationConfig{}
		}
		b.GenerationConfig.ResponseLogprobs = true
		if req.TopLogprobs > 0 {
			top := req.TopLogprobs
			b.GenerationConfig.Logprobs = &top
		}
	}
	if tc := geminiThinking(req.Model, req.Thinking, req.MaxTokens); tc != nil {
		if b.GenerationConfig == nil {
			b.GenerationConfig = &geminiGenerationConfig{}
		}
		b.GenerationConfig.ThinkingConfig = tc
	}
	out := geminiOutputTool(req)
	if f := req.ResponseFormat; f.JSON() && out == "" {
		switch {
		case len(req.Tools) > 0:
			// Gemini answers 400 "Function calling with a response mime type:
			// 'application/json' is unsupported". A JSON schema beside functions is asked
			// as an answer function instead (geminiOutputTool).
			return b, &UnsupportedError{Provider: g.Name(), Field: "response_format",
				Reason: "Gemini cannot combine a JSON object response format with tools; send a json_schema with tools, or one or the other"}
		case req.Search && !geminiSearchWithJSON(req.Model):
			// Gemini 2.x answers 400 "controlled generation is not supported with
			// google_search tool"; Gemini 3 takes both.
			return b, &UnsupportedError{Provider: g.Name(), Field: "response_format",
				Reason: fmt.Sprintf("%s cannot combine a JSON response format with its Google Search (Gemini 3 and later can); send one or the other, or use a Gemini 3 model", req.Model)}
		case (req.CodeExecution || req.URLContext) && !geminiSearchWithJSON(req.Model):
			// The same 400 ("controlled generation is not supported with ... tool") for the
			// other built-in tools: Gemini 3 combines structured output with them all.
			return b, &UnsupportedError{Provider: g.Name(), Field: "response_format",
				Reason: fmt.Sprintf("%s cannot combine a JSON response format with its %s tool (Gemini 3 and later can); send one or the other, or use a Gemini 3 model", req.Model, geminiBuiltinToolNames(req))}
		}
		if b.GenerationConfig == nil {
			b.GenerationConfig = &geminiGenerationConfig{}
		}
		b.GenerationConfig.ResponseMimeType = "application/json"
		if f.Type == ResponseJSONSchema && len(f.Schema) > 0 {
			schema, err := geminiSchema(f.Schema)
			if err != nil {
				return b, &UnsupportedError{Provider: g.Name(), Field: "response_format.json_schema.schema", Reason: err.Error()}
			}
			b.GenerationConfig.ResponseSchema = schema
		}
	}
	if len(req.Tools) > 0 {
		decls := make([]geminiFunctionDeclaration, len(req.Tools))
		for i, t := range req.Tools {
			decls[i] = geminiFunctionDeclaration{Name: t.Name, Description: t.Description}
			if len(t.Parameters) > 0 {
				schema, err := geminiSchema(t.Parameters)
				if err != nil {
					return b, &UnsupportedError{Provider: g.Name(), Field: fmt.Sprintf("tools[%d].function.parameters", i), Reason: err.Error()}
				}
				// An OBJECT without properties (a function without arguments) is sent
				// without parameters: Gemini refuses an OBJECT with empty properties.
				if _, props := schema["properties"]; props || schema["type"] != "OBJECT" {
					decls[i].Parameters = schema
				}
			}
		}
		if out != "" {
			f := req.ResponseFormat
			schema, err := geminiSchema(f.Schema)
			if err != nil {
				return b, &UnsupportedError{Provider: g.Name(), Field: "response_format.json_schema.schema", Reason: err.Error()}
			}
			desc := cmp.Or(f.Description, "Give your final answer by calling this function: its arguments are the answer.")
			decls = append(decls, geminiFunctionDeclaration{Name: out, Description: desc, Parameters: schema})
		}
		b.Tools = append(b.Tools, geminiTool{FunctionDeclarations: decls})
		if c := req.ToolChoice; out != "" && (c == nil || c.Mode != ToolChoiceFunction) {
			// Either one of the caller's functions or the answer; with tool_choice none,
			// the answer alone.
			tc := &geminiToolConfig{}
			tc.FunctionCallingConfig.Mode = "ANY"
			if c != nil && c.Mode == ToolChoiceNone {
				tc.FunctionCallingConfig.AllowedFunctionNames = []string{out}
			}
			b.ToolConfig = tc
		} else if c != nil {
			tc := &geminiToolConfig{}
			switch c.Mode {
			case ToolChoiceNone:
				tc.FunctionCallingConfig.Mode = "NONE"
			case ToolChoiceRequired:
				tc.FunctionCallingConfig.Mode = "ANY"
			case ToolChoiceFunction:
				tc.FunctionCallingConfig.Mode = "ANY"
				tc.FunctionCallingConfig.AllowedFunctionNames = []string{c.Name}
			default:
				tc.FunctionCallingConfig.Mode = "AUTO"
			}
			b.ToolConfig = tc
		}
	}
	if req.Search {
		if len(req.Tools) > 0 {
			// Gemini answers 400 "Tool use with function calling is unsupported by the model".
			return b, &UnsupportedError{Provider: g.Name(), Field: "search",
				Reason: "Gemini cannot combine its Google Search with function tools; send one or the other"}
		}
		b.Tools = append(b.Tools, geminiTool{GoogleSearch: &struct{}{}})
	}
	if req.CodeExecution {
		b.Tools = append(b.Tools, geminiTool{CodeExecution: &struct{}{}})
	}
	if req.URLContext {
		b.Tools = append(b.Tools, geminiTool{URLContext: &struct{}{}})
	}
	if g.tokens == nil { // Google AI Studio: its SafetySetting has no method (Vertex AI's)
		for i, ss := range req.SafetySettings {
			if ss.Method != "" {
				return b, &UnsupportedError{Provider: g.Name(), Field: fmt.Sprintf("safety_settings[%d].method", i),
					Reason: "Google AI Studio's safety settings take only category and threshold; method is Vertex AI's"}
			}
		}
	}
	b.SafetySettings = req.SafetySettings
	return b, nil
}

// functionResponse is a tool result as Gemini's functionResponse.response, which must be
// an object: a JSON object result is sent as it is, anything else as {"result": value}
// (the JSON value, or the text when it is not JSON).
func functionResponse(content string) json.RawMessage {
	t := strings.TrimSpace(content)
	if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	var v any = content
	if t != "" && json.Valid([]byte(t)) {
		v = json.RawMessage(t)
	}
	out, _ := json.Marshal(map[string]any{"result": v})
	return out
}

// SupportsAudioInput implements AudioInputSupporter: Gemini takes recordings as inline
// data.
func (g *Gemini) SupportsAudioInput(string, *Request) (bool, string) { return true, "" }

// Check refuses tool parameter and response schemas that Gemini's OpenAPI-subset schema
// dialect cannot express, naming the keyword, and image URLs whose type it cannot tell.
func (g *Gemini) Check(model string, req *Request) error {
	if err := checkLogprobs(g, model, req); err != nil {
		return err
	}
	if len(req.Stop) > geminiMaxStop {
		return &UnsupportedError{Provider: g.Name(), Field: "stop", Reason: fmt.Sprintf("Gemini takes at most %d stop sequences", geminiMaxStop)}
	}
	if len(req.Tools) == 0 && !req.ResponseFormat.JSON() && !hasImages(req.Messages) && !req.Search && len(req.SafetySettings) == 0 {
		return nil
	}
	_, err := g.body(req)
	return err
}

// SupportsLogprobs implements LogprobsSupporter: Gemini returns log probabilities
// (generationConfig.responseLogprobs) for every model it serves.
func (g *Gemini) SupportsLogprobs(model string, req *Request) (bool, string) { return true, "" }

// geminiMaxStop is the most stop sequences Gemini's generationConfig.stopSequences takes.
const geminiMaxStop = 5

// geminiCallID is the id of a function call: Gemini's own when it sent one, else one
// derived from the answer (Gemini's responseId, else a nonce drawn for the call: salt) and
// the call (name, arguments, position). The same call in a later answer — an agent running
// `git status` again — gets another id, as clients that track calls by id (Claude Code
// refuses to run a call whose id it has seen) need. Tool results are mapped back to function
// names through the assistant message that holds the call, so the id need mean nothing to
// Gemini.
func geminiCallID(fc *geminiFunctionCall, index int, salt string) string {
	if fc.ID != "" {
		return fc.ID
	}
	h := sha256.New()
	h.Write([]byte(salt))
	h.Write([]byte{0})
	h.Write([]byte(fc.Name))
	h.Write([]byte{0})
	h.Write([]byte(geminiArguments(fc)))
	h.Write([]byte{0, byte(index), byte(index >> 8)})
	return "call_" + hex.EncodeToString(h.Sum(nil)[:12])
}

// callNonce is a random salt for the call ids of one answer.
func callNonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// geminiArguments is a function call's args as compact JSON text ("{}" when absent).
func geminiArguments(fc *geminiFunctionCall) string {
	a := bytes.TrimSpace(fc.Args)
	if len(a) == 0 || string(a) == "null" {
		return "{}"
	}
	var b bytes.Buffer
	if json.Compact(&b, a) != nil {
		return string(a)
	}
	return b.String()
}

func (g *Gemini) start(ctx context.Context, req *Request, stream bool) (*call, error) {
	if err := g.ep.checkKey(req.Model); err != nil {
		return nil, err
	}
	if req.Search && !g.SupportsSearch(req.Model) {
		return nil, g.ep.errorf(req.Model, KindBadRequest, "model %s/%s does not support search", g.Name(), req.Model)
	}
	if req.AssistantPrefix != "" {
		return nil, g.ep.errNoPrefill(req.Model)
	}
	if g.tokens != nil {
		if err := vertexModel(g.Name(), req.Model); err != nil {
			return nil, &Error{Provider: g.Name(), Model: req.Model, Kind: KindBadRequest, Message: err.Error(), Err: err}
		}
	}
	model := strings.TrimPrefix(req.Model, "models/")
	op := "/models/" + url.PathEscape(model) + ":generateContent"
	if stream {
		op = "/models/" + url.PathEscape(model) + ":streamGenerateContent?alt=sse"
	}
	u := operationURL(g.baseURL, op)
	h := http.Header{}
	if err := g.setAuth(ctx, req.Model, h); err != nil {
		return nil, err
	}
	if stream {
		h.Set("Accept", "text/event-stream")
	}
	body, err := g.body(req)
	if err != nil {
		return nil, g.ep.errorf(req.Model, KindBadRequest, "%v", err)
	}
	return g.ep.send(ctx, req.Model, u, h, body, parseGeminiError)
}

type geminiErrorBody struct {
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Details []struct {
			Reason string `json:"reason"`
			// RetryDelay is google.rpc.RetryInfo's, e.g. "37s" (Gemini's 429s carry it
			// instead of a Retry-After header).
			RetryDelay string `json:"retryDelay"`
		} `json:"details"`
	} `json:"error"`
}

// geminiRetryDelay returns the RetryInfo delay of a Google API error body (0 when none).
func geminiRetryDelay(body []byte) time.Duration {
	var e geminiErrorBody
	if json.Unmarshal(body, &e) != nil || e.Error == nil {
		return 0
	}
	for _, d := range e.Error.Details {
		if v, err := time.ParseDuration(d.RetryDelay); err == nil && v > 0 {
			return v
		}
	}
	return 0
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
	// PromptTokensDetails is read for its AUDIO count only.
	PromptTokensDetails geminiAudioCount `json:"promptTokensDetails"`
}

func (u geminiUsage) usage() Usage {
	return Usage{
		PromptTokens:      u.PromptTokenCount,
		CompletionTokens:  u.CandidatesTokenCount + u.ThoughtsTokenCount,
		ReasoningTokens:   u.ThoughtsTokenCount,
		CachedTokens:      u.CachedContentTokenCount,
		PromptAudioTokens: int(u.PromptTokensDetails),
	}
}

// geminiAudioCount is the tokenCount of the AUDIO entry of a list of Gemini's
// ModalityTokenCount ({"modality": "AUDIO", "tokenCount": n}), 0 without one.
type geminiAudioCount int

// UnmarshalJSON reads the list. Gemini sends it in every chunk of a stream: a list without
// AUDIO is not decoded, so that text answers cost no allocations for it.
func (c *geminiAudioCount) UnmarshalJSON(b []byte) error {
	*c = 0
	if !bytes.Contains(b, []byte(`"AUDIO"`)) {
		return nil
	}
	var entries []struct {
		Modality   geminiModality `json:"modality"`
		TokenCount int            `json:"tokenCount"`
	}
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil // a count the gateway cannot read is not a failed answer
	}
	for _, e := range entries {
		if e.Modality {
			*c += geminiAudioCount(e.TokenCount)
		}
	}
	return nil
}

// geminiModality is whether a modality is AUDIO.
type geminiModality bool

// UnmarshalJSON compares the name without making a string of it.
func (m *geminiModality) UnmarshalJSON(b []byte) error {
	*m = string(b) == `"AUDIO"`
	return nil
}

type geminiResponse struct {
	Candidates []struct {
		Content      *geminiContent `json:"content"`
		FinishReason string         `json:"finishReason"`
		// URLContextMetadata is what the URL context tool read, kept as Gemini sent it.
		URLContextMetadata json.RawMessage `json:"urlContextMetadata"`
		// LogprobsResult is the answer's log probabilities (Request.Logprobs).
		LogprobsResult *geminiLogprobsResult `json:"logprobsResult"`
		// GroundingMetadata says what Google Search the answer was grounded on.
		GroundingMetadata *struct {
			WebSearchQueries []string `json:"webSearchQueries"`
			// GroundingChunks are the pages the answer was grounded on (uri is a Google
			// redirect to the page, title its site).
			GroundingChunks []struct {
				Web *struct {
					URI   string `json:"uri"`
					Title string `json:"title"`
				} `json:"web"`
			} `json:"groundingChunks"`
		} `json:"groundingMetadata"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *geminiUsage `json:"usageMetadata"`
	ModelVersion  string       `json:"modelVersion"`
	ResponseID    string       `json:"responseId"`
}

// searchQueries is how many Google Search queries the response (or chunk) was grounded on.
func (r *geminiResponse) searchQueries() int {
	n := 0
	for _, c := range r.Candidates {
		if c.GroundingMetadata != nil {
			n += len(c.GroundingMetadata.WebSearchQueries)
		}
	}
	return n
}

// sources are the web pages the first candidate was grounded on, each once, leaving out
// those in seen (which it then holds too; nil keeps none).
func (r *geminiResponse) sources(seen sourceSet) []Source {
	if len(r.Candidates) == 0 || r.Candidates[0].GroundingMetadata == nil {
		return nil
	}
	if seen == nil {
		seen = sourceSet{}
	}
	var out []Source
	for _, c := range r.Candidates[0].GroundingMetadata.GroundingChunks {
		if c.Web != nil {
			out = seen.add(out, c.Web.URI, c.Web.Title)
		}
	}
	return out
}

// geminiSearches is the billed searches of an answer of model grounded on queries Google
// Search queries: Gemini 3 bills each query, earlier models each grounded answer.
func geminiSearches(model string, queries int) int {
	if queries == 0 || strings.HasPrefix(strings.TrimPrefix(model, "models/"), "gemini-3") {
		return queries
	}
	return 1
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
		for i := range r.Candidates[0].Content.Parts {
			if p := &r.Candidates[0].Content.Parts[i]; !p.Thought {
				b.WriteString(p.rendered())
			}
		}
	}
	return b.String()
}

// codeExecution is the first candidate's code execution parts with their byte ranges in
// text(); nil when it has none.
func (r *geminiResponse) codeExecution() []CodeExecutionPart {
	if len(r.Candidates) == 0 || r.Candidates[0].Content == nil {
		return nil
	}
	var out []CodeExecutionPart
	at := 0
	for i := range r.Candidates[0].Content.Parts {
		p := &r.Candidates[0].Content.Parts[i]
		if p.Thought {
			continue
		}
		n := len(p.rendered())
		switch {
		case p.ExecutableCode != nil:
			out = append(out, CodeExecutionPart{Start: at, End: at + n, Language: p.ExecutableCode.Language, Code: p.ExecutableCode.Code})
		case p.CodeExecutionResult != nil:
			out = append(out, CodeExecutionPart{Start: at, End: at + n, Outcome: p.CodeExecutionResult.Outcome, Output: p.CodeExecutionResult.Output, Result: true})
		}
		at += n
	}
	return out
}

// reasoning is the first candidate's thought summaries: each run of consecutive thought
// parts joined into one block (a whole answer normally has one run); nil when it has none.
func (r *geminiResponse) reasoning() []ReasoningBlock {
	if len(r.Candidates) == 0 || r.Candidates[0].Content == nil {
		return nil
	}
	var out []ReasoningBlock
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, ReasoningBlock{Text: b.String()})
			b.Reset()
		}
	}
	for _, p := range r.Candidates[0].Content.Parts {
		if !p.Thought {
			flush()
			continue
		}
		b.WriteString(p.Text)
	}
	flush()
	return out
}

// calls appends the function calls of the first candidate to out, numbering them from
// first; nonce salts their ids when the response has no responseId.
func (r *geminiResponse) calls(out []ToolCall, first int, nonce string) []ToolCall {
	if len(r.Candidates) == 0 || r.Candidates[0].Content == nil {
		return out
	}
	salt := r.ResponseID
	if salt == "" {
		salt = nonce
	}
	for _, p := range r.Candidates[0].Content.Parts {
		if fc := p.FunctionCall; fc != nil {
			out = append(out, ToolCall{ID: geminiCallID(fc, first, salt), Name: fc.Name, Arguments: geminiArguments(fc), ThoughtSignature: p.ThoughtSignature})
			first++
		}
	}
	return out
}

func (r *geminiResponse) finish() string {
	if len(r.Candidates) == 0 {
		return ""
	}
	return r.Candidates[0].FinishReason
}

// geminiEmptyFailure reports whether an answer with nothing in it that ended with this
// finish reason is a failure worth retrying rather than an empty answer: the model wrote a
// function call Gemini could not parse (MALFORMED_FUNCTION_CALL), or stopped for an
// unstated reason (OTHER).
func geminiEmptyFailure(finish string) bool {
	return finish == "MALFORMED_FUNCTION_CALL" || finish == "OTHER"
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
		return nil, c.malformedBody(raw, int64(len(raw)), err, "response body")
	}
	if msg, ok := r.blocked(); ok {
		e := c.failure(KindContentFilter, msg, nil)
		if r.UsageMetadata != nil {
			u := r.UsageMetadata.usage()
			e.Usage = &u
		}
		return nil, e
	}
	if len(r.Candidates) == 0 {
		return nil, c.failure(KindStreamBroken, "response has no candidates", nil)
	}
	resp := &Response{Text: r.text(), FinishReason: geminiFinish(r.finish()), Model: r.ModelVersion, Reasoning: r.reasoning(), Sources: r.sources(nil)}
	resp.ToolCalls = r.calls(nil, 0, callNonce())
	if answer, calls, ok := takeOutputCall(resp.ToolCalls, geminiOutputTool(req)); ok {
		resp.Text, resp.ToolCalls = answer, calls
	}
	resp.CodeExecution = r.codeExecution()
	resp.Logprobs = r.Candidates[0].LogprobsResult.logprobs()
	if m := r.Candidates[0].URLContextMetadata; len(m) > 0 && string(m) != "null" {
		resp.URLContextMetadata = m
	}
	if resp.Text == "" && len(resp.ToolCalls) == 0 && geminiEmptyFailure(r.finish()) {
		return nil, c.failure(KindStreamBroken, "empty answer (finishReason "+r.finish()+")", nil)
	}
	if len(resp.ToolCalls) > 0 && resp.FinishReason == "stop" {
		resp.FinishReason = "tool_calls" // Gemini says STOP
	}
	if r.UsageMetadata != nil {
		resp.Usage = r.UsageMetadata.usage()
	}
	resp.Usage.WebSearches = geminiSearches(req.Model, r.searchQueries())
	return resp, nil
}

// Stream calls streamGenerateContent?alt=sse. Usage comes from the last chunk and is
// delivered, with the finish reason, in a final chunk just before io.EOF.
func (g *Gemini) Stream(ctx context.Context, req *Request) (Stream, error) {
	c, err := g.start(ctx, req, true)
	if err != nil {
		return nil, err
	}
	return &geminiStream{streamState: newStreamState(c), nonce: callNonce(), model: req.Model, output: geminiOutputTool(req)}, nil
}

type geminiStream struct {
	streamState
	nonce     string // salts call ids when chunks carry no responseId
	model     string
	output    string    // the answer function of structured output beside functions (geminiOutputTool)
	queries   int       // Google Search queries the answer was grounded on (the most a chunk gave)
	sourced   sourceSet // the grounding pages already delivered
	usage     *geminiUsage
	finish    string
	ncalls    int  // function calls relayed so far
	delivered bool // text or a call was relayed
	calls     []ToolCall
	deltas    []ToolCallDelta
	// queue holds chunks of the last event not yet returned: its thought summaries, then its
	// text and calls; queue[head:] are still to come. Plain text events never use it.
	queue []Chunk
	head  int
	// thoughts tells the answer's reasoning blocks apart: block is the index of the
	// current one, and a thought after text or calls that followed it starts the next.
	thoughts reasoningBlocks
}

// queueThoughts queues a reasoning chunk for each thought part of the event's first
// candidate that has text.
func (s *geminiStream) queueThoughts(r *geminiResponse) {
	if len(r.Candidates) == 0 || r.Candidates[0].Content == nil {
		return
	}
	for _, p := range r.Candidates[0].Content.Parts {
		if p.Thought && p.Text != "" {
			s.queue = append(s.queue, Chunk{Reasoning: &ReasoningDelta{Index: s.thoughts.next(), Text: p.Text}})
		}
	}
}

// dequeue returns the next queued chunk, emptying the queue (keeping its array) after the
// last one.
func (s *geminiStream) dequeue() Chunk {
	out := s.queue[s.head]
	s.head++
	if s.head == len(s.queue) {
		clear(s.queue) // drop the references to the returned chunks' deltas
		s.queue, s.head = s.queue[:0], 0
	}
	return out
}

// Recv returns the next chunk: thought summaries as reasoning, then text and function calls;
// when the body ends after a chunk with a finishReason it returns a final chunk with usage
// and then io.EOF.
func (s *geminiStream) Recv() (Chunk, error) {
	if s.err != nil {
		return Chunk{}, s.err
	}
	if s.head < len(s.queue) {
		return s.dequeue(), nil
	}
	for {
		ev, err := s.next()
		if err == io.EOF {
			if s.finish == "" {
				return Chunk{}, s.fail(KindStreamBroken, "stream ended without a finishReason", nil)
			}
			if !s.delivered && geminiEmptyFailure(s.finish) {
				return Chunk{}, s.fail(KindStreamBroken, "empty answer (finishReason "+s.finish+")", nil)
			}
			s.stop(io.EOF)
			out := Chunk{FinishReason: geminiFinish(s.finish)}
			if s.ncalls > 0 && out.FinishReason == "stop" {
				out.FinishReason = "tool_calls" // Gemini says STOP
			}
			if s.usage != nil || s.queries > 0 {
				var u Usage
				if s.usage != nil {
					u = s.usage.usage()
				}
				u.WebSearches = geminiSearches(s.model, s.queries)
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
			return Chunk{}, s.stop(s.c.malformedStream(data))
		}
		var r geminiResponse
		if err := decodeUpstream(data, &r); err != nil {
			if s.skip(data) {
				continue
			}
			return Chunk{}, s.fail(KindStreamBroken, "malformed stream chunk", err)
		}
		if r.Candidates == nil && r.UsageMetadata == nil && r.PromptFeedback == nil {
			return Chunk{}, s.fail(KindStreamBroken, "malformed stream chunk: no candidates, usage or feedback", nil)
		}
		if r.UsageMetadata != nil {
			s.usage = r.UsageMetadata
		}
		s.queries = max(s.queries, r.searchQueries())
		if msg, ok := r.blocked(); ok {
			var billed *Usage
			if s.usage != nil {
				u := s.usage.usage()
				billed = &u
			}
			return Chunk{}, s.failBilled(KindContentFilter, msg, billed)
		}
		if f := r.finish(); f != "" {
			s.finish = f
		}
		s.queueThoughts(&r)
		out := Chunk{Text: r.text()}
		if len(r.Candidates) > 0 {
			out.Logprobs = r.Candidates[0].LogprobsResult.logprobs()
		}
		// A streamed function call arrives whole: one fragment carries id, name and arguments.
		s.calls = r.calls(s.calls[:0], s.ncalls, s.nonce)
		if answer, calls, ok := takeOutputCall(s.calls, s.output); ok {
			out.Text, s.calls = answer, calls
		}
		if len(s.calls) > 0 {
			s.deltas = s.deltas[:0]
			for i, c := range s.calls {
				s.deltas = append(s.deltas, ToolCallDelta{Index: s.ncalls + i, ID: c.ID, Name: c.Name, Arguments: c.Arguments, ThoughtSignature: c.ThoughtSignature})
			}
			s.ncalls += len(s.calls)
			out.ToolCalls = s.deltas
		}
		if s.sourced == nil {
			s.sourced = sourceSet{}
		}
		fresh := r.sources(s.sourced)
		if out.Text != "" || len(out.ToolCalls) > 0 {
			s.delivered = true
			s.thoughts.answer()
			if len(s.queue) == 0 && len(fresh) == 0 {
				return out, nil
			}
			s.queue = append(s.queue, out) // after the event's reasoning
		}
		if len(fresh) > 0 {
			s.queue = append(s.queue, Chunk{Sources: fresh}) // the pages it was grounded on
		}
		if len(s.queue) > 0 {
			return s.dequeue(), nil
		}
	}
}

// needs is what the configuration lacks (see Needs).
func (g *Gemini) needs() string { return g.ep.needs() }
