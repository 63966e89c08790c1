package providers

import (
	"strings"
	"testing"
)

// TestUsageMeterAnswerFailure: a JSON answer (not a stream) that is an error object —
// OpenAI's or a compatible server's {"error": …}, Anthropic's {"type": "error"}, Gemini's
// {"error": {…}} — is its answer's failure, billed nothing; a failed Responses API
// response is one too, billed the usage it reports; an answer, an API object that failed
// (a fine-tuning job, a long-running operation) and a stream are not.
func TestUsageMeterAnswerFailure(t *testing.T) {
	for _, tc := range []struct {
		what         string
		format       Format
		contentType  string
		body         string
		failed       bool
		kind         ErrorKind
		message      string
		billed       bool
		promptTokens int
	}{
		{"openai error object", FormatOpenAI, "application/json", `{"error":{"message":"The server is overloaded","type":"server_error"}}`, true, KindOverloaded, "overloaded", false, 0},
		{"openai error text", FormatOpenAI, "application/json", `{"error":"rate limit exceeded"}`, true, KindRateLimited, "rate limit", false, 0},
		{"openai answer with error null", FormatOpenAI, "application/json", `{"object":"chat.completion","error":null,"choices":[{"index":0,"message":{"content":"hi"}}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`, false, 0, "", false, 3},
		{"openai fine-tuning job that failed", FormatOpenAI, "application/json", `{"object":"fine_tuning.job","status":"failed","error":{"code":"invalid_training_file","message":"bad file"}}`, false, 0, "", false, 0},
		{"responses failed with usage", FormatOpenAI, "application/json", `{"object":"response","status":"failed","model":"gpt-4o-mini","error":{"code":"server_error","message":"boom"},"usage":{"input_tokens":20,"output_tokens":0,"total_tokens":20}}`, true, KindOverloaded, "boom", true, 20},
		{"responses completed", FormatOpenAI, "application/json", `{"object":"response","status":"completed","error":null,"usage":{"input_tokens":20,"output_tokens":2,"total_tokens":22}}`, false, 0, "", false, 20},
		{"anthropic error", FormatAnthropic, "application/json", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, true, KindOverloaded, "Overloaded", false, 0},
		{"gemini error", FormatGemini, "application/json", `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`, true, KindOverloaded, "overloaded", false, 0},
		{"gemini operation that failed", FormatGemini, "application/json", `{"name":"operations/x","done":true,"error":{"code":3,"message":"bad prompt"}}`, false, 0, "", false, 0},
		{"openai stream error", FormatOpenAI, "text/event-stream", `data: {"error":{"message":"x","type":"server_error"}}` + "\n\n", false, 0, "", false, 0},
	} {
		m, err := NewUsageMeter(tc.format, tc.contentType)
		if err != nil {
			t.Fatal(err)
		}
		m.Write([]byte(tc.body))
		f := m.AnswerFailure()
		if (f != nil) != tc.failed || m.FailureBilled() != tc.billed {
			t.Errorf("%s: failure %v billed %v, want %v %v", tc.what, f, m.FailureBilled(), tc.failed, tc.billed)
			continue
		}
		if f != nil && (f.Kind != tc.kind || !strings.Contains(f.Message, tc.message)) {
			t.Errorf("%s: failure %+v (%v), want %v saying %q", tc.what, f, f.Kind, tc.kind, tc.message)
		}
		if u, _, _ := m.Usage(); u.PromptTokens != tc.promptTokens {
			t.Errorf("%s: usage %+v, want %d prompt tokens", tc.what, u, tc.promptTokens)
		}
	}
}

// TestUsageMeterResponsesFailedBilled: a Responses API stream's response.failed before
// any content is billed the usage it reports (FailureBilled), as OpenAI charges it; one
// reporting none, and an error event, are not.
func TestUsageMeterResponsesFailedBilled(t *testing.T) {
	const created = `data: {"type":"response.created","response":{"model":"gpt-4o-mini","usage":null}}` + "\n\n"
	for _, tc := range []struct {
		what, event string
		billed      bool
	}{
		{"failed with usage", `data: {"type":"response.failed","response":{"model":"gpt-4o-mini","status":"failed","error":{"code":"server_error","message":"boom"},"usage":{"input_tokens":20,"output_tokens":3,"total_tokens":23}}}` + "\n\n", true},
		{"failed without usage", `data: {"type":"response.failed","response":{"model":"gpt-4o-mini","status":"failed","error":{"code":"server_error","message":"boom"},"usage":null}}` + "\n\n", false},
		{"error event", `data: {"type":"error","code":"server_error","message":"boom"}` + "\n\n", false},
	} {
		m, _ := NewUsageMeter(FormatOpenAI, "text/event-stream")
		m.Write([]byte(created + tc.event))
		f, early := m.StreamFailure()
		if f == nil || !early || m.FailureBilled() != tc.billed {
			t.Errorf("%s: failure %v before content %v billed %v, want a failure before content billed %v", tc.what, f, early, m.FailureBilled(), tc.billed)
		}
		if u, _, ok := m.Usage(); tc.billed && (!ok || u.PromptTokens != 20 || u.CompletionTokens != 3) {
			t.Errorf("%s: usage %+v (%v), want 20+3", tc.what, u, ok)
		}
	}
}
