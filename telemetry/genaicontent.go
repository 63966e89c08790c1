package telemetry

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// DefaultMaxContentBytes bounds each content attribute of a span (gen_ai.input.messages,
// gen_ai.output.messages, gen_ai.system_instructions, gen_ai.tool.definitions) when
// TracingOptions.MaxContentBytes is 0: 64 KiB.
const DefaultMaxContentBytes = 64 << 10

// minContentBytes is the smallest bound MaxContentBytes may set: room for the structure
// and a truncation marker.
const minContentBytes = 256

// The parts of the GenAI semantic conventions' messages (gen_ai.input.messages and
// gen_ai.output.messages are arrays of {role, parts, finish_reason}; gen_ai.system_instructions
// an array of parts). Images and documents are never written: a placeholder part says one was
// there.
type (
	genaiMessage struct {
		Role         string      `json:"role"`
		Parts        []genaiPart `json:"parts"`
		Name         string      `json:"name,omitempty"`
		FinishReason string      `json:"finish_reason,omitempty"`
	}
	genaiPart struct {
		Type      string `json:"type"`
		Content   string `json:"content,omitempty"`
		ID        string `json:"id,omitempty"`
		Name      string `json:"name,omitempty"`
		Arguments any    `json:"arguments,omitempty"`
		Response  string `json:"response,omitempty"`
		Modality  string `json:"modality,omitempty"`
		MimeType  string `json:"mime_type,omitempty"`
	}
	genaiTool struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
)

// contentBudget hands out the bytes of text an attribute may still hold; what does not fit
// is cut with a marker saying how much was left out.
type contentBudget struct {
	left int
}

// text is s within the budget: whole, or its first bytes (on a character boundary) and a
// "…[truncated N bytes]" marker.
func (b *contentBudget) text(s string) string {
	if len(s) <= b.left {
		b.left -= len(s)
		return s
	}
	keep := max(b.left, 0)
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	b.left = 0
	return s[:keep] + truncatedMarker(len(s)-keep)
}

// arguments is a tool call's arguments: the JSON object itself when it is valid and fits,
// else its text within the budget.
func (b *contentBudget) arguments(s string) any {
	if s == "" {
		return nil
	}
	if len(s) <= b.left && json.Valid([]byte(s)) {
		b.left -= len(s)
		return json.RawMessage(s)
	}
	return b.text(s)
}

func truncatedMarker(n int) string { return "…[truncated " + strconv.Itoa(n) + " bytes]" }

// boundedArray encodes the elements build makes with a text budget as a JSON array of at
// most limit bytes that stays valid JSON of its shape: texts are cut first (build is run
// again with a smaller budget when escaping or structure made the array too long); when
// the elements' structure alone is over the bound (thousands of turns, tools or tool
// calls), the earliest elements are left out, the newest kept (a conversation's last
// turns), and omitted(dropped, bytes) makes the element put first that says so. A build
// that spends its budget newest element first (newestFirst) then keeps half the bound for
// the texts of the newest elements, rather than cutting them to make room for the
// structure of earlier ones.
func boundedArray[T any](limit int, newestFirst bool, build func(*contentBudget) []T, omitted func(dropped []T, bytes int) T) string {
	budget := limit
	var elems []T
	for range 4 {
		elems = build(&contentBudget{left: budget})
		out := encodeJSON(elems)
		if len(out) <= limit {
			return string(out)
		}
		if budget == 0 {
			break
		}
		over := len(out) - limit
		budget = max(budget-over-over/4-64, 0)
	}
	if newestFirst && budget < limit/2 {
		if out, kept := keepNewest(limit, build(&contentBudget{left: limit / 2}), omitted); kept > 0 {
			return out
		}
	}
	out, _ := keepNewest(limit, elems, omitted)
	return out
}

