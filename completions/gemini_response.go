package completions

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/switchyard-ai/switchyard/providers"
)

// GeminiResponse is a GenerateContentResponse: the whole answer of generateContent, or one
// chunk of streamGenerateContent.
type GeminiResponse struct {
	Candidates    []GeminiCandidate    `json:"candidates"`
	UsageMetadata *GeminiUsageMetadata `json:"usageMetadata,omitempty"`
	ModelVersion  string               `json:"modelVersion,omitempty"`
	ResponseID    string               `json:"responseId,omitempty"`
	// Switchyard carries the answering provider, costs and attempts (extension; whole
	// answers only).
	Switchyard *OpenAIExtension `json:"switchyard,omitempty"`
}

// GeminiCandidate is one candidate answer: its parts (thoughts when asked for, text,
// function calls) and, once it is complete, its finishReason.
type GeminiCandidate struct {
	Content      GeminiContent `json:"content"`
	FinishReason string        `json:"finishReason,omitempty"`
	Index        int           `json:"index"`
	// GroundingMetadata lists the web pages the provider's own search found (a request with
	// the googleSearch tool), as Gemini's grounding chunks.
	GroundingMetadata *GeminiGroundingMetadata `json:"groundingMetadata,omitempty"`
	// URLContextMetadata is what Gemini's URL context tool read, as Gemini sent it.
	URLContextMetadata json.RawMessage `json:"urlContextMetadata,omitempty" jsonschema:"type=object"`
	// LogprobsResult and AvgLogprobs are the log probabilities of the candidate's tokens
	// (of a streamed chunk's: those of its text) when the request asked for them
	// (generationConfig.responseLogprobs), and their mean.
	LogprobsResult *GeminiLogprobsResult `json:"logprobsResult,omitempty"`
	AvgLogprobs    *float64              `json:"avgLogprobs,omitempty"`
}

// GeminiLogprobsResult is a candidate's logprobsResult: the tokens chosen, in order, and
// at each step the likeliest candidates (as many as generationConfig.logprobs asked;
// empty when it asked none). Token ids are not given: the answering model may be one
// that gives none.
type GeminiLogprobsResult struct {
	TopCandidates    []GeminiTopCandidates    `json:"topCandidates"`
	ChosenCandidates []GeminiLogprobCandidate `json:"chosenCandidates"`
}

// GeminiTopCandidates are the likeliest candidates at one step, likeliest first.
type GeminiTopCandidates struct {
	Candidates []GeminiLogprobCandidate `json:"candidates"`
}

// GeminiLogprobCandidate is a token and its (natural) log probability.
type GeminiLogprobCandidate struct {
	Token          string  `json:"token"`
	LogProbability float64 `json:"logProbability"`
}

// setLogprobs sets c's logprobsResult and avgLogprobs from tokens (nothing when tokens is
// nil: the request asked for none).
func (c *GeminiCandidate) setLogprobs(tokens []providers.TokenLogprob) {
	if tokens == nil {
		return
	}
	r := &GeminiLogprobsResult{TopCandidates: make([]GeminiTopCandidates, len(tokens)), ChosenCandidates: make([]GeminiLogprobCandidate, len(tokens))}
	sum := 0.0
	for i, t := range tokens {
		r.ChosenCandidates[i] = GeminiLogprobCandidate{Token: t.Token, LogProbability: t.Logprob}
		top := make([]GeminiLogprobCandidate, len(t.TopLogprobs))
		for j, a := range t.TopLogprobs {
			top[j] = GeminiLogprobCandidate{Token: a.Token, LogProbability: a.Logprob}
		}
		r.TopCandidates[i] = GeminiTopCandidates{Candidates: top}
		sum += t.Logprob
	}
	c.LogprobsResult = r
	if len(tokens) > 0 {
		avg := sum / float64(len(tokens))
		c.AvgLogprobs = &avg
	}
}

// GeminiGroundingMetadata is a candidate's groundingMetadata: the pages its answer was
// grounded on.
type GeminiGroundingMetadata struct {
	GroundingChunks []GeminiGroundingChunk `json:"groundingChunks"`
}

// GeminiGroundingChunk is one page: {"web": {"uri", "title"}}.
type GeminiGroundingChunk struct {
	Web GeminiWebSource `json:"web"`
}

// GeminiWebSource is a web page's address and title.
type GeminiWebSource struct {
	URI   string `json:"uri"`
	Title string `json:"title,omitempty"`
}

