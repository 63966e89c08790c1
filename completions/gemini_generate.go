package completions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/switchyard-ai/switchyard/providers"
)

// The Gemini API surface (POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent): Google's GenAI SDKs (npm @google/genai, Python google-genai)
// and tools built on them (Gemini CLI) send their requests to the gateway unchanged and
// reach any configured model — Gemini, or GPT, Claude and the rest with their fallbacks,
// budgets and ledger. A request is translated to a chat request
// (GeminiGenerateRequest.ToChatRequest) and answered by the same gateway; the answer is a
// GenerateContentResponse (NewGeminiResponse) or a stream of them (WriteGeminiStream).

// GeminiGenerateRequest is the body of generateContent and streamGenerateContent.
type GeminiGenerateRequest struct {
	// Model is the model the path names (a gateway model string, a bare name, a model
	// group), set by the HTTP surface; a "models/" prefix is dropped.
	Model string `json:"-"`
	// Stream is set by the HTTP surface for streamGenerateContent.
	Stream bool `json:"-"`
	// Contents are the conversation: user turns (text, inlineData, fileData,
	// functionResponse parts) and model turns (text, thought, functionCall parts).
	Contents []GeminiContent `json:"contents" jsonschema:"required,minItems=1"`
	// SystemInstruction is text parts, the system prompt.
	SystemInstruction *GeminiContent `json:"systemInstruction,omitempty"`
	// Tools are functionDeclarations; googleSearch asks the model to search the web with its
	// provider's own search; codeExecution and urlContext are Gemini's built-in tools, for
	// Gemini models only (others refuse the request). googleSearchRetrieval is refused.
	Tools      []GeminiTool      `json:"tools,omitempty"`
	ToolConfig *GeminiToolConfig `json:"toolConfig,omitempty"`
	// GenerationConfig holds the sampling, length, output format and thinking settings.
	GenerationConfig *GeminiGenerationConfig `json:"generationConfig,omitempty"`
	// SafetySettings (a category and a threshold each) reach Gemini and Vertex AI's Gemini
	// models; other providers apply their own filters and are sent none.
	SafetySettings []providers.SafetySetting `json:"safetySettings,omitempty"`
	// CachedContent (a context cache made with Google's cachedContents API) is refused: the
	// gateway cannot resolve it on another provider.
	CachedContent string `json:"cachedContent,omitempty"`
	// Labels become the request's tags (Vertex AI's labels).
	Labels map[string]string `json:"labels,omitempty"`
	// Fallbacks and ContextWindowFallbacks are LiteLLM's request fallbacks and
	// context_window_fallbacks (its proxy passes a generateContent body's to its router,
	// as for chat completions), read as on chat completions; their values are the
	// caller's model names, never rewritten to lowerCamelCase.
	Fallbacks              json.RawMessage `json:"fallbacks,omitempty" jsonschema:"type=array,description=LiteLLM's fallbacks: model names tried in order when the model asked fails"`
	ContextWindowFallbacks json.RawMessage `json:"contextWindowFallbacks,omitempty" jsonschema:"type=array,description=LiteLLM's context_window_fallbacks (also as context_window_fallbacks): [{gemini-2.0-flash: [gemini-2.5-pro]}]: the entry for the model asked is tried in place of the plain fallbacks when the prompt is too long for it"`
}

// GeminiContent is one turn: a role (user or model; "function" is read as user) and parts.
type GeminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []GeminiPart `json:"parts"`
}

// GeminiPart is one part of a turn: exactly one of text (a thought when Thought is set),
// inlineData, fileData, functionCall or functionResponse.
type GeminiPart struct {
	Text             *string                 `json:"text,omitempty"`
	Thought          bool                    `json:"thought,omitempty"`
	ThoughtSignature string                  `json:"thoughtSignature,omitempty"`
	InlineData       *GeminiBlob             `json:"inlineData,omitempty"`
	FileData         *GeminiFileData         `json:"fileData,omitempty"`
	FunctionCall     *GeminiFunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *GeminiFunctionResponse `json:"functionResponse,omitempty"`
	// ExecutableCode and CodeExecutionResult are Google's code execution tool's (refused).
	ExecutableCode      json.RawMessage `json:"executableCode,omitempty" jsonschema:"type=object"`
	CodeExecutionResult json.RawMessage `json:"codeExecutionResult,omitempty" jsonschema:"type=object"`
}

