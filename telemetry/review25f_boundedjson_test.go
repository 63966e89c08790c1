package telemetry

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestContentStaysJSONWhenStructureIsOverTheBound: a prompt of many turns (an agent's long
// tool loop), many tools or an answer of many tool calls is over the bound even with every
// text cut. Each attribute must still be a JSON document of its shape (Langfuse and
// Phoenix parse them to show the messages), within the bound, keeping the newest turns and
// saying what was left out.
func TestContentStaysJSONWhenStructureIsOverTheBound(t *testing.T) {
	const limit = 4096
	r := chatRecord()
	for i := range 3000 {
		r.Prompt.Messages = append(r.Prompt.Messages, providers.Message{Role: "user", Content: "turn " + strconv.Itoa(i) + " " + strings.Repeat("é", 300)})
	}
	r.Prompt.Messages = append(r.Prompt.Messages, providers.Message{Role: "user", Content: "the last question"})
	var rules []providers.Message
	for i := range 300 {
		rules = append(rules, providers.Message{Role: "system", Content: "rule " + strconv.Itoa(i)})
	}
	r.Prompt.Messages = append(rules, r.Prompt.Messages...)
	for i := range 500 {
		r.Prompt.Tools = append(r.Prompt.Tools, providers.Tool{Name: "tool_" + strconv.Itoa(i), Parameters: json.RawMessage(`{"type":"object"}`)})
	}
	for i := range 500 {
		r.Answer.ToolCalls = append(r.Answer.ToolCalls, providers.ToolCall{ID: "call_" + strconv.Itoa(i), Name: "lookup", Arguments: `{"q":"x"}`})
	}
	attrs := chatSpan(t, TracingOptions{CaptureContent: true, MaxContentBytes: limit}, r)
	for _, key := range contentKeys {
		v, ok := attrOf(attrs, key)
		s := v.AsString()
		if !ok {
			t.Errorf("no %s", key)
			continue
		}
		if len(s) > limit {
			t.Errorf("%s: %d bytes, over the bound %d", key, len(s), limit)
		}
		var arr []map[string]any
		if err := json.Unmarshal([]byte(s), &arr); err != nil {
			t.Errorf("%s is not a JSON array: %v: …%s", key, err, s[max(len(s)-120, 0):])
			continue
		}
		if !strings.Contains(s, "omitted") && !strings.Contains(s, "truncated") {
			t.Errorf("%s does not say what was left out: %.300s", key, s)
		}
		// The last element is the newest turn: its text whole, or cut when the older
		// turns' texts took the budget.
		if key == "gen_ai.input.messages" {
			last := arr[len(arr)-1]
			newest := strings.Contains(s, "the last question") || strings.HasSuffix(s, `"…[truncated 17 bytes]"}]}]`)
			if last["role"] != "user" || !newest {
				t.Errorf("%s lost the newest turn: …%s", key, s[max(len(s)-300, 0):])
			}
		}
		if key == "gen_ai.output.messages" && (len(arr) != 1 || arr[0]["role"] != "assistant" || arr[0]["finish_reason"] != "tool_calls") {
			t.Errorf("%s: %.300s", key, s)
		}
	}
	// At the smallest bound too.
	t.Logf("%s", attrsString(chatSpan(t, TracingOptions{CaptureContent: true, MaxContentBytes: minContentBytes}, r)))
	attrs = chatSpan(t, TracingOptions{CaptureContent: true, MaxContentBytes: minContentBytes}, r)
	for _, key := range contentKeys {
		v, _ := attrOf(attrs, key)
		if s := v.AsString(); len(s) > minContentBytes || !json.Valid([]byte(s)) {
			t.Errorf("bound %d: %s is %d bytes, valid JSON %v: %s", minContentBytes, key, len(s), json.Valid([]byte(s)), s)
		}
	}
}

func attrsString(attrs []attribute.KeyValue) string {
	var b strings.Builder
	for _, a := range attrs {
		b.WriteString(string(a.Key) + "=" + a.Value.Emit() + "\n")
	}
	return b.String()
}