// geminiGrounding is sources as groundingMetadata, nil when there are none.
func geminiGrounding(sources []providers.Source) *GeminiGroundingMetadata {
	if len(sources) == 0 {
		return nil
	}
	g := &GeminiGroundingMetadata{GroundingChunks: make([]GeminiGroundingChunk, len(sources))}
	for i, s := range sources {
		g.GroundingChunks[i] = GeminiGroundingChunk{Web: GeminiWebSource{URI: s.URL, Title: s.Title}}
	}
	return g
}

// GeminiUsageMetadata is usageMetadata: prompt tokens (cached ones among them), answer
// tokens without the thoughts, thoughts, and the total.
type GeminiUsageMetadata struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	TotalTokenCount         int `json:"totalTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount,omitempty"`
	CachedContentTokenCount int `json:"cachedContentTokenCount,omitempty"`
}

// GeminiErrorBody is Google's error envelope: {"error": {"code", "message", "status"}}.
type GeminiErrorBody struct {
	Error GeminiErrorObject `json:"error"`
}

// GeminiErrorObject is an error's HTTP code, message and canonical status
// (INVALID_ARGUMENT, UNAUTHENTICATED, PERMISSION_DENIED, NOT_FOUND, RESOURCE_EXHAUSTED,
// INTERNAL, UNAVAILABLE, DEADLINE_EXCEEDED).
type GeminiErrorObject struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
	// Details are google.rpc error details (ErrorInfo, QuotaFailure, RetryInfo), each an
	// object with its "@type"; a 429 carries them so that Google's clients tell a spent
	// budget (terminal) from a rate limit (retried after RetryInfo's delay).
	Details []map[string]any `json:"details,omitempty"`
}