// GeminiBlob is inline data: base64 bytes and their MIME type (an image or a PDF).
type GeminiBlob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

// GeminiFileData is a file the model fetches from a URI.
type GeminiFileData struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

// GeminiFunctionCall is a call the model made: the function's name and its arguments
// object; ID pairs it with its functionResponse when the client keeps it.
type GeminiFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty" jsonschema:"type=object"`
}

// GeminiFunctionResponse is a function's result: the call's name (and ID, when the call
// had one) and the response object.
type GeminiFunctionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response" jsonschema:"type=object"`
}

// GeminiTool is a tools entry: function declarations, or Google Search.
type GeminiTool struct {
	FunctionDeclarations []GeminiFunctionDeclaration `json:"functionDeclarations,omitempty"`
	GoogleSearch         json.RawMessage             `json:"googleSearch,omitempty" jsonschema:"type=object"`
	// The other Google tools are refused.
	GoogleSearchRetrieval json.RawMessage `json:"googleSearchRetrieval,omitempty" jsonschema:"type=object"`
	CodeExecution         json.RawMessage `json:"codeExecution,omitempty" jsonschema:"type=object"`
	URLContext            json.RawMessage `json:"urlContext,omitempty" jsonschema:"type=object"`
}

// GeminiFunctionDeclaration is a function the model may call: its parameters as Google's
// OpenAPI-subset schema (Parameters, types in capitals) or as JSON Schema
// (ParametersJSONSchema).
type GeminiFunctionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	Parameters           json.RawMessage `json:"parameters,omitempty" jsonschema:"type=object"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty" jsonschema:"type=object"`
}

// GeminiToolConfig is toolConfig: how the model may call the functions.
type GeminiToolConfig struct {
	FunctionCallingConfig *struct {
		// Mode is AUTO (the default), ANY (a call is required, of AllowedFunctionNames when
		// given), NONE or VALIDATED (read as AUTO).
		Mode                 string   `json:"mode,omitempty"`
		AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
	} `json:"functionCallingConfig,omitempty"`
}

// GeminiGenerationConfig is generationConfig.
type GeminiGenerationConfig struct {
	Temperature      *float64 `json:"temperature,omitempty" jsonschema:"minimum=0,maximum=2"`
	TopP             *float64 `json:"topP,omitempty" jsonschema:"minimum=0,maximum=1"`
	TopK             *float64 `json:"topK,omitempty" jsonschema:"minimum=1"`
	MaxOutputTokens  *int     `json:"maxOutputTokens,omitempty" jsonschema:"minimum=1"`
	StopSequences    []string `json:"stopSequences,omitempty"`
	CandidateCount   *int     `json:"candidateCount,omitempty" jsonschema:"minimum=1,maximum=16"`
	PresencePenalty  *float64 `json:"presencePenalty,omitempty"`
	FrequencyPenalty *float64 `json:"frequencyPenalty,omitempty"`
	Seed             *int64   `json:"seed,omitempty"`
	// ResponseMimeType application/json asks for JSON output, following ResponseSchema
	// (Google's schema) or ResponseJSONSchema (JSON Schema) when one is given.
	ResponseMimeType   string          `json:"responseMimeType,omitempty"`
	ResponseSchema     json.RawMessage `json:"responseSchema,omitempty" jsonschema:"type=object"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty" jsonschema:"type=object"`
	// ThinkingConfig asks for reasoning: a thinkingBudget (0 disables it, -1 lets the model
	// decide) or a thinkingLevel, and includeThoughts to see it as thought parts.
	ThinkingConfig *GeminiThinkingConfig `json:"thinkingConfig,omitempty"`
	// ResponseModalities other than TEXT are refused.
	ResponseModalities []string `json:"responseModalities,omitempty"`
	// ResponseLogprobs asks for the log probability of each token of the answer
	// (candidates[].logprobsResult) and Logprobs (0 to 20, with responseLogprobs only) for
	// that many likeliest candidates at each step, as Gemini's do; only models that give
	// them are tried (as chat completions' logprobs and top_logprobs).
	ResponseLogprobs bool `json:"responseLogprobs,omitempty"`
	Logprobs         *int `json:"logprobs,omitempty" jsonschema:"minimum=0,maximum=20"`
}

