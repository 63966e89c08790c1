package completions

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A "refusal" part is an output content type of assistant messages in OpenAI's Responses
// API (as on chat completions, where fc6916a refuses one elsewhere): in a user, system or
// developer message it is a 400 naming the part's type, not text passed on as the user's.
// An assistant's refusal part still reaches the upstream as its text.
func TestReview22pResponsesRefusalOutsideAssistant(t *testing.T) {
	for _, role := range []string{"user", "system", "developer"} {
		body := `{"model":"a/m","input":[{"role":"` + role + `","content":[{"type":"input_text","text":"Hi."},{"type":"refusal","refusal":"No."}]}]}`
		var r ResponsesRequest
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		_, err := r.ToChatRequest()
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "input[0].content[1].type" || !strings.Contains(ve.Message, "assistant messages only") {
			t.Errorf("%s: err = %v, want a refusal of input[0].content[1].type", role, err)
		}
	}
	body := `{"model":"a/m","input":[{"role":"user","content":"Pick a lock."},{"role":"assistant","content":[{"type":"refusal","refusal":"No."}]},{"role":"user","content":"Hi."}]}`
	var r ResponsesRequest
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	c, err := r.ToChatRequest()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 3 || c.Messages[1].Role != "assistant" || len(c.Messages[1].Content.Parts) != 1 || c.Messages[1].Content.Parts[0].Text != "No." {
		t.Errorf("messages = %+v, want the assistant's refusal as its text", c.Messages)
	}
}
