package providers

import (
	"strings"
	"testing"
)

// TestUsageMeterStreamFailure: an Anthropic stream's error event is its failure, of the
// kind its error type says, and came before any content unless a text delta, a thinking
// delta or a tool call (a tool_use block's name) came first; an empty text block is no
// content. A stream without one, and a JSON answer, report none.
func TestUsageMeterStreamFailure(t *testing.T) {
	const start = `data: {"type":"message_start","message":{"model":"claude-x","usage":{"input_tokens":20}}}` + "\n\n"
	const errEvent = `data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` + "\n\n"
	for _, tc := range []struct {
		what, events  string
		failed, early bool
	}{
		{"error after message_start", start + errEvent, true, true},
		{"error after an empty text block", start + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" + errEvent, true, true},
		{"error after text", start + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}` + "\n\n" + errEvent, true, false},
		{"error after a tool call", start + `data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"get_weather","input":{}}}` + "\n\n" + errEvent, true, false},
		{"no error", start + `data: {"type":"message_stop"}` + "\n\n", false, false},
	} {
		m, err := NewUsageMeter(FormatAnthropic, "text/event-stream")
		if err != nil {
			t.Fatal(err)
		}
		m.Write([]byte(tc.events))
		f, early := m.StreamFailure()
		if (f != nil) != tc.failed || early != tc.early {
			t.Errorf("%s: failure %v before content %v, want %v %v", tc.what, f, early, tc.failed, tc.early)
		}
		if f != nil && (f.Kind != KindOverloaded || f.Code != "overloaded_error" || !strings.Contains(f.Message, "Overloaded")) {
			t.Errorf("%s: failure %+v, want overloaded", tc.what, f)
		}
	}
	m, _ := NewUsageMeter(FormatAnthropic, "application/json")
	m.Write([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
	if f, _ := m.StreamFailure(); f != nil {
		t.Errorf("a JSON answer: failure %v", f)
	}
}
