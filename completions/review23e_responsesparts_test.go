package completions

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// An output_text or refusal part is the content of an assistant message in OpenAI's
// Responses API (its output message): in a user, system or developer input message it is a
// 400 naming the part's type and what that role takes, not text passed on as theirs. An
// assistant's output_text and refusal parts still reach the upstream as its text, and an
// unknown part type is refused listing what the message's role accepts.
func TestReview23eResponsesOutputPartsOutsideAssistant(t *testing.T) {
	for _, c := range []struct{ role, part, want string }{
		{"user", `{"type":"output_text","text":"Hi."}`, `user messages take input_text, input_image and input_file parts, got "output_text"`},
		{"system", `{"type":"output_text","text":"Hi."}`, `system messages take input_text parts, got "output_text"`},
		{"developer", `{"type":"output_text","text":"Hi."}`, `developer messages take input_text parts, got "output_text"`},
		{"user", `{"type":"refusal","refusal":"No."}`, `refusal parts are accepted in assistant messages only`},
		{"developer", `{"type":"refusal","refusal":"No."}`, `refusal parts are accepted in assistant messages only`},
		{"user", `{"type":"input_audio"}`, `only input_text, input_image and input_file parts are supported in user messages`},
		{"assistant", `{"type":"input_image","image_url":"https://x/a.png"}`, `user messages only`},
		{"assistant", `{"type":"summary_text"}`, `only output_text, refusal and input_text parts are supported in assistant messages`},
	} {
		body := `{"model":"a/m","input":[{"role":"` + c.role + `","content":[{"type":"input_text","text":"Hello."},` + c.part + `]}]}`
		var r ResponsesRequest
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatal(err)
		}
		_, err := r.ToChatRequest()
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "input[0].content[1].type" || !strings.Contains(ve.Message, c.want) {
			t.Errorf("%s %s: err = %v, want input[0].content[1].type with %q", c.role, c.part, err, c.want)
		}
	}

	body := `{"model":"a/m","input":[{"role":"user","content":[{"type":"input_text","text":"Pick a lock."}]},` +
		`{"role":"assistant","content":[{"type":"output_text","text":"Which lock?"}]},{"role":"user","content":"Mine."},` +
		`{"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"No."}]},{"role":"user","content":"Hi."}]}`
	var r ResponsesRequest
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	c, err := r.ToChatRequest()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 5 || c.Messages[1].Role != "assistant" || c.Messages[1].Content.Parts[0].Text != "Which lock?" ||
		c.Messages[3].Role != "assistant" || c.Messages[3].Content.Parts[0].Text != "No." {
		t.Errorf("messages = %+v, want the assistant's output_text and refusal as its text", c.Messages)
	}
}

// Items added to a conversation are checked as /v1/responses input is: a user message's
// output_text part is refused naming it, so the conversation never holds one.
func TestReview23eConversationItemsOutputPartsOutsideAssistant(t *testing.T) {
	var items []ResponsesItem
	if err := json.Unmarshal([]byte(`[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi."}]},`+
		`{"type":"message","role":"user","content":[{"type":"output_text","text":"Hi."}]}]`), &items); err != nil {
		t.Fatal(err)
	}
	err := checkConversationItems("items", items)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "items[1].content[0].type" || !strings.Contains(ve.Message, "assistant messages only") {
		t.Errorf("err = %v, want items[1].content[0].type refused", err)
	}
	if err := checkConversationItems("items", items[:1]); err != nil {
		t.Errorf("an assistant's output_text: %v", err)
	}
}

// The items of a stored conversation (previous_response_id, conversation) are read as they
// were when stored: a user message's output_text kept before such parts were refused still
// reaches the upstream as its text, while the request's own items are checked.
func TestReview23eStoredHistoryReadAsStored(t *testing.T) {
	var r ResponsesRequest
	if err := json.Unmarshal([]byte(`{"model":"a/m","input":[{"role":"user","content":[{"type":"output_text","text":"Old."}]},`+
		`{"role":"assistant","content":[{"type":"output_text","text":"Yes."}]},{"role":"user","content":"New."}]}`), &r); err != nil {
		t.Fatal(err)
	}
	r.continued, r.history = true, 2
	c, err := r.ToChatRequest()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 3 || c.Messages[0].Content.Parts[0].Text != "Old." {
		t.Errorf("messages = %+v, want the stored user message's text", c.Messages)
	}
	r.history = 0
	_, err = r.ToChatRequest()
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "input[0].content[0].type" {
		t.Errorf("the request's own item: err = %v, want input[0].content[0].type", err)
	}
}