// GeminiThinkingConfig is generationConfig.thinkingConfig.
type GeminiThinkingConfig struct {
	IncludeThoughts bool   `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int   `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
}

// IncludeThoughts reports whether the request asks to see the model's thoughts.
func (r *GeminiGenerateRequest) IncludeThoughts() bool {
	gc := r.GenerationConfig
	return gc != nil && gc.ThinkingConfig != nil && gc.ThinkingConfig.IncludeThoughts
}

// Candidates is how many candidates the request asks for (candidateCount, default 1).
func (r *GeminiGenerateRequest) Candidates() int {
	if gc := r.GenerationConfig; gc != nil && gc.CandidateCount != nil {
		return *gc.CandidateCount
	}
	return 1
}

// geminiCall is a functionCall of the history not yet answered by a functionResponse.
type geminiCall struct {
	id, name string
}

// ToChatRequest translates r to the chat request the gateway answers: the system
// instruction, then each turn in order — a user turn's functionResponse parts as tool
// messages before its other parts, inlineData and fileData as image or file parts, a model
// turn's functionCall parts as tool calls (ids made up, as "call_<turn>_<part>", for calls
// that have none, and responses paired with them by name in order). Errors are
// *ValidationError naming the Gemini field (contents[i].parts[j]…).
func (r *GeminiGenerateRequest) ToChatRequest() (*OpenAIChatRequest, error) {
	model := strings.TrimPrefix(r.Model, "models/")
	if model == "" {
		return nil, invalid("model", "is required (the path's models/{model})")
	}
	if len(r.Contents) == 0 {
		return nil, invalid("contents", "at least one content is required")
	}
	if r.CachedContent != "" {
		return nil, invalid("cachedContent", "is not supported: Google's context caches cannot be read by the gateway; send the contents")
	}
	c := &OpenAIChatRequest{Model: model, Stream: r.Stream, maxStop: MaxAnyStopSequences, fitMaxTokens: true, hideUnaskedReasoning: true,
		LiteLLMFallbacks: LiteLLMFallbacks{Fallbacks: r.Fallbacks, ContextWindowFallbacks: r.ContextWindowFallbacks}}
	if r.Stream {
		c.StreamOptions = &OpenAIStreamOptions{IncludeUsage: true}
	}
	if len(r.Labels) > 0 {
		tags := make([]string, 0, len(r.Labels))
		for k, v := range r.Labels {
			tags = append(tags, k+":"+v)
		}
		slices.Sort(tags)
		c.Metadata, _ = json.Marshal(map[string][]string{"tags": tags})
	}
	fields := map[int]string{} // chat message index -> the Gemini field it came from
	if si := r.SystemInstruction; si != nil {
		var sys []string
		for j, p := range si.Parts {
			if p.Text == nil {
				return nil, invalid(fmt.Sprintf("systemInstruction.parts[%d]", j), "must be a text part")
			}
			sys = append(sys, *p.Text)
		}
		if len(sys) > 0 {
			fields[len(c.Messages)] = "systemInstruction"
			c.Messages = append(c.Messages, OpenAIMessage{Role: "system", Content: textContent(strings.Join(sys, "\n"))})
		}
	}
	var pending []geminiCall // calls of the history not answered yet, oldest first
	for i, content := range r.Contents {
		field := fmt.Sprintf("contents[%d]", i)
		role := content.Role
		switch role {
		case "", "user", "function", "tool":
			role = "user"
		case "model", "assistant":
			role = "assistant"
		default:
			return nil, invalid(field+".role", `must be "user" or "model", got %q`, content.Role)
		}
		if len(content.Parts) == 0 {
			return nil, invalid(field+".parts", "at least one part is required")
		}
		var parts []OpenAIContentPart
		var calls []OpenAIToolCall
		for j, p := range content.Parts {
			pf := fmt.Sprintf("%s.parts[%d]", field, j)
			if n := p.kinds(); n != 1 {
				return nil, invalid(pf, "must hold exactly one of text, inlineData, fileData, functionCall or functionResponse, got %d", n)
			}
			switch {
			case p.ExecutableCode != nil || p.CodeExecutionResult != nil:
				// Code the model ran and its result, sent back with its turn: text, as the
				// answer's text shows them to the other surfaces.
				if role != "assistant" {
					return nil, invalid(pf, "code execution parts belong in model turns")
				}
				text, err := codeExecutionText(p)
				if err != nil {
					return nil, invalid(pf, "%v", err)
				}
				parts = append(parts, OpenAIContentPart{Type: "text", Text: text})
			case p.Text != nil:
				if p.Thought {
					continue // earlier thoughts: no provider reads them back from text
				}
				parts = append(parts, OpenAIContentPart{Type: "text", Text: *p.Text})
			case p.InlineData != nil, p.FileData != nil:
				if role != "user" {
					return nil, invalid(pf, "inlineData and fileData are accepted in user turns only")
				}
				part, err := geminiMedia(pf, p)
				if err != nil {
					return nil, err
				}
				parts = append(parts, part)
			case p.FunctionCall != nil:
				if role != "assistant" {
					return nil, invalid(pf+".functionCall", "function calls belong in model turns")
				}
				fc := p.FunctionCall
				if fc.Name == "" {
					return nil, invalid(pf+".functionCall.name", "is required")
				}
				args := strings.TrimSpace(string(fc.Args))
				if args == "" || args == "null" {
					args = "{}"
				}
				if args[0] != '{' {
					return nil, invalid(pf+".functionCall.args", "must be an object")
				}
				id := fc.ID
				if id == "" {
					id = fmt.Sprintf("call_%d_%d", i, j)
				}
				pending = append(pending, geminiCall{id: id, name: fc.Name})
				calls = append(calls, OpenAIToolCall{ID: id, Type: "function", Function: OpenAIFunctionCall{Name: fc.Name, Arguments: args},
					ExtraContent: googleExtra(p.ThoughtSignature)})
			case p.FunctionResponse != nil:
				if role != "user" {
					return nil, invalid(pf+".functionResponse", "function responses belong in user turns")
				}
				fr := p.FunctionResponse
				k := slices.IndexFunc(pending, func(c geminiCall) bool {
					return fr.ID != "" && c.id == fr.ID || fr.ID == "" && c.name == fr.Name
				})
				if k < 0 && fr.ID != "" { // an id the call did not carry: pair by name
					k = slices.IndexFunc(pending, func(c geminiCall) bool { return c.name == fr.Name })
				}
				if k < 0 {
					return nil, invalid(pf+".functionResponse", "answers no earlier functionCall named %q", fr.Name)
				}
				id := pending[k].id
				pending = slices.Delete(pending, k, k+1)
				fields[len(c.Messages)] = pf
				c.Messages = append(c.Messages, OpenAIMessage{Role: "tool", ToolCallID: id, Content: textContent(geminiResult(fr.Response))})
			}
		}
		if len(parts) == 0 && len(calls) == 0 {
			continue // function responses alone, or thoughts alone
		}
		msg := OpenAIMessage{Role: role, ToolCalls: calls}
		switch {
		case len(parts) == 1 && parts[0].Type == "text":
			msg.Content = textContent(parts[0].Text)
		case len(parts) > 0 && !slices.ContainsFunc(parts, func(p OpenAIContentPart) bool { return p.Type != "text" }):
			var b strings.Builder
			for _, p := range parts {
				b.WriteString(p.Text)
			}
			msg.Content = textContent(b.String())
		case len(parts) > 0:
			msg.Content = OpenAIContent{Parts: parts}
		}
		fields[len(c.Messages)] = field
		c.Messages = append(c.Messages, msg)
	}
	c.SafetySettings = r.SafetySettings
	toolFields, err := r.tools(c)
	if err != nil {
		return nil, err
	}
	if err := r.generationConfig(c); err != nil {
		return nil, err
	}
	c.fieldName = func(f string) string { return geminiField(fields, toolFields, f) }
	return c, nil
}

