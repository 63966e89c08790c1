package providers

import (
	"encoding/json"
)

// maxAnswerText bounds the answer text a UsageMeter keeps (all choices together) to
// estimate an answer's completion tokens when it reports no usage: a stream is never
// buffered whole. The text past it is not kept, only its length, estimated at 4 bytes a
// token (tiktoken's encodings average about that for English text and code).
const maxAnswerText = 1 << 20

// maxAnswerEntries bounds the choices and tool calls a UsageMeter keeps the text of (all
// together), so that an answer naming ever new indices does not grow it without end; the
// text of those past it is counted as the text past maxAnswerText is.
const maxAnswerEntries = 1024

// answerText is an answer's text so far, per choice, at most limit bytes in all.
type answerText struct {
	limit   int
	kept    int
	dropped int // bytes not kept: past limit, or in a stream line past maxMeteredLine
	entries int // choices and tool calls kept, at most maxAnswerEntries
	choices map[int]*answerChoice
}

// answerChoice is one choice's text, refusal and tool calls so far.
type answerChoice struct {
	text, refusal []byte
	calls         map[int]*answerCall
}

// answerCall is one tool call's name and arguments so far.
type answerCall struct {
	name, arguments []byte
}

// meteredChoice is a choice of an OpenAI answer: a chat chunk's delta, a chat
// completion's message, or a legacy completion's text. Content is raw so that a shape the
// meter does not read (an array) is skipped, not a failure of the whole document.
type meteredChoice struct {
	Index   int             `json:"index"`
	Text    json.RawMessage `json:"text"`
	Delta   *meteredPart    `json:"delta"`
	Message *meteredPart    `json:"message"`
}

