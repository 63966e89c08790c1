package completions

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A chat content part of an unknown type is refused with what the message's role accepts:
// an assistant's refusal parts are among them, a user's images and files, a system's text.
func TestReview22pChatUnknownPartNamesRoleTypes(t *testing.T) {
	for role, want := range map[string]string{
		"user":      "must be text, image_url, file or input_audio",
		"assistant": "must be text or refusal",
		"system":    "must be text,",
		"developer": "must be text,",
		"tool":      "must be text,",
	} {
		body := `{"model":"a/m","messages":[{"role":"` + role + `","tool_call_id":"c","content":[{"type":"audio"}]}]}`
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(body), &o); err != nil {
			t.Fatal(err)
		}
		_, err := o.ToRequest()
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "messages[0].content[0].type" || !strings.Contains(ve.Message, want) {
			t.Errorf("%s: err = %v, want messages[0].content[0].type with %q", role, err, want)
		}
	}
}
