package completions

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

func stdJSONString(t testing.TB, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

var jsonStringSeeds = []string{
	"", "plain", `quote " and \ backslash`, "tab\tnew\nline\rcr\bbs\fff", "\x00\x01\x1f\x7f",
	"<html> & 'amp'", "caf\xe9", "\xff\xfe", "\u2028\u2029", "emoji 🙂 and 中文", "\xed\xa0\x80 surrogate",
	"trailing \xe2\x82", fragmentPlaceholder,
}

// TestAppendJSONStringMatchesEncodingJSON checks the hand-written quoting against
// encoding/json on tricky strings and 20,000 random byte strings (valid and invalid UTF-8).
func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := append([]string(nil), jsonStringSeeds...)
	alphabet := []string{"a", " ", "\"", "\\", "\n", "\x00", "\x1f", "\x7f", "é", "\xe9", "\u2028", "🙂", "\xf0\x9f", "<", "&"}
	for range 20000 {
		var b []byte
		for range r.IntN(12) {
			if r.IntN(4) == 0 {
				b = append(b, byte(r.IntN(256)))
			} else {
				b = append(b, alphabet[r.IntN(len(alphabet))]...)
			}
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := appendJSONString(nil, s), stdJSONString(t, s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, encoding/json gives %s", s, got, want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonStringSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := appendJSONString(nil, s), stdJSONString(t, s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, encoding/json gives %s", s, got, want)
		}
	})
}

// TestFragmentTemplateMatchesEncodingJSON: an event made from the template is byte for byte
// the event encoding/json makes, for both stream framings.
func TestFragmentTemplateMatchesEncodingJSON(t *testing.T) {
	native := func(text string) any {
		return &Chunk{Provider: "openai", Model: "gpt-4o", ResponseMessageID: "0b6c", Type: EventText, Text: text, Message: assistantText(text)}
	}
	openai := func(text string) any {
		return OpenAIChunk{ID: "chatcmpl-0b6c", Object: "chat.completion.chunk", Created: 1700000000, Model: "openai/gpt-4o",
			Choices: []OpenAIChunkChoice{{Delta: OpenAIDelta{Content: text}}}}
	}
	base := OpenAIChunk{ID: "chatcmpl-0b6c", Object: "chat.completion.chunk", Created: 1700000000, Model: "openai/gpt-4o"}
	toolArgs := func(text string) any {
		return toolCallChunk(base, 0, providers.ToolCallDelta{Index: 2, Arguments: text}, false)
	}
	for name, tc := range map[string]struct {
		sample func(string) any
		uses   int
	}{"native": {native, 2}, "openai": {openai, 1}, "openai tool arguments": {toolArgs, 1}} {
		tpl := newFragmentTemplate(tc.sample(fragmentPlaceholder), tc.uses)
		if tpl == nil {
			t.Fatalf("%s: no template", name)
		}
		for _, s := range jsonStringSeeds[1:] { // "" is not sent as a fragment
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			enc.Encode(tc.sample(s))
			if got := tpl.event(s); !bytes.Equal(got, bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
				t.Fatalf("%s %q:\n got %s\nwant %s", name, s, got, want.Bytes())
			}
		}
	}
	// A placeholder clash (another field holding it) gives no template rather than a wrong one.
	if tpl := newFragmentTemplate(native(fragmentPlaceholder), 1); tpl != nil {
		t.Fatal("template made with the wrong number of uses")
	}
}
