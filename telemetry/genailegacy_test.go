package telemetry

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchyard-ai/switchyard/providers"
)

func eventAttr(t *testing.T, sp tracetest.SpanStub, event, key string) (string, bool) {
	t.Helper()
	for _, e := range sp.Events {
		if e.Name == event {
			for _, a := range e.Attributes {
				if string(a.Key) == key {
					return a.Value.AsString(), true
				}
			}
		}
	}
	return "", false
}

// TestLegacyContentShape: with LegacyContent (and capture on) the chat span also carries
// the prompt and answer as older readers want them: the gen_ai.content.prompt and
// gen_ai.content.completion events with JSON gen_ai.prompt / gen_ai.completion, and the
// flattened gen_ai.prompt.{i}.* / gen_ai.completion.0.* attributes; the current attributes
// stay. Without capture, or without the option, there is none of it.
func TestLegacyContentShape(t *testing.T) {
	sp := chatSpanStub(t, observedSpans(t, TracingOptions{CaptureContent: true, LegacyContent: true}, chatRecord()))
	prompt, ok := eventAttr(t, sp, "gen_ai.content.prompt", "gen_ai.prompt")
	if !ok {
		t.Fatalf("no gen_ai.content.prompt event: %+v", sp.Events)
	}
	var in []legacyMessage
	if err := json.Unmarshal([]byte(prompt), &in); err != nil {
		t.Fatalf("gen_ai.prompt is not JSON: %v: %s", err, prompt)
	}
	if len(in) != 4 || in[0].Role != "system" || in[0].Content != "You are terse." || in[1].Role != "user" ||
		!strings.HasPrefix(in[1].Content, "What is in this picture?\n[image omitted") || in[2].Role != "assistant" ||
		len(in[2].ToolCalls) != 1 || in[2].ToolCalls[0].Arguments != `{"q":"cat"}` || in[3].Role != "tool" || in[3].ToolCallID != "call_1" ||
		in[3].Content != "a cat, probably" {
		t.Errorf("gen_ai.prompt %+v", in)
	}
	completion, ok := eventAttr(t, sp, "gen_ai.content.completion", "gen_ai.completion")
	var out []legacyMessage
	if err := json.Unmarshal([]byte(completion), &out); !ok || err != nil || len(out) != 1 || out[0].Role != "assistant" ||
		out[0].Content != "It is a cat." || out[0].FinishReason != "tool_calls" || len(out[0].ToolCalls) != 1 || out[0].ToolCalls[0].Name != "lookup" {
		t.Errorf("gen_ai.completion %v %v: %s", ok, err, completion)
	}
	for key, want := range map[string]string{
		"gen_ai.prompt.0.role":                       "system",
		"gen_ai.prompt.0.content":                    "You are terse.",
		"gen_ai.prompt.1.role":                       "user",
		"gen_ai.prompt.2.tool_calls.0.name":          "lookup",
		"gen_ai.prompt.3.role":                       "tool",
		"gen_ai.prompt.3.content":                    "a cat, probably",
		"gen_ai.prompt.3.tool_call_id":               "call_1",
		"gen_ai.completion.0.role":                   "assistant",
		"gen_ai.completion.0.content":                "It is a cat.",
		"gen_ai.completion.0.finish_reason":          "tool_calls",
		"gen_ai.completion.0.tool_calls.0.id":        "call_2",
		"gen_ai.completion.0.tool_calls.0.name":      "lookup",
		"gen_ai.completion.0.tool_calls.0.arguments": `{"q":"breed"}`,
	} {
		if v, ok := attrOf(sp.Attributes, key); !ok || v.AsString() != want {
			t.Errorf("%s = %q (present %v), want %q", key, v.AsString(), ok, want)
		}
	}
	if _, ok := attrOf(sp.Attributes, "gen_ai.input.messages"); !ok {
		t.Error("the current gen_ai.input.messages is gone with the legacy shape on")
	}
	for _, img := range []string{"iVBORw0KGgo", "base64"} {
		if strings.Contains(prompt, img) {
			t.Errorf("gen_ai.prompt carries the image: %.200s", prompt)
		}
	}

	// Off: without the option, and without capture even with it.
	for _, opts := range []TracingOptions{{CaptureContent: true}, {LegacyContent: true}} {
		sp := chatSpanStub(t, observedSpans(t, opts, chatRecord()))
		if len(sp.Events) != 0 {
			t.Errorf("%+v: events %+v", opts, sp.Events)
		}
		for _, a := range sp.Attributes {
			if strings.HasPrefix(string(a.Key), "gen_ai.prompt") || strings.HasPrefix(string(a.Key), "gen_ai.completion") {
				t.Errorf("%+v: %s on the span", opts, a.Key)
			}
		}
	}
}

// TestLegacyContentIsBounded: the legacy values are bounded like the current ones (valid
// JSON within MaxContentBytes, the newest turn whole), and a long conversation's flattened
// attributes keep the newest turns and the answer within the span's attribute limit (the
// SDK's default 128 would drop the last set, the newest), numbered from 0 after a marker.
func TestLegacyContentIsBounded(t *testing.T) {
	const limit = 4096
	r := chatRecord()
	for i := range 500 {
		r.Prompt.Messages = append(r.Prompt.Messages, providers.Message{Role: "user", Content: "turn " + strconv.Itoa(i) + " " + strings.Repeat("x", 200)})
	}
	r.Prompt.Messages = append(r.Prompt.Messages, providers.Message{Role: "user", Content: "the last question"})
	r.Answer.Message.Content[0].Text = strings.Repeat("answer ", 2000)
	spans := observedSpans(t, TracingOptions{CaptureContent: true, LegacyContent: true, MaxContentBytes: limit}, r)
	sp := chatSpanStub(t, spans)
	for event, key := range map[string]string{"gen_ai.content.prompt": "gen_ai.prompt", "gen_ai.content.completion": "gen_ai.completion"} {
		s, ok := eventAttr(t, sp, event, key)
		if !ok || len(s) > limit || !json.Valid([]byte(s)) {
			t.Errorf("%s: %d bytes (limit %d), valid %v", key, len(s), limit, json.Valid([]byte(s)))
		}
	}
	if s, _ := eventAttr(t, sp, "gen_ai.content.prompt", "gen_ai.prompt"); !strings.Contains(s, `"the last question"`) {
		t.Errorf("gen_ai.prompt lost the newest turn: …%s", s[max(len(s)-200, 0):])
	}
	if sp.DroppedAttributes != 0 {
		t.Errorf("%d attributes dropped by the span's limit", sp.DroppedAttributes)
	}
	last := -1
	for _, a := range sp.Attributes {
		if rest, ok := strings.CutPrefix(string(a.Key), "gen_ai.prompt."); ok {
			n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, '.')])
			last = max(last, n)
		}
	}
	if v, _ := attrOf(sp.Attributes, "gen_ai.prompt."+strconv.Itoa(last)+".content"); v.AsString() != "the last question" {
		t.Errorf("the last flattened turn (%d) is %q, not the newest", last, v.AsString())
	}
	if v, _ := attrOf(sp.Attributes, "gen_ai.prompt.0.content"); !strings.Contains(v.AsString(), "earlier messages omitted") {
		t.Errorf("gen_ai.prompt.0.content = %q, want the marker of the turns left out", v.AsString())
	}
	if v, _ := attrOf(sp.Attributes, "gen_ai.completion.0.content"); !strings.Contains(v.AsString(), "…[truncated ") {
		t.Errorf("gen_ai.completion.0.content is not the bounded answer: %d bytes", len(v.AsString()))
	}
}