// kinds counts the kinds of data p holds (exactly one is valid).
func (p *GeminiPart) kinds() int {
	n := 0
	for _, set := range []bool{p.Text != nil, p.InlineData != nil, p.FileData != nil, p.FunctionCall != nil, p.FunctionResponse != nil,
		p.ExecutableCode != nil, p.CodeExecutionResult != nil} {
		if set {
			n++
		}
	}
	return n
}

// geminiMedia is an inlineData or fileData part as a chat part: an image_url for images,
// a file for the rest (PDFs).
func geminiMedia(field string, p GeminiPart) (OpenAIContentPart, error) {
	var url, mime, sub string
	if b := p.InlineData; b != nil {
		if b.MimeType == "" {
			return OpenAIContentPart{}, invalid(field+".inlineData.mimeType", "is required")
		}
		url, mime, sub = "data:"+b.MimeType+";base64,"+b.Data, b.MimeType, ".inlineData"
	} else {
		f := p.FileData
		if f.FileURI == "" {
			return OpenAIContentPart{}, invalid(field+".fileData.fileUri", "is required")
		}
		url, mime, sub = f.FileURI, f.MimeType, ".fileData"
	}
	if strings.HasPrefix(mime, "image/") {
		if err := providers.CheckImage(providers.Image{URL: url}); err != nil {
			return OpenAIContentPart{}, invalid(field+sub, "%s", imageReason(err))
		}
		return OpenAIContentPart{Type: "image_url", ImageURL: &OpenAIImageURL{URL: url}}, nil
	}
	if err := providers.CheckFile(providers.File{URL: url}); err != nil {
		return OpenAIContentPart{}, invalid(field+sub, "%s", imageReason(err))
	}
	return OpenAIContentPart{Type: "file", File: &OpenAIFile{FileData: url}}, nil
}

