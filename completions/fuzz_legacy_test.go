package completions

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzLegacyFunctions: any chat body in the legacy functions form is translated or
// refused with a *ValidationError naming a field — never a panic — and a translated one
// has no legacy field left, every "function" message answering a tool call made before it.
func FuzzLegacyFunctions(f *testing.F) {
	for _, s := range []string{
		`{"model":"a/m","functions":[{"name":"f"}],"function_call":{"name":"f"},"messages":[{"role":"user","content":"x"},{"role":"assistant","function_call":{"name":"f","arguments":"{}"}},{"role":"function","name":"f","content":"1"}]}`,
		`{"model":"a/m","functions":[],"function_call":"auto","messages":[{"role":"function","name":"g","content":"1"}]}`,
		`{"model":"a/m","functions":{"name":"f"},"messages":[{"role":"user","content":"x"}]}`,
		`{"model":"a/m","functions":[{"name":"f"}],"tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"user","content":"x"}]}`,
		`{"model":"a/m","function_call":7,"messages":[{"role":"assistant","function_call":"x"}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var o OpenAIChatRequest
		if json.Unmarshal([]byte(body), &o) != nil {
			return
		}
		_, err := o.ToRequest()
		var ve *ValidationError
		if err != nil {
			if !errors.As(err, &ve) || ve.Field == "" {
				t.Fatalf("%s: error %v names no field", body, err)
			}
			return
		}
		if present(o.Functions) || present(o.FunctionCall) {
			t.Fatalf("%s: legacy fields left after translation", body)
		}
		calls := map[string]bool{}
		for i, m := range o.Messages {
			if present(m.FunctionCall) || m.Role == "function" {
				t.Fatalf("%s: messages[%d] still legacy", body, i)
			}
			for _, c := range m.ToolCalls {
				calls[c.ID] = true
			}
			if m.Role == "tool" && strings.HasPrefix(m.ToolCallID, "call_fn") && !calls[m.ToolCallID] {
				t.Fatalf("%s: messages[%d] answers %s, no call before it", body, i, m.ToolCallID)
			}
		}
	})
}

// FuzzSpeechUsageScanner: the scanner takes any bytes in any split without a panic, and
// a done event whole in its input is found however the bytes are cut.
func FuzzSpeechUsageScanner(f *testing.F) {
	f.Add([]byte("data: {\"type\":\"speech.audio.delta\",\"audio\":\"QUFB\"}\n\ndata: {\"type\":\"speech.audio.done\",\"usage\":{\"input_tokens\":3,\"output_tokens\":9}}\n\n"), uint16(7))
	f.Add([]byte("data: x\r\n\r\n"), uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		var whole, split speechUsageScanner
		whole.feed(data)
		at := int(cut) % (len(data) + 1)
		split.feed(data[:at])
		split.feed(data[at:])
		if whole.done != split.done || whole.input != split.input || whole.output != split.output {
			t.Fatalf("%q cut at %d: %+v vs %+v", data, at, whole, split)
		}
	})
}