// meteredPart is a chat chunk's delta or a chat completion's message.
type meteredPart struct {
	Content   json.RawMessage `json:"content"`
	Refusal   json.RawMessage `json:"refusal"`
	ToolCalls []struct {
		Index    int `json:"index"`
		Function struct {
			Name      json.RawMessage `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// openAIChoices keeps the text of raw, an OpenAI answer's choices (absent or null: none).
func (a *answerText) openAIChoices(raw json.RawMessage) {
	if len(raw) == 0 || raw[0] != '[' {
		return
	}
	var choices []meteredChoice
	if json.Unmarshal(raw, &choices) != nil {
		return
	}
	for i, c := range choices {
		if !c.hasText() {
			continue // a role, a finish_reason: nothing to count, no entry to keep
		}
		index := c.Index
		if c.Message != nil { // a whole answer: its choices are in order
			index = i
		}
		ch := a.choice(index) // nil past maxAnswerEntries: its text is counted by length
		var text, refusal *[]byte
		if ch != nil {
			text, refusal = &ch.text, &ch.refusal
		}
		a.keepString(text, c.Text)
		for _, p := range []*meteredPart{c.Delta, c.Message} {
			if p == nil {
				continue
			}
			a.keepString(text, p.Content)
			a.keepString(refusal, p.Refusal)
			for j, tc := range p.ToolCalls {
				if !isText(tc.Function.Name) && !isText(tc.Function.Arguments) {
					continue
				}
				ti := tc.Index
				if p == c.Message {
					ti = j
				}
				var name, arguments *[]byte
				if call := a.call(ch, ti); call != nil {
					name, arguments = &call.name, &call.arguments
				}
				a.keepString(name, tc.Function.Name)
				a.keepString(arguments, tc.Function.Arguments)
			}
		}
	}
}

// isText reports whether raw is a JSON string that is not empty.
func isText(raw json.RawMessage) bool { return len(raw) > 2 && raw[0] == '"' }

// hasText reports whether c carries any text the meter keeps.
func (c *meteredChoice) hasText() bool {
	if isText(c.Text) {
		return true
	}
	for _, p := range []*meteredPart{c.Delta, c.Message} {
		if p == nil {
			continue
		}
		if isText(p.Content) || isText(p.Refusal) {
			return true
		}
		for _, tc := range p.ToolCalls {
			if isText(tc.Function.Name) || isText(tc.Function.Arguments) {
				return true
			}
		}
	}
	return false
}

// choice is the choice of index, made when new; nil when it is new and the answer has
// maxAnswerEntries choices and tool calls already.
func (a *answerText) choice(index int) *answerChoice {
	if a.choices == nil {
		a.choices = map[int]*answerChoice{}
	}
	c := a.choices[index]
	if c == nil {
		if a.entries >= maxAnswerEntries {
			return nil
		}
		a.entries++
		c = &answerChoice{}
		a.choices[index] = c
	}
	return c
}

// call is choice c's tool call of index, made when new; nil when c is nil, or the call is
// new and the answer has maxAnswerEntries choices and tool calls already.
func (a *answerText) call(c *answerChoice, index int) *answerCall {
	if c == nil {
		return nil
	}
	if c.calls == nil {
		c.calls = map[int]*answerCall{}
	}
	tc := c.calls[index]
	if tc == nil {
		if a.entries >= maxAnswerEntries {
			return nil
		}
		a.entries++
		tc = &answerCall{}
		c.calls[index] = tc
	}
	return tc
}

// keepString appends raw, a JSON string (anything else is skipped), to dst while the
// answer's text is within its limit; the rest (all of it when dst is nil: an entry past
// maxAnswerEntries) is counted in dropped.
func (a *answerText) keepString(dst *[]byte, raw json.RawMessage) {
	if len(raw) == 0 || raw[0] != '"' {
		return
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return
	}
	if dst == nil {
		a.dropped += len(s)
		return
	}
	room := max(a.limit-a.kept, 0)
	if len(s) > room {
		a.dropped += len(s) - room
		s = s[:room]
	}
	*dst = append(*dst, s...)
	a.kept += len(s)
}

// tokens estimates the completion tokens of the text kept, each choice as EstimateUsage
// counts an answer in model's tokenizer, plus the bytes not kept at 4 bytes a token.
func (a *answerText) tokens(model string) int {
	n := (a.dropped + 3) / 4
	for _, c := range a.choices {
		resp := Response{Text: string(c.text), Refusal: string(c.refusal)}
		for _, tc := range c.calls {
			resp.ToolCalls = append(resp.ToolCalls, ToolCall{Name: string(tc.name), Arguments: string(tc.arguments)})
		}
		n += EstimateUsage(model, nil, &resp).CompletionTokens
	}
	return n
}

// anthropicMeteredBlock is an Anthropic stream's content_block_start's content_block or
// content_block_delta's delta: text, thinking, or a tool call's name and input's JSON.
type anthropicMeteredBlock struct {
	Type        string          `json:"type"`
	Text        json.RawMessage `json:"text"`
	Thinking    json.RawMessage `json:"thinking"`
	Name        json.RawMessage `json:"name"`
	PartialJSON json.RawMessage `json:"partial_json"`
}

// anthropicBlock keeps the text of an Anthropic stream's content block index (one answer:
// choice 0; a tool call per tool_use block).
func (a *answerText) anthropicBlock(index int, b *anthropicMeteredBlock) {
	if !isText(b.Text) && !isText(b.Thinking) && !isText(b.Name) && !isText(b.PartialJSON) {
		return
	}
	ch := a.choice(0)
	var text *[]byte
	if ch != nil {
		text = &ch.text
	}
	a.keepString(text, b.Text)
	a.keepString(text, b.Thinking)
	if isText(b.Name) || isText(b.PartialJSON) {
		var name, arguments *[]byte
		if call := a.call(ch, index); call != nil {
			name, arguments = &call.name, &call.arguments
		}
		a.keepString(name, b.Name)
		a.keepString(arguments, b.PartialJSON)
	}
}

// geminiMeteredChoice is a candidate of a Gemini stream's event: its parts' text and
// function calls.
type geminiMeteredChoice struct {
	Index   int `json:"index"`
	Content struct {
		Parts []struct {
			Text         json.RawMessage `json:"text"`
			FunctionCall *struct {
				Name json.RawMessage `json:"name"`
				Args json.RawMessage `json:"args"`
			} `json:"functionCall"`
		} `json:"parts"`
	} `json:"content"`
	FinishReason string `json:"finishReason"`
}

// geminiCandidates keeps the text of a Gemini stream event's candidates, each one answer;
// a function call's args are kept as their JSON.
func (a *answerText) geminiCandidates(cands []geminiMeteredChoice) {
	for _, c := range cands {
		var ch *answerChoice
		for _, p := range c.Content.Parts {
			fc := p.FunctionCall
			if !isText(p.Text) && (fc == nil || !isText(fc.Name) && len(fc.Args) <= 2) {
				continue
			}
			if ch == nil {
				if ch = a.choice(c.Index); ch == nil {
					a.keepString(nil, p.Text)
					continue
				}
			}
			a.keepString(&ch.text, p.Text)
			if fc != nil {
				var name, arguments *[]byte
				if call := a.call(ch, len(ch.calls)); call != nil {
					name, arguments = &call.name, &call.arguments
				}
				a.keepString(name, fc.Name)
				if args, err := json.Marshal(string(fc.Args)); err == nil && len(fc.Args) > 2 {
					a.keepString(arguments, args)
				}
			}
		}
	}
}
