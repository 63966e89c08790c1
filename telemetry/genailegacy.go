package telemetry

import (
	"encoding/json"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// The older shape of a chat span's content (TracingOptions.LegacyContent), which readers
// that predate gen_ai.input.messages and gen_ai.output.messages take the prompt and the
// answer from:
//
//   - span events "gen_ai.content.prompt" and "gen_ai.content.completion" with attributes
//     gen_ai.prompt and gen_ai.completion, each a JSON array of {role, content,
//     tool_call_id, tool_calls, finish_reason} (the GenAI conventions before v1.28);
//   - flattened attributes gen_ai.prompt.{i}.role, .content, .tool_call_id,
//     .tool_calls.{j}.id/.name/.arguments and gen_ai.completion.0.role, .content,
//     .finish_reason, .tool_calls.{j}.… (OpenLLMetry's, which Langfuse reads).
//
// Both are bounded as the current attributes are: each JSON value at most MaxContentBytes,
// its texts cut newest turn last; the flattened attributes repeat what the JSON kept, at
// most legacyFlatAttributes of them (a span keeps 128 attributes by default), the answer's
// first, then the newest turns'.
type (
	legacyMessage struct {
		Role         string           `json:"role"`
		Content      string           `json:"content"`
		ToolCallID   string           `json:"tool_call_id,omitempty"`
		ToolCalls    []legacyToolCall `json:"tool_calls,omitempty"`
		FinishReason string           `json:"finish_reason,omitempty"`
	}
	legacyToolCall struct {
		ID        string `json:"id,omitempty"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
)

// legacyFlatAttributes bounds the flattened gen_ai.prompt.* and gen_ai.completion.*
// attributes of a span: with the span's other attributes they stay within the SDK's
// default limit of 128, which would otherwise drop the newest turns (the last set).
const legacyFlatAttributes = 80

// addLegacyContent puts r's prompt and answer on span in the older shape (see
// legacyMessage): the two span events and the flattened attributes.
func (t *Tracing) addLegacyContent(span trace.Span, r *completions.RequestRecord) {
	limit := t.opts.MaxContentBytes
	var prompt, completion string
	if r.Prompt != nil {
		prompt = legacyPrompt(r.Prompt, limit)
		span.AddEvent("gen_ai.content.prompt", trace.WithTimestamp(r.Start),
			trace.WithAttributes(attribute.String("gen_ai.prompt", prompt)))
	}
	if a, reason := answerOf(r); a != nil {
		completion = legacyCompletion(a, reason, limit)
		span.AddEvent("gen_ai.content.completion", trace.WithTimestamp(r.Start.Add(r.Latency)),
			trace.WithAttributes(attribute.String("gen_ai.completion", completion)))
	}
	left := legacyFlatAttributes
	var attrs []attribute.KeyValue
	if completion != "" {
		attrs = flattenLegacy(attrs, "gen_ai.completion", decodeLegacy(completion), 1, &left)
	}
	if prompt != "" {
		attrs = flattenLegacy(attrs, "gen_ai.prompt", decodeLegacy(prompt), len(r.Prompt.Messages), &left)
	}
	span.SetAttributes(attrs...)
}

// legacyPrompt is the gen_ai.prompt value of req: every turn, system ones included, in
// order, the text budget spent newest turn first (as inputMessages).
func legacyPrompt(req *providers.Request, limit int) string {
	return boundedArray(limit, true, func(b *contentBudget) []legacyMessage {
		msgs := make([]legacyMessage, len(req.Messages))
		for i := len(req.Messages) - 1; i >= 0; i-- {
			m := &req.Messages[i]
			lm := legacyMessage{Role: m.Role, ToolCallID: m.ToolCallID}
			if m.Role == "tool" {
				lm.Content = b.text(m.Content)
			} else {
				lm.Content = legacyText(contentParts(m, b))
			}
			lm.ToolCalls = legacyCalls(m.ToolCalls, b)
			msgs[i] = lm
		}
		return msgs
	}, func(dropped []legacyMessage, bytes int) legacyMessage {
		return legacyMessage{Role: dropped[0].Role, Content: omittedText(len(dropped), "messages", bytes)}
	})
}

// legacyCompletion is the gen_ai.completion value of an answer: one assistant message
// with its text (its refusal when it has none), tool calls and finish reason.
func legacyCompletion(resp *completions.Response, finish string, limit int) string {
	return boundedArray(limit, false, func(b *contentBudget) []legacyMessage {
		m := legacyMessage{Role: "assistant", FinishReason: finish}
		text := resp.Text()
		if text == "" {
			text = resp.Refusal
		}
		m.Content = b.text(text)
		m.ToolCalls = legacyCalls(resp.ToolCalls, b)
		return []legacyMessage{m}
	}, func(dropped []legacyMessage, bytes int) legacyMessage {
		return legacyMessage{Role: "assistant", Content: omittedText(len(dropped), "messages", bytes)}
	})
}

// legacyText joins a turn's parts (texts, media placeholders) into one content string.
func legacyText(parts []genaiPart) string {
	if len(parts) == 1 {
		return parts[0].Content
	}
	var sb strings.Builder
	for i, p := range parts {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(p.Content)
	}
	return sb.String()
}

func legacyCalls(calls []providers.ToolCall, b *contentBudget) []legacyToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]legacyToolCall, len(calls))
	for i, c := range calls {
		out[i] = legacyToolCall{ID: c.ID, Name: c.Name, Arguments: b.text(c.Arguments)}
	}
	return out
}

// decodeLegacy reads back the messages a bounded gen_ai.prompt or gen_ai.completion value
// kept (with the element saying what was left out), for the flattened attributes.
func decodeLegacy(s string) []legacyMessage {
	var msgs []legacyMessage
	if err := json.Unmarshal([]byte(s), &msgs); err != nil {
		return nil
	}
	return msgs
}

// flattenLegacy adds msgs as prefix.{i}.… attributes, at most *left of them: the newest
// messages that fit, numbered from 0, after a message saying how many earlier ones were
// left out. total is how many messages the bounded value msgs was made of had (msgs may
// begin with an element standing for several), so that the count is of those.
func flattenLegacy(attrs []attribute.KeyValue, prefix string, msgs []legacyMessage, total int, left *int) []attribute.KeyValue {
	cost := func(m *legacyMessage) int {
		n := 2 + 3*len(m.ToolCalls)
		if m.ToolCallID != "" {
			n++
		}
		if m.FinishReason != "" {
			n++
		}
		return n
	}
	first, used := len(msgs), 0
	for first > 0 {
		c := cost(&msgs[first-1])
		room := *left
		if first > 1 {
			room -= 2 // the marker of the ones left out
		}
		if used+c > room {
			break
		}
		first, used = first-1, used+c
	}
	i := 0
	if first > 0 {
		if *left < 2 {
			return attrs
		}
		attrs = append(attrs, attribute.String(prefix+".0.role", msgs[0].Role),
			attribute.String(prefix+".0.content", "…["+strconv.Itoa(max(total-(len(msgs)-first), first))+" earlier messages omitted]"))
		*left -= 2
		i = 1
	}
	for _, m := range msgs[first:] {
		p := prefix + "." + strconv.Itoa(i) + "."
		attrs = append(attrs, attribute.String(p+"role", m.Role), attribute.String(p+"content", m.Content))
		if m.ToolCallID != "" {
			attrs = append(attrs, attribute.String(p+"tool_call_id", m.ToolCallID))
		}
		if m.FinishReason != "" {
			attrs = append(attrs, attribute.String(p+"finish_reason", m.FinishReason))
		}
		for j, c := range m.ToolCalls {
			q := p + "tool_calls." + strconv.Itoa(j) + "."
			attrs = append(attrs, attribute.String(q+"id", c.ID), attribute.String(q+"name", c.Name), attribute.String(q+"arguments", c.Arguments))
		}
		i++
	}
	*left -= used
	return attrs
}
