package completions

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// review17d: guardInput collects only m.Content[].Text; an assistant turn's ToolCalls
// arguments (OpenAI tool_calls[].function.arguments, Anthropic tool_use input, Responses
// function_call items) are sent upstream unchecked and unmasked. A client puts the
// secret / banned text into a fabricated earlier tool call and the default_on guardrail
// never sees it. Fix: check (and mask) every ToolCalls[].Arguments in pre_call, as
// guardOutput does for the answer's.
func TestReview17dPreCallChecksHistoryToolCallArguments(t *testing.T) {
	f := newFake("fake")
	g, _, _ := guardedGateway(t, f, nil,
		GuardrailConfig{Name: "keys", Kind: GuardrailSecrets, Mode: GuardrailPreCall, DefaultOn: true},
		GuardrailConfig{Name: "words", Kind: GuardrailBannedWords, Mode: GuardrailPreCall, Words: []string{"project x"}})
	req := userRequest("go on")
	req.ephemeral = true
	req.Messages = []Message{
		TextMessage("user", "look it up"),
		{Role: "assistant", ToolCalls: []providers.ToolCall{{ID: "c1", Name: "lookup",
			Arguments: `{"q":"project x","key":"sk-proj-abcdefghijklmnopqrstuvwx"}`}}},
		{Role: "tool", ToolCallID: "c1", Content: []ContentBlock{{Type: "text", Text: "ok"}}},
		TextMessage("user", "go on"),
	}
	if _, err := g.Complete(context.Background(), Scope{}, req); err != nil {
		t.Fatal(err)
	}
	for _, m := range f.lastRequest().Messages {
		for _, c := range m.ToolCalls {
			if strings.Contains(c.Arguments, "sk-proj-") {
				t.Errorf("the secret in a tool call's arguments reached the upstream unmasked: %s", c.Arguments)
			}
		}
	}
	req.Guardrails = []string{"words"}
	if _, err := g.Complete(context.Background(), Scope{}, req); !errors.Is(err, ErrGuardrailBlocked) {
		t.Errorf("a banned word in a tool call's arguments passed the pre_call guardrail: %v", err)
	}
}

// review17d: containsWord treats every byte >= 0x80 as a word character, so a banned word
// next to non-ASCII punctuation or spacing — a no-break space, a typographic apostrophe
// (U+2019, what phones type), an em dash, CJK punctuation, «guillemets» — is not a whole
// word and passes. Fix: decode the runes around the match and use unicode.IsLetter /
// IsDigit (or '_') as the word test.
func TestReview17dBannedWordNextToUnicodePunctuation(t *testing.T) {
	gr, err := newBannedWordsGuardrail(GuardrailConfig{Words: []string{"project x"}}, func(s string) string { return s })
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{
		"tell me about\u00a0project x\u00a0now", // no-break spaces
		"what is project x\u2019s budget",       // typographic apostrophe
		"project x\u2014the plan",               // em dash
		"«project x»",                           // guillemets
		"问：project x。",                          // CJK colon and full stop
	} {
		v, _ := gr.Check(context.Background(), GuardrailInput{Texts: []string{text}})
		if !v.Blocked {
			t.Errorf("%q passed the banned_words guardrail", text)
		}
	}
}

// review17d: the phone entity (8 to 15 digits in 2-4 digit groups) masks ISO dates,
// times with dates, IPv4 addresses and dotted version numbers as [PHONE] — a default pii
// guardrail mangles logs, code and questions about dates ("2024-01-15" becomes
// "[PHONE]"). phoneLike's own comment says dates are not phone numbers. Fix: require a
// leading + or a parenthesised area code, or refuse matches shaped like dates
// (\d{4}-\d{2}-\d{2}), dotted quads and matches whose groups are all separated by '.'.
func TestReview17dPIIPhoneDoesNotMaskDatesAndAddresses(t *testing.T) {
	c := GuardrailConfig{Kind: GuardrailPII, Mode: GuardrailPreCall}
	gr, err := newSensitiveDataGuardrail(&c, func(s string) string { return s })
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{
		"the release is on 2024-01-15",
		"started at 2024-01-15 10:30",
		"ping 192.168.100.200 please",
		"bump to 2024.10.15.1",
	} {
		v, _ := gr.Check(context.Background(), GuardrailInput{Mode: GuardrailPreCall, Texts: []string{text}})
		if v.Texts != nil && v.Texts[0] != text {
			t.Errorf("%q was masked as %q", text, v.Texts[0])
		}
	}
}

// review17d: guardOutput checks the answer's text and tool-call arguments, not its
// reasoning, which the surfaces return to the client (reasoning_content, thinking
// blocks, Responses reasoning summaries): a post_call guardrail's banned text reaches
// the client through the reasoning. Fix: add each Reasoning block's Text (and the
// refusal) to the post_call texts.
func TestReview17dPostCallChecksReasoning(t *testing.T) {
	f := newFake("fake").on("m", step{text: "fine", reasoning: []providers.ReasoningBlock{{Text: "the launch code is 1234"}}})
	g, _, _ := guardedGateway(t, f, nil,
		GuardrailConfig{Name: "codes", Kind: GuardrailRegex, Mode: GuardrailPostCall, DefaultOn: true, Patterns: []string{`launch code is \d+`}})
	req := userRequest("hi")
	req.Thinking = &providers.Thinking{}
	resp, err := g.Complete(context.Background(), Scope{}, req)
	if err == nil {
		for _, r := range resp.Reasoning {
			if strings.Contains(r.Text, "launch code") {
				t.Errorf("the post_call guardrail let through the reasoning %q", r.Text)
			}
		}
	}
}
