package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// ResponsesMode says when an OpenAI-format adapter calls OpenAI's Responses API
// (POST {base}/responses) instead of chat completions (Config.ResponsesAPI).
type ResponsesMode string

const (
	// ResponsesAuto (the default) uses the Responses API on OpenAI's own API only, for the
	// models it alone serves (codex, the -pro models, deep research: OpenAIResponsesOnly),
	// for a request with Search to a model that searches there (not a search-preview
	// model), and for reasoning models when the request asks to see their reasoning
	// (Thinking.Summary) or gives back reasoning they returned encrypted
	// (ReasoningBlock.Encrypted): chat completions return neither reasoning summaries nor
	// the encrypted reasoning a tool loop needs back.
	ResponsesAuto ResponsesMode = ""
	// ResponsesAlways sends every request to the Responses API (a proxy of OpenAI's, Azure's
	// v1 API).
	ResponsesAlways ResponsesMode = "always"
	// ResponsesNever keeps every request on chat completions.
	ResponsesNever ResponsesMode = "never"
)

// valid reports whether m is one of the modes above ("auto" included).
func (m ResponsesMode) valid() bool {
	switch m {
	case ResponsesAuto, "auto", ResponsesAlways, ResponsesNever:
		return true
	}
	return false
}

// OpenAIResponsesOnly reports whether model is one of OpenAI's models served only by the
// Responses API (LiteLLM's catalogue lists them with mode "responses"): the codex models,
// the -pro reasoning models, deep research and computer use.
func OpenAIResponsesOnly(model string) bool {
	if strings.Contains(model, "codex") || strings.Contains(model, "deep-research") || strings.HasPrefix(model, "computer-use") {
		return true
	}
	// o1-pro, o3-pro, gpt-5-pro, gpt-5.4-pro and their dated snapshots.
	if !openAIReasoningModel(model) {
		return false
	}
	name, _, _ := strings.Cut(model, "-20") // drop a snapshot date
	return strings.HasSuffix(name, "-pro")
}

