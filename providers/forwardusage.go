package providers

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strings"
)

// MaxMeteredBody is how much of a JSON (not streamed) answer a UsageMeter keeps to read
// its usage from; the usage of a larger answer is not found.
const MaxMeteredBody = 32 << 20

// maxMeteredLine bounds one server-sent event line a UsageMeter keeps; a longer line is
// skipped (no provider puts usage in such an event).
const maxMeteredLine = 8 << 20

// UsageMeter reads the usage a provider reports in an answer forwarded as it is (see
// Forwarder) while the answer passes through it (it is an io.Writer): Anthropic's usage
// (message_start's and message_delta's in a stream), OpenAI's usage (chat completions' last
// chunk, the Responses API's response.completed) and Gemini's usageMetadata (the last one
// of a stream), as the adapters read them. Make one with NewUsageMeter; it is not safe for
// concurrent use.
type UsageMeter struct {
	format Format
	sse    bool
	// body is a JSON answer so far (at most MaxMeteredBody), line an event line so far.
	body, line []byte
	overflow   bool // body or the current line went past its bound
	anthropic  anthropicTotals
	usage      Usage
	found      bool
	// final: the answer's last usage came (Anthropic's message_delta, Gemini's event with
	// a finishReason), so the usage found is the whole answer's.
	final bool
	model string
	// answer is the answer's text so far, kept while it has reported no usage, for
	// AnswerTokens.
	answer answerText
	// content: the stream carried content (text, thinking, a tool call) so far.
	content bool
	// failure is a stream's first error (nil: none came): an Anthropic error event, an
	// OpenAI chunk with an error object (or a Responses API error or response.failed
	// event), a Gemini error object; failedEarly says it came before any content.
	failure     *Error
	failedEarly bool
	// answerFailure is a JSON answer's error (see AnswerFailure); failureUsage says the
	// failure came with the usage the provider bills for it (see FailureBilled).
	answerFailure *Error
	failureUsage  bool
	// inArray: the document being read is an element of a JSON array (Gemini's
	// streamGenerateContent without alt=sse), a stream's response.
	inArray bool
}

// NewUsageMeter returns a meter of an answer in format (FormatOpenAI, FormatAnthropic or
// FormatGemini) whose Content-Type is contentType: server-sent events when it is
// text/event-stream, else one JSON document (Gemini's streamGenerateContent without
// alt=sse: a JSON array of responses). It fails for another format.
func NewUsageMeter(format Format, contentType string) (*UsageMeter, error) {
	switch format {
	case FormatOpenAI, FormatAnthropic, FormatGemini:
	default:
		return nil, errForwardFormat(format)
	}
	ct, _, _ := strings.Cut(contentType, ";")
	return &UsageMeter{format: format, sse: strings.EqualFold(strings.TrimSpace(ct), "text/event-stream"),
		answer: answerText{limit: maxAnswerText}}, nil
}

// Write takes the next bytes of the answer; it never fails.
func (m *UsageMeter) Write(p []byte) (int, error) {
	if !m.sse {
		if len(m.body)+len(p) > MaxMeteredBody {
			m.overflow, m.body = true, nil
		}
		if !m.overflow {
			m.body = append(m.body, p...)
		}
		return len(p), nil
	}
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			m.keepLine(rest)
			break
		}
		m.keepLine(rest[:i])
		if !m.overflow {
			m.event(m.line)
		}
		m.line, m.overflow = m.line[:0], false
		rest = rest[i+1:]
	}
	return len(p), nil
}

// keepLine adds b to the event line so far, unless the line is past its bound.
func (m *UsageMeter) keepLine(b []byte) {
	if m.overflow {
		return
	}
	if len(m.line)+len(b) > maxMeteredLine {
		// The line's text is lost: its bytes count toward AnswerTokens' rough remainder.
		m.answer.dropped += len(m.line) + len(b)
		m.overflow, m.line = true, m.line[:0]
		return
	}
	m.line = append(m.line, b...)
}

// event reads one line of a server-sent event stream: its data, when JSON.
func (m *UsageMeter) event(line []byte) {
	data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte("data:"))
	if !ok {
		return
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return // [DONE], or nothing
	}
	m.document(data)
}

// Usage is the usage the answer reported and the model it named ("" when none): ok is
// false when it reported none (an OpenAI stream without stream_options.include_usage, an
// answer cut before its usage, a JSON answer over MaxMeteredBody).
func (m *UsageMeter) Usage() (u Usage, model string, ok bool) {
	m.readBody()
	if m.format == FormatAnthropic && m.found {
		m.usage = m.anthropic.usage()
	}
	return m.usage, m.model, m.found
}

