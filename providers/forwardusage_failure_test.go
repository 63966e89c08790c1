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

// TestUsageMeterOpenAIGeminiStreamFailure: an OpenAI chat chunk's error object, a
// Responses API error event and a Gemini error object (an event, or an element of
// streamGenerateContent's JSON array) are their streams' failures, before content or after
// it; a JSON answer that is not a stream has none.
func TestUsageMeterOpenAIGeminiStreamFailure(t *testing.T) {
	const (
		role     = `data: {"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n"
		text     = `data: {"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hi"}}]}` + "\n\n"
		call     = `data: {"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"get_weather","arguments":""}}]}}]}` + "\n\n"
		oaiErr   = `data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","code":null}}` + "\n\n"
		respText = `data: {"type":"response.output_text.delta","delta":"Hi"}` + "\n\n"
		respErr  = `data: {"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached"}` + "\n\n"
		gemUsage = `"usageMetadata":{"promptTokenCount":9}`
		gemEmpty = `data: {"candidates":[{"content":{"role":"model","parts":[{"text":""}]}}],` + gemUsage + `}` + "\n\n"
		gemText  = `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]}}],` + gemUsage + `}` + "\n\n"
		gemErr   = `data: {"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}` + "\n\n"
	)
	for _, tc := range []struct {
		what          string
		format        Format
		contentType   string
		body          string
		failed, early bool
		kind          ErrorKind
		message       string
	}{
		{"openai error after the role", FormatOpenAI, "text/event-stream", role + oaiErr, true, true, KindOverloaded, "server had an error"},
		{"openai error after text", FormatOpenAI, "text/event-stream", role + text + oaiErr, true, false, KindOverloaded, "server had an error"},
		{"openai error after a tool call", FormatOpenAI, "text/event-stream", role + call + oaiErr, true, false, KindOverloaded, "server had an error"},
		{"openai error as text", FormatOpenAI, "text/event-stream", `data: {"error":"upstream went away"}` + "\n\n", true, true, KindStreamBroken, "upstream went away"},
		{"openai no error", FormatOpenAI, "text/event-stream", role + text + `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"error":null}` + "\n\ndata: [DONE]\n\n", false, false, 0, ""},
		{"responses error event", FormatOpenAI, "text/event-stream", `data: {"type":"response.created","response":{"model":"gpt-4o-mini"}}` + "\n\n" + respErr, true, true, KindRateLimited, "Rate limit"},
		{"responses error after text", FormatOpenAI, "text/event-stream", respText + respErr, true, false, KindRateLimited, "Rate limit"},
		{"responses failed", FormatOpenAI, "text/event-stream", respText + `data: {"type":"response.failed","response":{"model":"gpt-4o-mini","error":{"code":"server_error","message":"boom"}}}` + "\n\n", true, false, KindOverloaded, "boom"},
		{"openai JSON answer", FormatOpenAI, "application/json", `{"error":{"message":"x","type":"server_error"}}`, false, false, 0, ""},
		{"gemini error after an empty part", FormatGemini, "text/event-stream", gemEmpty + gemErr, true, true, KindOverloaded, "overloaded"},
		{"gemini error after text", FormatGemini, "text/event-stream", gemEmpty + gemText + gemErr, true, false, KindOverloaded, "overloaded"},
		{"gemini no error", FormatGemini, "text/event-stream", gemText, false, false, 0, ""},
		{"gemini array error", FormatGemini, "application/json", `[{"candidates":[{"content":{"parts":[{"text":"Hi"}]}}],` + gemUsage + `},{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}]`, true, false, KindOverloaded, "overloaded"},
		{"gemini array error first", FormatGemini, "application/json", `[{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}]`, true, true, KindRateLimited, "Quota"},
		{"gemini JSON answer", FormatGemini, "application/json", `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`, false, false, 0, ""},
	} {
		m, err := NewUsageMeter(tc.format, tc.contentType)
		if err != nil {
			t.Fatal(err)
		}
		m.Write([]byte(tc.body))
		f, early := m.StreamFailure()
		if (f != nil) != tc.failed || early != tc.early {
			t.Errorf("%s: failure %v before content %v, want %v %v", tc.what, f, early, tc.failed, tc.early)
			continue
		}
		if f != nil && (f.Kind != tc.kind || !strings.Contains(f.Message, tc.message)) {
			t.Errorf("%s: failure %+v, want kind %v with %q", tc.what, f, tc.kind, tc.message)
		}
	}
}