// imageReason is the reason of an image or file check's error.
func imageReason(err error) string {
	if ie, ok := err.(*providers.ImageError); ok {
		return ie.Reason
	}
	return err.Error()
}

// geminiResult is a functionResponse's response as a tool message's text: the string of a
// response whose only member is one (Gemini CLI's {"output": "…"}), else the JSON.
func geminiResult(resp json.RawMessage) string {
	var one map[string]json.RawMessage
	if json.Unmarshal(resp, &one) == nil && len(one) == 1 {
		for _, v := range one {
			var s string
			if json.Unmarshal(v, &s) == nil {
				return s
			}
		}
	}
	if len(resp) == 0 {
		return "{}"
	}
	return string(resp)
}

// tools sets c's tools and tool choice from r's; it returns the Gemini field of each chat
// tool.
func (r *GeminiGenerateRequest) tools(c *OpenAIChatRequest) ([]string, error) {
	var fields []string
	for i, t := range r.Tools {
		tf := fmt.Sprintf("tools[%d]", i)
		switch {
		case t.CodeExecution != nil:
			c.codeExecution = true // Gemini models only: others refuse the request
		case t.URLContext != nil:
			c.urlContext = true
		case t.GoogleSearchRetrieval != nil:
			return nil, invalid(tf+".googleSearchRetrieval", "is not supported; use googleSearch")
		case t.GoogleSearch != nil:
			c.search = true // the model searches with its provider's own search
		}
		for j, d := range t.FunctionDeclarations {
			df := fmt.Sprintf("%s.functionDeclarations[%d]", tf, j)
			if d.Name == "" {
				return nil, invalid(df+".name", "is required")
			}
			params := d.ParametersJSONSchema
			if len(params) == 0 && len(d.Parameters) > 0 {
				var err error
				if params, err = geminiSchema(d.Parameters); err != nil {
					return nil, invalid(df+".parameters", "%v", err)
				}
			} else if len(params) > 0 && len(d.Parameters) > 0 {
				return nil, invalid(df, "give parameters or parametersJsonSchema, not both")
			}
			fields = append(fields, df)
			c.Tools = append(c.Tools, OpenAITool{Type: "function", Function: OpenAIFunction{Name: d.Name, Description: d.Description, Parameters: params}})
		}
	}
	tc := r.ToolConfig
	if tc == nil || tc.FunctionCallingConfig == nil {
		return fields, nil
	}
	fc := tc.FunctionCallingConfig
	switch strings.ToUpper(fc.Mode) {
	case "", "MODE_UNSPECIFIED", "AUTO", "VALIDATED":
		if len(fc.AllowedFunctionNames) > 0 {
			return nil, invalid("toolConfig.functionCallingConfig.allowedFunctionNames", "may be set only with mode ANY")
		}
		if fc.Mode != "" && len(c.Tools) > 0 {
			c.ToolChoice = &OpenAIToolChoice{Mode: providers.ToolChoiceAuto}
		}
	case "NONE":
		if len(c.Tools) > 0 {
			c.ToolChoice = &OpenAIToolChoice{Mode: providers.ToolChoiceNone}
		}
	case "ANY":
		allowed := fc.AllowedFunctionNames
		for k, name := range allowed {
			if !slices.ContainsFunc(c.Tools, func(t OpenAITool) bool { return t.Function.Name == name }) {
				return nil, invalid(fmt.Sprintf("toolConfig.functionCallingConfig.allowedFunctionNames[%d]", k), "%q is not a declared function", name)
			}
		}
		switch len(allowed) {
		case 0:
			c.ToolChoice = &OpenAIToolChoice{Mode: providers.ToolChoiceRequired}
		case 1:
			c.ToolChoice = &OpenAIToolChoice{Mode: providers.ToolChoiceFunction, Name: allowed[0]}
		default: // only the allowed functions, one of which must be called
			var kept []OpenAITool
			var keptFields []string
			for k, t := range c.Tools {
				if slices.Contains(allowed, t.Function.Name) {
					kept, keptFields = append(kept, t), append(keptFields, fields[k])
				}
			}
			c.Tools, fields = kept, keptFields
			c.ToolChoice = &OpenAIToolChoice{Mode: providers.ToolChoiceRequired}
		}
	default:
		return nil, invalid("toolConfig.functionCallingConfig.mode", "must be AUTO, ANY, NONE or VALIDATED, got %q", fc.Mode)
	}
	return fields, nil
}