// Final reports whether the usage reported (see Usage) is the whole answer's: false for
// an Anthropic or Gemini stream that ended before its last usage (message_delta's, the
// event with a finishReason), whose first events report the prompt but not the
// completion, and for an answer that reported none. The completion of such a stream can be
// estimated from its text (AnswerTokens).
func (m *UsageMeter) Final() bool {
	m.readBody()
	if !m.sse || m.format == FormatOpenAI {
		return m.found // a JSON answer's usage, and OpenAI's, are its whole answer's
	}
	return m.found && m.final
}

// StreamFailure is the error a stream sent with its 200 (the first, when several came) as
// a failure of its Kind (the provider and model are the caller's to fill): an Anthropic
// error event (an overloaded_error mid-stream, say), an OpenAI chat chunk carrying an
// error object ({"error": {…}}, as OpenAI and compatible servers end a failing stream) or
// a Responses API error or response.failed event, a Gemini error object (an event, or an
// element of streamGenerateContent's JSON array). beforeContent says it came before any
// content of the answer (text, refusal, thinking, a tool call): such a stream answered
// nothing though its first events may have counted the prompt. nil when none came, and
// for a JSON answer that is not a stream.
func (m *UsageMeter) StreamFailure() (failure *Error, beforeContent bool) {
	m.readBody()
	if m.failure == nil {
		return nil, false
	}
	f := *m.failure
	return &f, m.failedEarly
}

// AnswerFailure is the error a JSON answer (not a stream) sent with its 200, as a failure
// of its Kind (the provider, model and status are the caller's to fill): a body that is an
// error object — OpenAI's and compatible servers' {"error": {…}} (or {"error": "text"}),
// Anthropic's {"type": "error", …}, Gemini's {"error": {code, message, status}} — or a
// Responses API response whose status is "failed". nil for any other answer, and for a
// stream (see StreamFailure).
func (m *UsageMeter) AnswerFailure() *Error {
	m.readBody()
	if m.answerFailure == nil {
		return nil
	}
	f := *m.answerFailure
	return &f
}

// FailureBilled reports whether the answer's failure (StreamFailure's or AnswerFailure's)
// came with the usage the provider bills for it: a Responses API response.failed event,
// or a failed response, carrying usage, which OpenAI charges as it reports it. An error
// object or event reports none: the failure is billed nothing before content.
func (m *UsageMeter) FailureBilled() bool {
	m.readBody()
	return m.failureUsage
}

// Whole reports whether the answer could be read whole: false for a JSON answer over
// MaxMeteredBody, whose usage and text were not read.
func (m *UsageMeter) Whole() bool { return m.sse || !m.overflow }

// AnswerTokens estimates the completion tokens of the answer's text, for an answer that
// reported no usage (see Usage), as EstimateUsage counts an answer in model's tokenizer:
// OpenAI's chat choices' content, refusal and tool calls (a stream's
// choices[].delta.content and tool_calls[].function's name and arguments; a JSON answer's
// choices[].message) and the legacy completions' choices[].text, each choice counted as
// one answer; for an Anthropic or Gemini stream not Final, the text, thinking and tool
// calls its events carried (content_block_delta's; candidates' parts), as one answer per
// candidate. An answer's text past maxAnswerText bytes (and a stream line past
// maxMeteredLine, and the text of choices and tool calls past maxAnswerEntries) is not
// kept but estimated at 4 bytes a token; a choice or tool call without text counts nothing. A JSON answer over
// MaxMeteredBody is not read at all: 0 (see Whole).
func (m *UsageMeter) AnswerTokens(model string) int {
	m.readBody()
	return m.answer.tokens(model)
}

// readBody reads a JSON answer's documents, once, when it is whole.
func (m *UsageMeter) readBody() {
	if !m.sse && m.body != nil {
		body := bytes.TrimSpace(m.body)
		m.body = nil
		if len(body) > 0 && body[0] == '[' {
			var docs []json.RawMessage
			if json.Unmarshal(body, &docs) == nil {
				m.inArray = true
				for _, d := range docs {
					m.document(d)
				}
				m.inArray = false
			}
		} else {
			m.document(body)
		}
	}
}