// keepNewest encodes the newest of elems that fit in limit bytes, after the element
// omitted makes to say what was left out, and how many of elems it kept.
func keepNewest[T any](limit int, elems []T, omitted func(dropped []T, bytes int) T) (string, int) {
	enc := make([][]byte, len(elems))
	before := make([]int, len(elems)+1) // before[i]: bytes of elements 0..i-1, each with a comma
	for i := range elems {
		enc[i] = encodeJSON(elems[i])
		before[i+1] = before[i] + len(enc[i]) + 1
	}
	// The array keeping the elements from first on, after the element saying what was left
	// out; the most elements that fit are kept.
	marker := func(first int) []byte {
		if first == 0 {
			return nil
		}
		return encodeJSON(omitted(elems[:first], before[first]-1))
	}
	size := func(first int, m []byte) int {
		items := len(elems) - first
		kept := before[len(elems)] - before[first] - items // the kept elements without commas
		if m != nil {
			items++
			kept += len(m)
		}
		return 2 + kept + max(items-1, 0)
	}
	first, m := len(elems), marker(len(elems))
	for first > 0 {
		next := marker(first - 1)
		if size(first-1, next) > limit {
			break
		}
		first, m = first-1, next
	}
	out := make([]byte, 0, size(first, m))
	out = append(out, '[')
	if m != nil {
		out = append(out, m...)
	}
	for i, e := range enc[first:] {
		if i > 0 || m != nil {
			out = append(out, ',')
		}
		out = append(out, e...)
	}
	return string(append(out, ']')), len(elems) - first
}

// omittedText says n elements of kind, bytes long in the attribute, were left out.
func omittedText(n int, kind string, bytes int) string {
	return "…[" + strconv.Itoa(n) + " earlier " + kind + " omitted: " + strconv.Itoa(bytes) + " bytes]"
}

func encodeJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte("null")
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// systemInstructions is the gen_ai.system_instructions value of req: the parts of its
// system turns; "" when it has none.
func systemInstructions(req *providers.Request, limit int) string {
	n := 0
	for i := range req.Messages {
		if req.Messages[i].Role == "system" {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return boundedArray(limit, false, func(b *contentBudget) []genaiPart {
		parts := make([]genaiPart, 0, n)
		for i := range req.Messages {
			if m := &req.Messages[i]; m.Role == "system" {
				parts = append(parts, contentParts(m, b)...)
			}
		}
		return parts
	}, omittedParts)
}

// inputMessages is the gen_ai.input.messages value of req: its turns other than system
// ones, with their tool calls and tool results; "" when it has none. The text budget is
// spent newest turn first: over the bound, the earliest turns' texts are cut (then the
// earliest turns left out) and the last ones, what the model answered, are kept whole.
// System turns are not among them: gen_ai.system_instructions has them, under its own
// bound, so a long system prompt takes nothing from the conversation's.
func inputMessages(req *providers.Request, limit int) string {
	return boundedArray(limit, true, func(b *contentBudget) []genaiMessage {
		msgs := make([]genaiMessage, 0, len(req.Messages))
		for i := len(req.Messages) - 1; i >= 0; i-- {
			m := &req.Messages[i]
			if m.Role == "system" {
				continue
			}
			gm := genaiMessage{Role: m.Role, Name: m.Name}
			if m.Role == "tool" {
				gm.Parts = []genaiPart{{Type: "tool_call_response", ID: m.ToolCallID, Response: b.text(m.Content)}}
			} else {
				gm.Parts = contentParts(m, b)
			}
			for _, c := range m.ToolCalls {
				gm.Parts = append(gm.Parts, genaiPart{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: b.arguments(c.Arguments)})
			}
			if gm.Parts == nil {
				gm.Parts = []genaiPart{}
			}
			msgs = append(msgs, gm)
		}
		slices.Reverse(msgs) // built newest first, listed in order
		return msgs
	}, func(dropped []genaiMessage, bytes int) genaiMessage {
		// In the role the left-out turns began with.
		return genaiMessage{Role: dropped[0].Role, Parts: []genaiPart{{Type: "text", Content: omittedText(len(dropped), "messages", bytes)}}}
	})
}

func omittedParts(dropped []genaiPart, bytes int) genaiPart {
	return genaiPart{Type: "text", Content: omittedText(len(dropped), "parts", bytes)}
}

// contentParts are a turn's text, images and documents in order; images and documents
// as placeholders.
func contentParts(m *providers.Message, b *contentBudget) []genaiPart {
	if len(m.Parts) == 0 {
		if m.Content == "" {
			return nil
		}
		return []genaiPart{{Type: "text", Content: b.text(m.Content)}}
	}
	parts := make([]genaiPart, 0, len(m.Parts))
	for _, p := range m.Parts {
		switch {
		case p.Image != nil:
			parts = append(parts, mediaPlaceholder("image", p.Image.URL, p.Image.MediaType))
		case p.File != nil:
			parts = append(parts, mediaPlaceholder("file", p.File.URL, providers.FileMediaType))
		default:
			parts = append(parts, genaiPart{Type: "text", Content: b.text(p.Text)})
		}
	}
	return parts
}

// mediaPlaceholder stands for an image or a document: its kind, media type and size, never
// its data nor its URL (which may carry a signature).
func mediaPlaceholder(modality, url, mediaType string) genaiPart {
	desc := "[" + modality + " omitted]"
	if mt, data, ok := providers.ParseDataURL(url); ok {
		if mt != "" {
			mediaType = mt
		}
		desc = "[" + modality + " omitted: " + strconv.Itoa(len(data)*3/4) + " bytes]"
	} else if strings.HasPrefix(url, "http://") || strings.HasPrefix(url, "https://") {
		desc = "[" + modality + " omitted: URL]"
	}
	return genaiPart{Type: modality, Modality: modality, MimeType: mediaType, Content: desc}
}

// outputMessages is the gen_ai.output.messages value of an answer: one assistant message
// with its reasoning, text, refusal and tool calls, and its finish reason (see answerOf).
func outputMessages(resp *completions.Response, finish string, limit int) string {
	// The message without its parts, then its parts bounded by what is left.
	wrap := encodeJSON([]genaiMessage{{Role: "assistant", FinishReason: finish, Parts: []genaiPart{}}})
	at := bytes.Index(wrap, []byte(`"parts":[]`)) + len(`"parts":`)
	parts := boundedArray(max(limit-(len(wrap)-2), minContentBytes/2), false, func(b *contentBudget) []genaiPart {
		parts := []genaiPart{}
		for _, r := range resp.Reasoning {
			if r.Text != "" {
				parts = append(parts, genaiPart{Type: "reasoning", Content: b.text(r.Text)})
			}
		}
		for _, c := range resp.Message.Content {
			if c.Text != "" {
				parts = append(parts, genaiPart{Type: "text", Content: b.text(c.Text)})
			}
		}
		if resp.Refusal != "" {
			parts = append(parts, genaiPart{Type: "refusal", Content: b.text(resp.Refusal)})
		}
		for _, c := range resp.ToolCalls {
			parts = append(parts, genaiPart{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: b.arguments(c.Arguments)})
		}
		return parts
	}, omittedParts)
	return string(wrap[:at]) + parts + string(wrap[at+2:])
}

// toolDefinitions is the gen_ai.tool.definitions value of req's tools; "" without any.
func toolDefinitions(req *providers.Request, limit int) string {
	if len(req.Tools) == 0 {
		return ""
	}
	return boundedArray(limit, false, func(b *contentBudget) []genaiTool {
		tools := make([]genaiTool, 0, len(req.Tools))
		for _, t := range req.Tools {
			gt := genaiTool{Type: "function", Name: t.Name, Description: b.text(t.Description)}
			if len(t.Parameters) > 0 && len(t.Parameters) <= b.left && json.Valid(t.Parameters) {
				b.left -= len(t.Parameters)
				gt.Parameters = t.Parameters
			}
			tools = append(tools, gt)
		}
		return tools
	}, func(dropped []genaiTool, bytes int) genaiTool {
		return genaiTool{Type: "function", Name: "", Description: omittedText(len(dropped), "tools", bytes)}
	})
}