// generationConfig sets c's sampling, length, output format and reasoning from r's
// generationConfig.
func (r *GeminiGenerateRequest) generationConfig(c *OpenAIChatRequest) error {
	gc := r.GenerationConfig
	if gc == nil {
		return nil
	}
	if t := gc.Temperature; t != nil && (*t < 0 || *t > 2) {
		return invalid("generationConfig.temperature", "must be between 0 and 2, got %g", *t)
	}
	if p := gc.TopP; p != nil && (*p < 0 || *p > 1) {
		return invalid("generationConfig.topP", "must be between 0 and 1, got %g", *p)
	}
	if n := gc.MaxOutputTokens; n != nil && *n < 1 {
		return invalid("generationConfig.maxOutputTokens", "must be at least 1, got %d", *n)
	}
	c.Temperature, c.TopP, c.MaxCompletionTokens = gc.Temperature, gc.TopP, gc.MaxOutputTokens
	c.Stop = OpenAIStop(gc.StopSequences)
	c.Seed, c.PresencePenalty, c.FrequencyPenalty = gc.Seed, gc.PresencePenalty, gc.FrequencyPenalty
	if gc.ResponseLogprobs {
		c.Logprobs = json.RawMessage("true")
	}
	if gc.Logprobs != nil {
		// Checked as top_logprobs (0 to 20, with responseLogprobs only), named as Gemini's.
		c.TopLogprobs = json.RawMessage(strconv.Itoa(*gc.Logprobs))
	}
	if gc.TopK != nil {
		k := int(*gc.TopK)
		if k < 1 || float64(k) != *gc.TopK {
			return invalid("generationConfig.topK", "must be a whole number of at least 1, got %g", *gc.TopK)
		}
		c.topK = &k
	}
	if n := gc.CandidateCount; n != nil {
		if *n < 1 || *n > MaxChoices {
			return invalid("generationConfig.candidateCount", "must be between 1 and %d, got %d", MaxChoices, *n)
		}
		if *n > 1 && r.Stream {
			return invalid("generationConfig.candidateCount", "streamGenerateContent answers one candidate; use generateContent for more")
		}
		if *n > 1 {
			c.N = n
		}
	}
	for k, m := range gc.ResponseModalities {
		if !strings.EqualFold(m, "TEXT") {
			return invalid(fmt.Sprintf("generationConfig.responseModalities[%d]", k), "only TEXT is supported, got %q", m)
		}
	}
	switch mime := gc.ResponseMimeType; mime {
	case "", "text/plain":
		if len(gc.ResponseSchema) > 0 || len(gc.ResponseJSONSchema) > 0 {
			return invalid("generationConfig.responseMimeType", "must be application/json with a response schema, got %q", mime)
		}
	case "application/json":
		schema := gc.ResponseJSONSchema
		if len(gc.ResponseSchema) > 0 {
			if len(schema) > 0 {
				return invalid("generationConfig.responseSchema", "give responseSchema or responseJsonSchema, not both")
			}
			var err error
			if schema, err = geminiSchema(gc.ResponseSchema); err != nil {
				return invalid("generationConfig.responseSchema", "%v", err)
			}
		}
		if len(schema) == 0 {
			c.ResponseFormat = &OpenAIResponseFormat{Type: providers.ResponseJSONObject}
			break
		}
		c.ResponseFormat = &OpenAIResponseFormat{Type: providers.ResponseJSONSchema, JSONSchema: &OpenAIJSONSchema{Name: "response", Schema: schema}}
	default:
		return invalid("generationConfig.responseMimeType", `must be "text/plain" or "application/json", got %q`, mime)
	}
	if tc := gc.ThinkingConfig; tc != nil {
		level := strings.ToLower(tc.ThinkingLevel)
		switch level {
		case "", "low", "medium", "high", "minimal":
		default:
			return invalid("generationConfig.thinkingConfig.thinkingLevel", "must be LOW, MEDIUM or HIGH, got %q", tc.ThinkingLevel)
		}
		switch b := tc.ThinkingBudget; {
		case b != nil && *b == 0:
			c.Thinking = &OpenAIThinking{Type: "disabled"}
		case b != nil && *b > 0:
			c.Thinking = &OpenAIThinking{Type: "enabled", BudgetTokens: *b}
			c.thinkingEffort = level
		case b != nil && *b != -1:
			return invalid("generationConfig.thinkingConfig.thinkingBudget", "must be -1 (dynamic), 0 (off) or a number of tokens, got %d", *b)
		case b != nil || level != "" || tc.IncludeThoughts: // dynamic: the model decides
			c.Thinking = &OpenAIThinking{Type: "adaptive"}
			c.thinkingEffort = level
		}
		c.showReasoning = tc.IncludeThoughts
	}
	return nil
}