// document reads one JSON answer or stream event.
func (m *UsageMeter) document(b []byte) {
	switch m.format {
	case FormatAnthropic:
		var d struct {
			Type    string          `json:"type"`
			Index   int             `json:"index"`
			Model   string          `json:"model"`
			Usage   *anthropicUsage `json:"usage"`
			Message *struct {
				Model string          `json:"model"`
				Usage *anthropicUsage `json:"usage"`
			} `json:"message"`
			Delta        *anthropicMeteredBlock `json:"delta"`
			ContentBlock *anthropicMeteredBlock `json:"content_block"`
			Error        *struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(b, &d) != nil {
			return
		}
		if d.Type == "error" {
			code, msg := "", "the stream ended with an error event"
			if !m.sse {
				msg = "the answer is an error object"
			}
			if d.Error != nil {
				code, msg = d.Error.Type, cmp.Or(d.Error.Message, msg)
			}
			switch {
			case m.sse:
				m.failed(bodyErrorKind(code, msg), code, msg)
			case m.answerFailure == nil:
				m.answerFailure = &Error{Kind: bodyErrorKind(code, msg), Code: code, Message: msg}
			}
			return
		}
		for _, blk := range []*anthropicMeteredBlock{d.Delta, d.ContentBlock} {
			if blk != nil && (isText(blk.Text) || isText(blk.Thinking) || isText(blk.Name) || isText(blk.PartialJSON)) {
				m.content = true
			}
		}
		if d.Message != nil {
			m.named(d.Message.Model)
			if d.Message.Usage != nil {
				d.Message.Usage.merge(&m.anthropic)
				m.found = true
			}
		}
		m.named(d.Model)
		if d.Usage != nil {
			d.Usage.merge(&m.anthropic)
			m.found = true
			if d.Type == "message_delta" {
				m.final = true
			}
		}
		if m.sse && !m.final {
			for _, blk := range []*anthropicMeteredBlock{d.Delta, d.ContentBlock} {
				if blk != nil {
					m.answer.anthropicBlock(d.Index, blk)
				}
			}
		}
	case FormatGemini:
		var d struct {
			UsageMetadata *geminiUsage          `json:"usageMetadata"`
			ModelVersion  string                `json:"modelVersion"`
			Candidates    []geminiMeteredChoice `json:"candidates"`
			Error         json.RawMessage       `json:"error"`
		}
		if json.Unmarshal(b, &d) != nil {
			return
		}
		if len(d.Error) > 0 && d.Error[0] == '{' {
			kind, msg, _ := geminiBodyError(b)
			code, _ := parseGeminiError(b)
			switch {
			case m.sse || m.inArray:
				m.failed(kind, code, cmp.Or(msg, "the stream ended with an error object"))
			case m.answerFailure == nil && onlyError(b):
				// Not a long-running operation that failed ({"name", "done", "error"}),
				// which the request fetching it did not.
				m.answerFailure = &Error{Kind: kind, Code: code, Message: cmp.Or(msg, "the answer is an error object")}
			}
			return
		}
		if !m.content && geminiHasContent(d.Candidates) {
			m.content = true
		}
		m.named(d.ModelVersion)
		if m.sse && !m.final {
			m.answer.geminiCandidates(d.Candidates)
		}
		if d.UsageMetadata != nil {
			m.usage, m.found = d.UsageMetadata.usage(), true
			if slices.ContainsFunc(d.Candidates, func(c geminiMeteredChoice) bool { return c.FinishReason != "" }) {
				m.final = true
			}
		}
	case FormatOpenAI:
		var d struct {
			Type     string          `json:"type"`
			Object   string          `json:"object"`
			Status   string          `json:"status"`
			Model    string          `json:"model"`
			Usage    json.RawMessage `json:"usage"`
			Choices  json.RawMessage `json:"choices"`
			Delta    json.RawMessage `json:"delta"`
			Error    json.RawMessage `json:"error"`
			Code     json.RawMessage `json:"code"`
			Message  string          `json:"message"`
			Response *struct {
				Model string          `json:"model"`
				Usage json.RawMessage `json:"usage"`
				Error *struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			} `json:"response"`
		}
		if json.Unmarshal(b, &d) != nil {
			return
		}
		if m.sse {
			m.openAIStreamEvent(b, d.Type, d.Choices, d.Delta, d.Error, d.Code, d.Message)
			if d.Response != nil && d.Response.Error != nil && d.Type == "response.failed" && m.failure == nil {
				code, msg := d.Response.Error.Code, cmp.Or(d.Response.Error.Message, "the response failed")
				m.failed(bodyErrorKind(code, msg), code, msg)
				// OpenAI charges a failed response the usage it reports.
				m.failureUsage = isObject(d.Response.Usage)
			}
		} else if m.answerFailure == nil && len(d.Error) > 0 && string(d.Error) != "null" && (d.Object == "response" && d.Status == "failed" || d.Object == "" && len(d.Choices) == 0) {
			// An error object for an answer (a compatible server's {"error": …} with its
			// 200), or a Responses API response that failed (billed its usage, as OpenAI
			// charges it); not an object of the API that failed (a fine-tuning job), which
			// the request fetching it did not.
			c, msg := parseOpenAIError(b)
			msg = cmp.Or(msg, "the answer is an error object")
			m.answerFailure = &Error{Kind: bodyErrorKind(c, msg), Code: c, Message: msg}
			m.failureUsage = d.Object == "response" && isObject(d.Usage)
		}
		m.named(d.Model)
		if !m.found {
			m.answer.openAIChoices(d.Choices)
		}
		m.openAIUsage(d.Usage)
		if d.Response != nil {
			m.named(d.Response.Model)
			m.openAIUsage(d.Response.Usage)
		}
	}
}

// failed keeps a stream's first failure, and whether it came before any content.
func (m *UsageMeter) failed(kind ErrorKind, code, msg string) {
	if m.failure == nil {
		m.failure = &Error{Kind: kind, Code: code, Message: msg}
		m.failedEarly = !m.content
	}
}

// openAIStreamEvent notes an OpenAI stream event's content and failure: a chat chunk's
// choices with text, refusal or a tool call, or a Responses API delta event, are content;
// a chat chunk's error object ({"error": {…}} or {"error": "text"}) and a Responses API
// error event ({"type": "error", "code", "message"}) are failures.
func (m *UsageMeter) openAIStreamEvent(b []byte, typ string, choices, delta, errObj, code json.RawMessage, message string) {
	if !m.content && (openAIContent(choices) || strings.HasSuffix(typ, ".delta") && isText(delta)) {
		m.content = true
	}
	if m.failure != nil {
		return
	}
	switch {
	case len(errObj) > 0 && string(errObj) != "null":
		c, msg := parseOpenAIError(b)
		msg = cmp.Or(msg, "the stream ended with an error object")
		m.failed(bodyErrorKind(c, msg), c, msg)
	case typ == "error":
		c := upstreamString(code)
		msg := cmp.Or(message, "the stream ended with an error event")
		m.failed(bodyErrorKind(c, msg), c, msg)
	}
}

// openAIContent reports whether raw, a chat chunk's choices, carries any text, refusal or
// tool call.
func openAIContent(raw json.RawMessage) bool {
	if len(raw) == 0 || raw[0] != '[' {
		return false
	}
	var choices []meteredChoice
	if json.Unmarshal(raw, &choices) != nil {
		return false
	}
	return slices.ContainsFunc(choices, func(c meteredChoice) bool { return c.hasText() })
}

// geminiHasContent reports whether any of cands carries text or a function call.
func geminiHasContent(cands []geminiMeteredChoice) bool {
	for _, c := range cands {
		for _, p := range c.Content.Parts {
			if isText(p.Text) || p.FunctionCall != nil && isText(p.FunctionCall.Name) {
				return true
			}
		}
	}
	return false
}

// openAIUsage reads raw, a usage object of chat completions (prompt_tokens, …) or of the
// Responses API (input_tokens, …); null or absent is none.
func (m *UsageMeter) openAIUsage(raw json.RawMessage) {
	if len(raw) == 0 || raw[0] != '{' {
		return
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) != nil {
		return
	}
	if _, responses := keys["input_tokens"]; responses {
		var u responsesUsage
		if json.Unmarshal(raw, &u) == nil {
			m.usage, m.found = u.usage(), true
		}
		return
	}
	var u openAIUsage
	if json.Unmarshal(raw, &u) == nil {
		m.usage, m.found = u.usage(), true
	}
}

// onlyError reports whether the JSON object b has no member but "error".
func onlyError(b []byte) bool {
	var keys map[string]json.RawMessage
	if json.Unmarshal(b, &keys) != nil {
		return false
	}
	_, ok := keys["error"]
	return ok && len(keys) == 1
}

// isObject reports whether raw is a JSON object (not null, absent or another value).
func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// named keeps the first model name the answer gives.
func (m *UsageMeter) named(model string) {
	if m.model == "" && model != "" {
		m.model = model
	}
}
