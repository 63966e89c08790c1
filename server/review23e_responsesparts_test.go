package server

import (
	"strings"
	"testing"
)

// /v1/responses refuses an output_text part in a user message with OpenAI's 400 naming the
// part's type as its param, and continues a stored answer (previous_response_id) whose
// replayed output is an assistant's output_text, beside an assistant output_text and
// refusal given in the input.
func TestReview23eResponsesOutputTextInUserMessage(t *testing.T) {
	hs, _, up := completionsServer(t)
	url := hs.URL + "/v1/responses"
	resp, b := do2(t, "POST", url, testKey, `{"model":"up/ok","input":[{"role":"user","content":[{"type":"input_text","text":"Hi."},{"type":"output_text","text":"Hi."}]}]}`, nil)
	e := wantOpenAIError(t, "output_text in a user message", resp, b, 400, "invalid_request_error", "")
	if e.Param == nil || *e.Param != "input[0].content[1].type" || !strings.Contains(e.Message, "assistant messages only") {
		t.Errorf("param %v message %q, want input[0].content[1].type", e.Param, e.Message)
	}

	resp, b = do2(t, "POST", url, testKey, `{"model":"up/ok","input":[{"role":"user","content":"Hi."},`+
		`{"role":"assistant","content":[{"type":"output_text","text":"Hello."}]},{"role":"user","content":"Rob a bank."},`+
		`{"role":"assistant","content":[{"type":"refusal","refusal":"No."}]},{"role":"user","content":"Bye."}]}`, nil)
	first := responseOf(t, b)
	if resp.StatusCode != 200 {
		t.Fatalf("assistant output_text and refusal: %d %s", resp.StatusCode, b)
	}
	resp, b = do2(t, "POST", url, testKey, `{"model":"up/ok","previous_response_id":"`+first["id"].(string)+`","input":"Again."}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("continued: %d %s", resp.StatusCode, b)
	}
	got := up.last()
	if len(got) != 7 || got[1]["content"] != "Hello." || got[3]["content"] != "No." || got[5]["role"] != "assistant" || got[5]["content"] != "Hello from ok" {
		t.Errorf("the upstream got %v, want the stored turns and the answer replayed", got)
	}
}