// geminiTypes are the type names of Google's schema that JSON Schema spells in lower case.
var geminiTypes = [][2]string{{`"type":"OBJECT"`, `"type":"object"`}, {`"type":"STRING"`, `"type":"string"`}, {`"type":"INTEGER"`, `"type":"integer"`},
	{`"type":"NUMBER"`, `"type":"number"`}, {`"type":"BOOLEAN"`, `"type":"boolean"`}, {`"type":"ARRAY"`, `"type":"array"`}, {`"type":"NULL"`, `"type":"null"`}}

// geminiSchema translates Google's OpenAPI-subset schema (types in capitals, nullable,
// propertyOrdering) into JSON Schema. A schema whose only difference is the case of its
// types (what Google's SDKs send for Type.OBJECT and the rest) is rewritten as text, in
// its compact form, where no string can hold an unescaped "type":"…" pair; the others are
// rebuilt node by node.
func geminiSchema(raw json.RawMessage) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("not a schema: %w", err)
	}
	out := buf.Bytes()
	if !bytes.Contains(out, []byte(`"nullable"`)) && !bytes.Contains(out, []byte(`"propertyOrdering"`)) &&
		!bytes.Contains(out, []byte(`TYPE_UNSPECIFIED`)) && len(out) > 0 && out[0] == '{' && !bytes.Contains(out, []byte(`"properties":[`)) {
		for _, t := range geminiTypes {
			if bytes.Contains(out, []byte(t[0])) {
				out = bytes.ReplaceAll(out, []byte(t[0]), []byte(t[1]))
			}
		}
		return out, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("not a schema: %w", err)
	}
	node, err := jsonSchemaOf(v, 0)
	if err != nil {
		return nil, err
	}
	return json.Marshal(node)
}

// jsonSchemaOf is one node of a Google schema as JSON Schema.
func jsonSchemaOf(v any, depth int) (any, error) {
	if depth > 64 {
		return nil, fmt.Errorf("nested more than 64 levels")
	}
	switch n := v.(type) {
	case []any:
		out := make([]any, len(n))
		for i, e := range n {
			var err error
			if out[i], err = jsonSchemaOf(e, depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(n))
		for k, e := range n {
			switch k {
			case "propertyOrdering":
				continue
			case "type":
				if s, ok := e.(string); ok {
					e = strings.ToLower(s)
					if e == "type_unspecified" {
						continue
					}
				}
				out[k] = e
			case "properties", "$defs", "definitions":
				props, ok := e.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("%s must be an object", k)
				}
				m := make(map[string]any, len(props))
				for name, p := range props {
					var err error
					if m[name], err = jsonSchemaOf(p, depth+1); err != nil {
						return nil, err
					}
				}
				out[k] = m
			case "items", "anyOf", "oneOf", "allOf", "additionalProperties", "not":
				var err error
				if out[k], err = jsonSchemaOf(e, depth+1); err != nil {
					return nil, err
				}
			default:
				out[k] = e
			}
		}
		if nullable, _ := out["nullable"].(bool); nullable {
			nullableSchema(out)
		}
		delete(out, "nullable")
		return out, nil
	}
	return v, nil
}

