package completions

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestMessageDecoding: the native message shapes decode, and every malformed one is a
// *ValidationError naming the field relative to the message.
func TestMessageDecoding(t *testing.T) {
	var m Message
	if err := json.Unmarshal([]byte(`{"role":"user","content":[{"type":"text","text":"a"},{"text":"b","type":"text"}]}`), &m); err != nil ||
		m.Role != "user" || len(m.Content) != 2 || m.Content[1].Text != "b" {
		t.Fatalf("blocks: %+v %v", m, err)
	}
	if err := json.Unmarshal([]byte(`{"content":"hi","role":"assistant"}`), &m); err != nil || m.Role != "assistant" || m.Text() != "hi" {
		t.Fatalf("string content: %+v %v", m, err)
	}
	if err := json.Unmarshal([]byte(`{"role":"user","content":null}`), &m); err != nil || m.Content != nil {
		t.Fatalf("null content: %+v %v", m, err)
	}
	for in, want := range map[string]string{
		`5`:                               ": must be an object",
		`{"role":"user","content":5}`:     "content: must be an array of content blocks or a string, got number",
		`{"role":["user"],"content":"x"}`: "role: must be a string, got array",
		`{"role":"user","Content":"x"}`:   "Content: unknown field",
		`{"role":"user","content":[{"type":"text"}]}`:                  "content[0].text: is required",
		`{"role":"user","content":[{"text":"x"}]}`:                     "content[0].type: is required",
		`{"role":"user","content":[{"type":"text","text":1}]}`:         "content[0].text: must be a string, got number",
		`{"role":"user","content":["x"]}`:                              "content[0]: must be an object with type and text, got string",
		`{"role":"user","content":[{"type":"text","text":"a","x":1}]}`: "content[0].x: unknown field",
		"{\"role\":\"us\xffer\",\"content\":\"x\"}":                    "role: is not a valid JSON string",
	} {
		err := json.Unmarshal([]byte(in), &m)
		var ve *ValidationError
		if !errors.As(err, &ve) || !strings.Contains(": "+ve.Error(), want) {
			t.Errorf("%s: err %v, want %q", in, err, want)
		}
	}
}