// openAIResponsesSearch reports whether model takes the Responses API's web search:
// GPT-4o and GPT-4o mini, GPT-4.1 and 4.1 mini, the GPT-5 family and its codex models, o3,
// o4-mini and deep research, which always searches (OpenAI's list; not gpt-4.1-nano, nor
// the audio, realtime or -chat models).
func openAIResponsesSearch(model string) bool {
	if strings.Contains(model, "deep-research") {
		return true
	}
	for _, no := range []string{"gpt-4.1-nano", "audio", "realtime", "-chat", "search-preview", "o3-mini"} {
		if strings.Contains(model, no) {
			return false
		}
	}
	for _, p := range []string{"gpt-4o", "gpt-4.1", "gpt-5", "o3", "o4-mini"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// useResponses reports whether req goes to the Responses API (see ResponsesMode).
func (o *OpenAI) useResponses(req *Request) bool {
	switch o.ep.cfg.ResponsesAPI {
	case ResponsesAlways:
		return true
	case ResponsesNever:
		return false
	}
	if !o.ownAPI {
		return false
	}
	if o.azure != nil && !o.azure.v1 {
		return false // Azure's deployment URLs have no Responses API (its v1 API has)
	}
	fam := o.family(req.Model)
	if OpenAIResponsesOnly(fam) || req.Search && o.responsesSearch(req.Model) {
		return true
	}
	return openAIReasoningModel(fam) && (req.Thinking != nil && req.Thinking.Summary || o.hasEncryptedReasoning(req.Messages))
}

// hasEncryptedReasoning reports whether an assistant turn of msgs carries reasoning this
// provider returned encrypted.
func (o *OpenAI) hasEncryptedReasoning(msgs []Message) bool {
	for i := range msgs {
		for _, r := range msgs[i].Reasoning {
			if r.EncryptedFor(o.Name()) {
				return true
			}
		}
	}
	return false
}

// Wire types of the Responses API. Input items are one struct per type, so that each is
// sent with the fields its type requires (a reasoning item's summary even when empty, a
// call's output even when "").
type responsesRequest struct {
	Model             string              `json:"model"`
	Instructions      string              `json:"instructions,omitempty"`
	Input             []any               `json:"input"`
	Tools             []any               `json:"tools,omitempty"` // responsesTool, or {"type": "web_search"}
	ToolChoice        any                 `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool               `json:"parallel_tool_calls,omitempty"`
	Text              *responsesText      `json:"text,omitempty"`
	Reasoning         *responsesReasoning `json:"reasoning,omitempty"`
	MaxOutputTokens   int                 `json:"max_output_tokens,omitempty"`
	Temperature       *float64            `json:"temperature,omitempty"`
	TopP              *float64            `json:"top_p,omitempty"`
	// Store is always false: the gateway keeps conversations itself, and organisations
	// with zero data retention can only call with it off.
	Store            bool     `json:"store"`
	Include          []string `json:"include,omitempty"`
	Stream           bool     `json:"stream,omitempty"`
	User             string   `json:"user,omitempty"`
	SafetyIdentifier string   `json:"safety_identifier,omitempty"`
	PromptCacheKey   string   `json:"prompt_cache_key,omitempty"`
	ServiceTier      string   `json:"service_tier,omitempty"`
}

type responsesMessage struct {
	Type    string `json:"type"` // "message"
	Role    string `json:"role"`
	Content any    `json:"content"` // a string, or []responsesPart for a user turn with images or files
}

type responsesPart struct {
	Type     string  `json:"type"` // input_text, input_image, input_file
	Text     *string `json:"text,omitempty"`
	ImageURL string  `json:"image_url,omitempty"`
	Detail   string  `json:"detail,omitempty"`
	FileData string  `json:"file_data,omitempty"`
	Filename string  `json:"filename,omitempty"`
}

type responsesFunctionCall struct {
	Type      string `json:"type"` // "function_call"
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type responsesCallOutput struct {
	Type   string `json:"type"` // "function_call_output"
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

type responsesReasoningItem struct {
	Type             string             `json:"type"` // "reasoning"
	Summary          []responsesSummary `json:"summary"`
	EncryptedContent string             `json:"encrypted_content"`
}

type responsesSummary struct {
	Type string `json:"type"` // "summary_text"
	Text string `json:"text"`
}

type responsesTool struct {
	Type        string          `json:"type"` // "function"
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	// Strict is always sent: the Responses API's default is true, chat completions' false.
	Strict bool `json:"strict"`
}

type responsesText struct {
	Format    *responsesFormat `json:"format,omitempty"`
	Verbosity string           `json:"verbosity,omitempty"`
}

type responsesFormat struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

type responsesReasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// responsesSearchTool is the Responses API's hosted web search with o's options.
func responsesSearchTool(o *SearchOptions) any {
	if o == nil || o.ContextSize == "" && o.Location == nil && len(o.AllowedDomains) == 0 {
		return webSearchTool
	}
	t := map[string]any{"type": "web_search"}
	if o.ContextSize != "" {
		t["search_context_size"] = o.ContextSize
	}
	if o.Location != nil {
		t["user_location"] = o.Location.approximate()
	}
	if len(o.AllowedDomains) > 0 {
		t["filters"] = map[string]any{"allowed_domains": o.AllowedDomains}
	}
	return t
}

// webSearchTool is the Responses API's hosted web search, for a request with Search;
// webSearchPreviewTool the one deep research takes, which it cannot do without.
var (
	webSearchTool        = map[string]string{"type": "web_search"}
	webSearchPreviewTool = map[string]string{"type": "web_search_preview"}
)

// emptyParameters is the schema of a function declared without one (the Responses API
// requires parameters).
var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// minResponsesOutputTokens is the least max_output_tokens the Responses API accepts.
const minResponsesOutputTokens = 16

// responsesBody builds the Responses API request for req.
//
// Leading system turns become instructions, later ones developer messages; an assistant
// turn is its encrypted reasoning items (ReasoningBlock.Encrypted; other providers'
// reasoning is left out), its text and its function calls, in that order; a tool turn is a
// function_call_output. Reasoning models get the sampling settings chat completions give
// them (none but their defaults). The API has no stop sequences (Check refuses them), nor
// seed, penalties or logit_bias, which are left out. Reasoning models are asked for their
// encrypted reasoning (store is off), and for a summary of it when summary is set (the
// request asks to see it, Thinking.Summary, and OpenAI gives this organisation summaries).
func (o *OpenAI) responsesBody(req *Request, stream, summary bool) ([]byte, error) {
	b := responsesRequest{Model: req.Model, Temperature: req.Temperature, TopP: req.TopP, Stream: stream,
		User: req.User, SafetyIdentifier: req.SafetyIdentifier, PromptCacheKey: req.PromptCacheKey, ServiceTier: req.ServiceTier}
	msgs := req.Messages
	var instructions []string
	for len(msgs) > 0 && msgs[0].Role == "system" {
		instructions = append(instructions, msgs[0].Content)
		msgs = msgs[1:]
	}
	b.Instructions = strings.Join(instructions, "\n\n")
	b.Input = make([]any, 0, len(msgs))
	fam := o.family(req.Model)
	reasons := openAIReasoningModel(fam) || strings.HasPrefix(fam, "computer-use")
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case "system", "developer":
			b.Input = append(b.Input, responsesMessage{Type: "message", Role: "developer", Content: m.Content})
		case "tool":
			b.Input = append(b.Input, responsesCallOutput{Type: "function_call_output", CallID: m.ToolCallID, Output: m.Content})
		case "assistant":
			for _, r := range m.Reasoning {
				if !r.EncryptedFor(o.Name()) || !reasons {
					// Another provider's (its key cannot decrypt it), or for a model that does
					// not reason (OpenAI refuses reasoning items there).
					continue
				}
				item := responsesReasoningItem{Type: "reasoning", Summary: []responsesSummary{}, EncryptedContent: r.Encrypted}
				if r.Text != "" {
					item.Summary = append(item.Summary, responsesSummary{Type: "summary_text", Text: r.Text})
				}
				b.Input = append(b.Input, item)
			}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				b.Input = append(b.Input, responsesMessage{Type: "message", Role: "assistant", Content: m.Content})
			}
			for _, c := range m.ToolCalls {
				args := c.Arguments
				if args == "" {
					args = "{}"
				}
				b.Input = append(b.Input, responsesFunctionCall{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: args})
			}
		default: // user
			var content any = m.Content
			if len(m.Parts) > 0 {
				content = responsesParts(m.Parts)
			}
			b.Input = append(b.Input, responsesMessage{Type: "message", Role: "user", Content: content})
		}
	}
	reasoning := openAIReasoningModel(fam)
	if reasoning {
		b.Temperature, b.TopP = nil, nil
		if t := req.Temperature; t != nil && *t == 1 {
			b.Temperature = t
		}
		b.Include = []string{"reasoning.encrypted_content"}
		effort := req.ReasoningEffort
		if effort != "" {
			effort = openAIEffort(fam, effort)
		} else if req.Thinking != nil {
			effort = openAIReasoningEffort(fam, req.Thinking)
		}
		if effort != "" || req.Thinking != nil {
			b.Reasoning = &responsesReasoning{Effort: effort}
			if summary {
				b.Reasoning.Summary = "auto"
			}
		}
	}
	switch {
	case strings.Contains(fam, "deep-research"):
		// Deep research needs a source to research: OpenAI refuses it without one.
		b.Tools = append(b.Tools, webSearchPreviewTool)
	case req.Search:
		b.Tools = append(b.Tools, responsesSearchTool(req.SearchOptions))

		if b.Reasoning != nil && b.Reasoning.Effort == "minimal" {
			b.Reasoning.Effort = "low" // GPT-5 does not search at minimal effort
		}
	}
	if len(req.Tools) > 0 {
		for _, t := range req.Tools {
			params := t.Parameters
			if len(params) == 0 || string(params) == "null" {
				params = emptyParameters
			}
			b.Tools = append(b.Tools, responsesTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: params, Strict: t.Strict})
		}
		if c := req.ToolChoice; c != nil {
			if c.Mode == ToolChoiceFunction {
				b.ToolChoice = map[string]string{"type": "function", "name": c.Name}
			} else if c.Mode != "" {
				b.ToolChoice = c.Mode
			}
		}
		b.ParallelToolCalls = req.ParallelToolCalls
		if b.ParallelToolCalls == nil && req.SingleToolCall {
			no := false // the Responses API takes it for every model
			b.ParallelToolCalls = &no
		}
	}
	if req.Search && req.SearchOptions != nil && req.SearchOptions.Required && !strings.Contains(fam, "deep-research") {
		// The model must search: the one tool it may (and must) call.
		b.ToolChoice = map[string]any{"type": "allowed_tools", "mode": "required", "tools": []map[string]string{{"type": "web_search"}}}
	}
	if f := req.ResponseFormat; f.JSON() {
		b.Text = &responsesText{Format: &responsesFormat{Type: f.Type}}
		if f.Type == ResponseJSONSchema {
			strict := f.Strict
			b.Text.Format.Name, b.Text.Format.Description, b.Text.Format.Schema, b.Text.Format.Strict = f.Name, f.Description, f.Schema, &strict
		}
	}
	if req.Verbosity != "" {
		if b.Text == nil {
			b.Text = &responsesText{}
		}
		b.Text.Verbosity = req.Verbosity
	}
	if req.MaxTokens > 0 {
		b.MaxOutputTokens = max(req.MaxTokens, minResponsesOutputTokens)
	}
	return json.Marshal(b)
}

// responsesParts is a user turn's content as Responses API input parts.
func responsesParts(parts []Part) []responsesPart {
	out := make([]responsesPart, len(parts))
	for i := range parts {
		switch p := &parts[i]; {
		case p.Image != nil:
			detail := p.Image.Detail
			if detail == "" {
				detail = "auto" // required by the Responses API
			}
			out[i] = responsesPart{Type: "input_image", ImageURL: p.Image.URL, Detail: detail}
		case p.File != nil:
			name := p.File.Filename
			if name == "" {
				name = "document.pdf"
			}
			out[i] = responsesPart{Type: "input_file", FileData: p.File.URL, Filename: name}
		default:
			out[i] = responsesPart{Type: "input_text", Text: &p.Text}
		}
	}
	return out
}

// checkResponses refuses what the Responses API cannot take: stop sequences and an
// assistant prefix to continue.
func (o *OpenAI) checkResponses(req *Request) error {
	if len(req.Stop) > 0 {
		return &UnsupportedError{Provider: o.Name(), Field: "stop",
			Reason: "model " + req.Model + " is served by OpenAI's Responses API, which has no stop sequences"}
	}
	if req.AssistantPrefix != "" {
		return &UnsupportedError{Provider: o.Name(), Field: "messages",
			Reason: "model " + req.Model + " is served by OpenAI's Responses API, which cannot continue a partial answer"}
	}
	return nil
}

// startResponses sends req to the Responses API.
//
// OpenAI gives reasoning summaries to verified organisations only, and refuses the request
// of any other that asks for one: then the call is made again at once without it, and the
// adapter asks no more summaries (the reasoning still goes on, encrypted, across a tool
// loop; it is just not shown).
func (o *OpenAI) startResponses(ctx context.Context, req *Request, h http.Header, stream bool) (*call, error) {
	if err := o.checkResponses(req); err != nil {
		return nil, &Error{Provider: o.ep.cfg.Name, Model: req.Model, Kind: KindBadRequest, Message: err.Error(), Err: err}
	}
	summary := req.Thinking != nil && req.Thinking.Summary && !o.noSummaries.Load()
	for {
		payload, err := o.responsesBody(req, stream, summary)
		if err != nil {
			return nil, &Error{Provider: o.ep.cfg.Name, Model: req.Model, Kind: KindBadRequest, Message: "encoding request", Err: err}
		}
		c, err := o.ep.send(ctx, req.Model, o.url("/responses", req.Model), h, payload, parseOpenAIError)
		if summary && summariesRefused(err) {
			o.noSummaries.Store(true)
			o.ep.log.Warn("providers: OpenAI refuses reasoning summaries to this organisation (not verified); asking for none",
				"provider", o.ep.cfg.Name, "model", req.Model)
			summary = false
			continue
		}
		return c, err
	}
}

// summariesRefused reports whether err is OpenAI refusing a reasoning summary to an
// organisation that is not verified.
func summariesRefused(err error) bool {
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind != KindBadRequest {
		return false
	}
	m := strings.ToLower(pe.Message)
	return strings.Contains(m, "verified") && strings.Contains(m, "summar")
}

// responsesUsage is the Responses API's usage object.
type responsesUsage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	InputTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

func (u *responsesUsage) usage() Usage {
	out := Usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens}
	if u.InputTokensDetails != nil {
		out.CachedTokens = u.InputTokensDetails.CachedTokens
	}
	if u.OutputTokensDetails != nil {
		out.ReasoningTokens = u.OutputTokensDetails.ReasoningTokens
	}
	return out
}

// responsesOutputItem is an item of a response's output: a message, a function call or a
// reasoning item.
type responsesOutputItem struct {
	Type    string `json:"type"`
	Content []struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Refusal     string `json:"refusal"`
		Annotations []struct {
			Type  string `json:"type"`
			URL   string `json:"url"`
			Title string `json:"title"`
		} `json:"annotations"`
	} `json:"content"`
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`
	EncryptedContent string `json:"encrypted_content"`
	CallID           string `json:"call_id"`
	Name             string `json:"name"`
	Arguments        string `json:"arguments"`
}

// sources is the pages a message item's text cites (its url_citation annotations), each
// once, in order.
func (it *responsesOutputItem) sources() []Source {
	var out []Source
	seen := sourceSet{}
	for _, p := range it.Content {
		for _, a := range p.Annotations {
			if a.Type == "url_citation" {
				out = seen.add(out, a.URL, a.Title)
			}
		}
	}
	return out
}

// summary is a reasoning item's summary parts joined as paragraphs.
func (it *responsesOutputItem) summary() string {
	parts := make([]string, 0, len(it.Summary))
	for _, s := range it.Summary {
		if s.Text != "" {
			parts = append(parts, s.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// responsesResponse is a response object: the body of a non-streamed call and the
// "response" of the stream's closing events.
type responsesResponse struct {
	Model             string `json:"model"`
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *struct {
		Code    any    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Output []responsesOutputItem `json:"output"`
	Usage  *responsesUsage       `json:"usage"`
}

// errorCode is the response's error code as a string.
func (r *responsesResponse) errorCode() string {
	if r.Error == nil {
		return ""
	}
	s, _ := r.Error.Code.(string)
	return s
}

// outcome classifies a finished response: its finish reason, or the failure it ended in
// (a failed response, or one the content filter cut: billed with the usage it reports).
func (r *responsesResponse) outcome(c *call, calls bool) (string, *Error) {
	var u *Usage
	if r.Usage != nil {
		v := r.Usage.usage()
		u = &v
	}
	switch r.Status {
	case "failed", "cancelled":
		msg := "response " + r.Status
		if r.Error != nil && r.Error.Message != "" {
			msg = r.Error.Message
		}
		return "", c.failure(bodyErrorKind(r.errorCode(), msg), msg, nil)
	case "incomplete":
		if r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "content_filter" {
			e := c.failure(KindContentFilter, "response blocked by the content filter", nil)
			e.Usage = u
			return "", e
		}
		return "length", nil
	}
	if calls {
		return "tool_calls", nil
	}
	return "stop", nil
}

// by is the provider of call c, which returned encrypted (ReasoningBlock.EncryptedBy).
func by(c *call, encrypted string) string {
	if encrypted == "" {
		return ""
	}
	return c.ep.cfg.Name
}

// completeResponses reads a non-streamed Responses API answer.
func completeResponses(c *call) (*Response, error) {
	raw, err := c.readAll(maxResponseBody)
	if err != nil {
		return nil, err
	}
	var r responsesResponse
	if err := decodeUpstream(raw, &r); err != nil {
		return nil, c.malformedBody(raw, int64(len(raw)), err, "response body")
	}
	resp := &Response{Model: r.Model}
	searches := 0 // web_search_call items: OpenAI bills each
	for i := range r.Output {
		it := &r.Output[i]
		switch it.Type {
		case "message":
			for _, p := range it.Content {
				resp.Text += p.Text
				resp.Refusal += p.Refusal
			}
			resp.Sources = append(resp.Sources, it.sources()...)
		case "function_call":
			resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments})
		case "reasoning":
			if s := it.summary(); s != "" || it.EncryptedContent != "" {
				resp.Reasoning = append(resp.Reasoning, ReasoningBlock{Text: s, Encrypted: it.EncryptedContent, EncryptedBy: by(c, it.EncryptedContent)})
			}
		case "web_search_call":
			searches++
		}
	}
	finish, failure := r.outcome(c, len(resp.ToolCalls) > 0)
	if failure != nil {
		return nil, failure
	}
	resp.FinishReason = finish
	if r.Usage != nil {
		resp.Usage = r.Usage.usage()
	}
	resp.Usage.WebSearches = searches
	return resp, nil
}

// responsesEvent is one event of a Responses API stream; which fields are set depends on
// its type.
type responsesEvent struct {
	Type         string              `json:"type"`
	OutputIndex  int                 `json:"output_index"`
	SummaryIndex int                 `json:"summary_index"`
	Delta        string              `json:"delta"`
	Item         responsesOutputItem `json:"item"`
	Response     responsesResponse   `json:"response"`
	// Code and Message are an "error" event's.
	Code    any    `json:"code"`
	Message string `json:"message"`
}

// responsesStream turns a Responses API event stream into chunks.
type responsesStream struct {
	streamState
	done bool // response.completed (or incomplete) came: the end of the body is clean
	// calls maps an output index to the answer's tool-call index; args counts the
	// argument bytes streamed for it (a call whose arguments came only whole, with its
	// done event, gets them then).
	calls map[int]int
	args  map[int]int
	// thoughts maps an output index to its reasoning block index; summaries is the last
	// summary part of each block that had text (a new part starts a paragraph).
	thoughts  map[int]int
	summaries map[int]int
	searches  int // web_search_call items done, in the final usage
}

func newResponsesStream(c *call) *responsesStream {
	return &responsesStream{streamState: newStreamState(c), calls: map[int]int{}, args: map[int]int{},
		thoughts: map[int]int{}, summaries: map[int]int{}}
}

// thought is the reasoning block index of the reasoning item at output index i.
func (s *responsesStream) thought(i int) int {
	k, ok := s.thoughts[i]
	if !ok {
		k = len(s.thoughts)
		s.thoughts[i] = k
	}
	return k
}

// Recv returns the next chunk, io.EOF after the response completed, or an *Error.
func (s *responsesStream) Recv() (Chunk, error) {
	if s.err != nil {
		return Chunk{}, s.err
	}
	for {
		ev, err := s.next()
		if err == io.EOF {
			if s.done {
				return Chunk{}, s.stop(io.EOF)
			}
			return Chunk{}, s.fail(KindStreamBroken, "stream ended before response.completed", nil)
		}
		if err != nil {
			return Chunk{}, err
		}
		if ev.raw {
			return Chunk{}, s.failRaw(ev.data, parseOpenAIError)
		}
		data := bytes.TrimSpace(ev.data)
		if string(data) == "[DONE]" {
			if s.done {
				return Chunk{}, s.stop(io.EOF)
			}
			continue
		}
		var e responsesEvent
		if err := decodeUpstream(data, &e); err != nil {
			if s.skip(data) {
				continue
			}
			return Chunk{}, s.fail(KindStreamBroken, "malformed stream event", err)
		}
		if out, ok, err := s.chunk(&e); err != nil || ok {
			return out, err
		}
	}
}

// chunk is the chunk of event e, ok false when it carries nothing to relay.
func (s *responsesStream) chunk(e *responsesEvent) (out Chunk, ok bool, err error) {
	switch e.Type {
	case "response.output_text.delta":
		return Chunk{Text: e.Delta}, e.Delta != "", nil
	case "response.refusal.delta":
		return Chunk{Refusal: e.Delta}, e.Delta != "", nil
	case "response.reasoning_summary_text.delta":
		if e.Delta == "" {
			return Chunk{}, false, nil
		}
		k, text := s.thought(e.OutputIndex), e.Delta
		if last, seen := s.summaries[k]; seen && last != e.SummaryIndex {
			text = "\n\n" + text
		}
		s.summaries[k] = e.SummaryIndex
		return Chunk{Reasoning: &ReasoningDelta{Index: k, Text: text}}, true, nil
	case "response.output_item.added":
		if e.Item.Type == "reasoning" {
			// The model reasons, silently unless a summary was asked (ReasoningDelta.Started).
			return Chunk{Reasoning: &ReasoningDelta{Index: s.thought(e.OutputIndex)}}, true, nil
		}
		if e.Item.Type != "function_call" {
			return Chunk{}, false, nil
		}
		n := len(s.calls)
		s.calls[e.OutputIndex] = n
		return Chunk{ToolCalls: []ToolCallDelta{{Index: n, ID: e.Item.CallID, Name: e.Item.Name}}}, true, nil
	case "response.function_call_arguments.delta":
		n, known := s.calls[e.OutputIndex]
		if !known || e.Delta == "" {
			return Chunk{}, false, nil
		}
		s.args[e.OutputIndex] += len(e.Delta)
		return Chunk{ToolCalls: []ToolCallDelta{{Index: n, Arguments: e.Delta}}}, true, nil
	case "response.output_item.done":
		switch e.Item.Type {
		case "web_search_call":
			s.searches++
			return Chunk{}, false, nil
		case "message":
			sources := e.Item.sources()
			return Chunk{Sources: sources}, len(sources) > 0, nil
		case "reasoning":
			if e.Item.EncryptedContent == "" {
				return Chunk{}, false, nil
			}
			return Chunk{Reasoning: &ReasoningDelta{Index: s.thought(e.OutputIndex), Encrypted: e.Item.EncryptedContent,
				EncryptedBy: by(s.c, e.Item.EncryptedContent)}}, true, nil
		case "function_call":
			n, known := s.calls[e.OutputIndex]
			if !known || s.args[e.OutputIndex] > 0 || e.Item.Arguments == "" {
				return Chunk{}, false, nil
			}
			s.args[e.OutputIndex] = len(e.Item.Arguments)
			return Chunk{ToolCalls: []ToolCallDelta{{Index: n, Arguments: e.Item.Arguments}}}, true, nil
		}
	case "response.completed", "response.incomplete", "response.failed":
		finish, failure := e.Response.outcome(s.c, len(s.calls) > 0)
		if failure != nil {
			return Chunk{}, false, s.stop(failure)
		}
		s.done = true
		out := Chunk{FinishReason: finish}
		if e.Response.Usage != nil || s.searches > 0 {
			var u Usage
			if e.Response.Usage != nil {
				u = e.Response.Usage.usage()
			}
			u.WebSearches = s.searches
			out.Usage = &u
		}
		return out, true, nil
	case "error":
		code, _ := e.Code.(string)
		msg := e.Message
		if msg == "" {
			msg = "error event"
		}
		return Chunk{}, false, s.fail(bodyErrorKind(code, msg), msg, nil)
	}
	return Chunk{}, false, nil
}