// nullableSchema makes the JSON Schema node out admit null, as Google's nullable does: a
// type becomes [type, "null"], an enum gains null (JSON Schema's enum would refuse it
// whatever the type says), and a node that is only an anyOf gains a {"type": "null"}
// branch.
func nullableSchema(out map[string]any) {
	switch t := out["type"].(type) {
	case string:
		if t != "null" {
			out["type"] = []any{t, "null"}
		}
	case []any:
		if !slices.Contains(t, any("null")) {
			out["type"] = append(t, "null")
		}
	case nil:
		if branches, ok := out["anyOf"].([]any); ok && !slices.ContainsFunc(branches, func(b any) bool {
			m, _ := b.(map[string]any)
			return m != nil && m["type"] == "null"
		}) {
			out["anyOf"] = append(branches, map[string]any{"type": "null"})
		}
	}
	if enum, ok := out["enum"].([]any); ok && !slices.Contains(enum, nil) {
		out["enum"] = append(enum, nil)
	}
}

// geminiField is the Gemini API name of a field the chat request's validation named.
func geminiField(fields map[int]string, toolFields []string, f string) string {
	if rest, ok := strings.CutPrefix(f, "messages["); ok {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return f
		}
		i, err := strconv.Atoi(rest[:end])
		if err != nil {
			return f
		}
		base, known := fields[i]
		if !known {
			return f
		}
		sub := rest[end+1:]
		if pr, ok := strings.CutPrefix(sub, ".content["); ok && !strings.Contains(base, ".parts[") && base != "systemInstruction" {
			return base + ".parts[" + pr
		}
		return base
	}
	if rest, ok := strings.CutPrefix(f, "tools["); ok {
		end := strings.IndexByte(rest, ']')
		if i, err := strconv.Atoi(rest[:max(end, 0)]); err == nil && end > 0 && i < len(toolFields) {
			sub := strings.Replace(rest[end+1:], ".function", "", 1)
			return toolFields[i] + sub
		}
		return f
	}
	for chat, api := range map[string]string{
		"max_completion_tokens": "generationConfig.maxOutputTokens", "stop": "generationConfig.stopSequences",
		"temperature": "generationConfig.temperature", "top_p": "generationConfig.topP", "n": "generationConfig.candidateCount",
		"response_format": "generationConfig.responseSchema", "tool_choice": "toolConfig.functionCallingConfig",
		"thinking": "generationConfig.thinkingConfig", "seed": "generationConfig.seed",
		"presence_penalty": "generationConfig.presencePenalty", "frequency_penalty": "generationConfig.frequencyPenalty",
		"logprobs": "generationConfig.responseLogprobs", "top_logprobs": "generationConfig.logprobs",
		"search": "tools.googleSearch", "metadata.tags": "labels", "safety_settings": "safetySettings",
		"code_execution": "tools.codeExecution", "url_context": "tools.urlContext",
	} {
		if f == chat || strings.HasPrefix(f, chat+".") || strings.HasPrefix(f, chat+"[") {
			return api + strings.TrimPrefix(f, chat)
		}
	}
	return f
}

// codeExecutionText is an executableCode or codeExecutionResult part as a Markdown code
// block, as the Gemini adapter renders them in an answer's text.
func codeExecutionText(p GeminiPart) (string, error) {
	if p.ExecutableCode != nil {
		var c struct{ Language, Code string }
		if err := json.Unmarshal(p.ExecutableCode, &c); err != nil {
			return "", fmt.Errorf("executableCode: %w", err)
		}
		return "\n```" + strings.ToLower(c.Language) + "\n" + c.Code + "\n```\n", nil
	}
	var r struct{ Outcome, Output string }
	if err := json.Unmarshal(p.CodeExecutionResult, &r); err != nil {
		return "", fmt.Errorf("codeExecutionResult: %w", err)
	}
	return "\n```\n" + r.Output + "\n```\n", nil
}