// GeminiStatus is the canonical status Google's APIs answer an HTTP status with.
func GeminiStatus(code int) string {
	switch code {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusMethodNotAllowed:
		return "UNIMPLEMENTED"
	case http.StatusConflict:
		return "ABORTED"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable, http.StatusBadGateway, 529:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	return "INTERNAL"
}

// NewGeminiResponse renders resp as a GenerateContentResponse; model is the model as the
// request named it, thoughts whether it asked to see the model's thoughts.
func NewGeminiResponse(resp *Response, model string, thoughts bool) *GeminiResponse {
	return NewGeminiResponseN([]*Response{resp}, model, thoughts)
}

// NewGeminiResponseN renders the answers of a request for several candidates as one
// GenerateContentResponse, a candidate each; usage adds them up (the prompt counted once
// per answer, as each was a call).
func NewGeminiResponseN(resps []*Response, model string, thoughts bool) *GeminiResponse {
	out := &GeminiResponse{Candidates: make([]GeminiCandidate, 0, len(resps)), ModelVersion: model}
	var u Usage
	for i, resp := range resps {
		var parts []GeminiPart
		if thoughts {
			for _, r := range resp.Reasoning {
				if r.Text != "" {
					parts = append(parts, GeminiPart{Text: new(r.Text), Thought: true})
				}
			}
		}
		text := resp.Text()
		if text == "" {
			text = resp.Refusal
		}
		if text != "" {
			parts = append(parts, geminiTextParts(text, resp.CodeExecution)...)
		}
		for _, c := range resp.ToolCalls {
			parts = append(parts, GeminiPart{FunctionCall: &GeminiFunctionCall{ID: c.ID, Name: c.Name, Args: anthropicInput(c.Arguments)}, ThoughtSignature: c.ThoughtSignature})
		}
		if parts == nil {
			parts = []GeminiPart{}
		}
		cand := GeminiCandidate{Content: GeminiContent{Role: "model", Parts: parts},
			FinishReason: GeminiFinishReason(resp.FinishReason), Index: i, GroundingMetadata: geminiGrounding(resp.Sources),
			URLContextMetadata: resp.URLContextMetadata}
		if lp := resp.Logprobs; lp != nil {
			tokens := lp.Content
			if resp.Text() == "" && resp.Refusal != "" {
				tokens = lp.Refusal // the refusal is the candidate's text
			}
			cand.setLogprobs(append([]providers.TokenLogprob{}, tokens...))
		}
		out.Candidates = append(out.Candidates, cand)
		u = addGeminiUsage(u, resp.Usage)
		if i == 0 {
			out.ResponseID = resp.ResponseMessageID
			out.Switchyard = &OpenAIExtension{Provider: resp.Provider, ModelGroup: resp.ModelGroup, Costs: resp.Usage.Costs, Latency: resp.Latency, TTFT: resp.TTFT,
				Attempts: resp.Attempts, Continued: resp.Continued, Cache: resp.Cache}
		}
	}
	out.UsageMetadata = geminiUsage(u)
	return out
}

// addGeminiUsage adds b's token counts to a.
func addGeminiUsage(a, b Usage) Usage {
	a.PromptTokens += b.PromptTokens
	a.CompletionTokens += b.CompletionTokens
	a.ReasoningTokens += b.ReasoningTokens
	a.CachedTokens += b.CachedTokens
	return a
}

// geminiUsage is u as usageMetadata: candidates tokens leave the thoughts out, as
// Gemini's do.
func geminiUsage(u Usage) *GeminiUsageMetadata {
	thoughts := min(u.ReasoningTokens, u.CompletionTokens)
	return &GeminiUsageMetadata{PromptTokenCount: u.PromptTokens, CandidatesTokenCount: u.CompletionTokens - thoughts,
		TotalTokenCount: u.PromptTokens + u.CompletionTokens, ThoughtsTokenCount: thoughts, CachedContentTokenCount: u.CachedTokens}
}

// geminiFinishReasons are the finishReason values of Gemini's API.
var geminiFinishReasons = []string{"STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "LANGUAGE", "OTHER", "BLOCKLIST", "PROHIBITED_CONTENT",
	"SPII", "MALFORMED_FUNCTION_CALL", "IMAGE_SAFETY", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"}

// GeminiFinishReason maps the gateway's finish reason (OpenAI's: stop, length,
// tool_calls, content_filter; a Gemini upstream's own, lower-cased) onto Gemini's.
func GeminiFinishReason(finish string) string {
	switch finish {
	case "", "stop", "tool_calls", "end_turn", "stop_sequence", "tool_use":
		return "STOP"
	case "length", "max_tokens":
		return "MAX_TOKENS"
	case "content_filter", "refusal":
		return "SAFETY"
	}
	if up := strings.ToUpper(finish); slices.Contains(geminiFinishReasons, up) {
		return up
	}
	return "OTHER"
}

// geminiEmitter writes a streamGenerateContent answer's chunks: server-sent events (alt=sse,
// as Google's SDKs and Gemini CLI ask), or the elements of one JSON array (the API's
// default).
type geminiEmitter struct {
	rw    http.ResponseWriter
	sse   *SSEWriter
	flush func()
	n     int
}

// newGeminiEmitter starts rw's 200 answer as events (sse) or as a JSON array.
func newGeminiEmitter(rw http.ResponseWriter, sse bool) *geminiEmitter {
	e := &geminiEmitter{rw: rw, flush: func() {}}
	if f, ok := rw.(http.Flusher); ok {
		e.flush = f.Flush
	}
	if sse {
		e.sse = NewSSEWriter(rw)
		return e
	}
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(http.StatusOK)
	return e
}

// chunk writes v as the next chunk and flushes it.
func (e *geminiEmitter) chunk(v any) error {
	e.n++
	if e.sse != nil {
		return e.sse.Event("", v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	sep := ",\r\n"
	if e.n == 1 {
		sep = "["
	}
	if _, err := io.WriteString(e.rw, sep); err != nil {
		return err
	}
	if _, err := e.rw.Write(b); err != nil {
		return err
	}
	e.flush()
	return nil
}

// end closes the JSON array.
func (e *geminiEmitter) end() error {
	if e.sse != nil {
		return nil
	}
	tail := "]"
	if e.n == 0 {
		tail = "[]"
	}
	_, err := io.WriteString(e.rw, tail)
	e.flush()
	return err
}

// WriteGeminiStream sends st to rw as streamGenerateContent does: a GenerateContentResponse
// per text fragment (and per thought fragment when thoughts is set, as a thought part),
// then a last one with the function calls (gathered until the upstream ended: their
// arguments come in fragments), the pages a search found (groundingMetadata), the
// finishReason and usageMetadata. sse picks server-sent
// events (alt=sse) over a JSON array. A failure after the stream started ends it with
// Google's error object, which its SDKs raise. model is the model as the request named it.
// It closes st.
func WriteGeminiStream(rw http.ResponseWriter, st *ResponseStream, model string, thoughts, sse bool) error {
	defer st.Close()
	e := newGeminiEmitter(rw, sse)
	id := st.ResponseMessageID()
	chunk := func(parts []GeminiPart) *GeminiResponse {
		return &GeminiResponse{Candidates: []GeminiCandidate{{Content: GeminiContent{Role: "model", Parts: parts}}}, ModelVersion: model, ResponseID: id}
	}
	var calls streamedCalls
	var sources []providers.Source
	wroteText := false
	for {
		c, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			code := http.StatusInternalServerError
			switch providers.KindOf(err) {
			case providers.KindOverloaded:
				code = http.StatusServiceUnavailable
			case providers.KindRateLimited:
				code = http.StatusTooManyRequests
			}
			if errors.Is(err, ErrGuardrailBlocked) {
				code = http.StatusBadRequest
			}
			_ = e.chunk(GeminiErrorBody{Error: GeminiErrorObject{Code: code, Message: err.Error(), Status: GeminiStatus(code)}})
			_ = e.end()
			return err
		}
		switch {
		case c.Type == EventSources && c.Search != nil:
			sources = append(sources, c.Search.Sources...)
		case c.Type == EventReasoning:
			if thoughts && c.Reasoning != nil && c.Reasoning.Text != "" {
				if err := e.chunk(chunk([]GeminiPart{{Text: new(c.Reasoning.Text), Thought: true}})); err != nil {
					return err
				}
			}
		case c.Type == EventToolCall:
			calls.add(c.ToolCall)
		case c.Type == EventText && c.Text != "":
			wroteText = true
			ck := chunk([]GeminiPart{{Text: new(c.Text)}})
			if c.Logprobs != nil {
				ck.Candidates[0].setLogprobs(append([]providers.TokenLogprob{}, c.Logprobs.Content...))
			}
			if err := e.chunk(ck); err != nil {
				return err
			}
		}
	}
	parts := []GeminiPart{}
	resp := st.Response()
	refused := resp != nil && resp.Refusal != "" && !wroteText
	if refused {
		parts = append(parts, GeminiPart{Text: new(resp.Refusal)})
	}
	for _, call := range calls.sorted() {
		parts = append(parts, GeminiPart{FunctionCall: &GeminiFunctionCall{ID: call.id, Name: call.name, Args: anthropicInput(string(call.args))}, ThoughtSignature: call.signature})
	}
	last := chunk(parts)
	last.Candidates[0].FinishReason = "STOP"
	last.Candidates[0].GroundingMetadata = geminiGrounding(sources)
	if resp != nil {
		last.Candidates[0].FinishReason = GeminiFinishReason(resp.FinishReason)
		last.UsageMetadata = geminiUsage(resp.Usage)
		if refused && resp.Logprobs != nil {
			last.Candidates[0].setLogprobs(append([]providers.TokenLogprob{}, resp.Logprobs.Refusal...))
		}
	}
	if err := e.chunk(last); err != nil {
		return err
	}
	return e.end()
}

// WriteGeminiChunks sends an answer decided before anything was streamed (a content
// filter's refusal) as a stream of one chunk.
func WriteGeminiChunks(rw http.ResponseWriter, r *GeminiResponse, sse bool) error {
	e := newGeminiEmitter(rw, sse)
	if err := e.chunk(r); err != nil {
		return err
	}
	return e.end()
}

// geminiTextParts is an answer's text as parts: the code execution parts (whose Markdown
// rendering the text holds at their ranges) as executableCode and codeExecutionResult
// parts, the text around them as text parts. A text whose ranges do not fit (a guardrail
// rewrote it) is one text part.
func geminiTextParts(text string, code []providers.CodeExecutionPart) []GeminiPart {
	at := 0
	for _, c := range code {
		if c.Start < at || c.End < c.Start || c.End > len(text) {
			return []GeminiPart{{Text: &text}}
		}
		at = c.End
	}
	var out []GeminiPart
	at = 0
	for _, c := range code {
		if c.Start > at {
			out = append(out, GeminiPart{Text: new(text[at:c.Start])})
		}
		var raw []byte
		if c.Result {
			raw, _ = json.Marshal(map[string]string{"outcome": c.Outcome, "output": c.Output})
			out = append(out, GeminiPart{CodeExecutionResult: raw})
		} else {
			raw, _ = json.Marshal(map[string]string{"language": c.Language, "code": c.Code})
			out = append(out, GeminiPart{ExecutableCode: raw})
		}
		at = c.End
	}
	if at < len(text) {
		out = append(out, GeminiPart{Text: new(text[at:])})
	}
	return out
}
