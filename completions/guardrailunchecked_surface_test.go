package completions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// pngData is a base64 PNG as a client sends it inline.
const pngData = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg=="

// TestGuardrailUncheckedPartsInSurfaceTerms: the parts pre_call guardrails cannot read are
// named as the caller's request names them — on /v1/messages the image block's source, its
// turn counted without the system prompt (not the chat surface's messages[1]…image_url) —
// in GuardrailInput.Unchecked and in the on_unchecked refusal.
func TestGuardrailUncheckedPartsInSurfaceTerms(t *testing.T) {
	oai, _ := spokenUpstream(t, "Hi.")
	seer := &inputSeer{}
	h := newHarness(t, func(o *Options) {
		o.Providers = fakeRegistry{"openai": oai}
		o.Prices = providers.DefaultCatalog()
		o.Guardrails = []GuardrailConfig{{Name: "seer", Kind: GuardrailCustom, Mode: GuardrailPreCall, DefaultOn: true, Custom: seer},
			{Name: "strict", Kind: GuardrailBannedWords, Mode: GuardrailPreCall, Words: []string{"zzz"}, OnUnchecked: GuardrailBlock}}
	})
	body := `{"model":"openai/gpt-4o","max_tokens":100,"system":"Be brief.","messages":[{"role":"user","content":[
		{"type":"text","text":"What is this?"},
		{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + pngData + `"}}]}]}`
	var ar AnthropicMessagesRequest
	if err := json.Unmarshal([]byte(body), &ar); err != nil {
		t.Fatal(err)
	}
	chat, err := ar.ToChatRequest()
	if err != nil {
		t.Fatal(err)
	}
	req, err := chat.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.Complete(context.Background(), Scope{}, req); err != nil {
		t.Fatal(err)
	}
	const want = "messages[0].content[1].source"
	if len(seer.seen) != 1 || fmt.Sprint(seer.seen[0].Unchecked) != "["+want+"]" {
		t.Fatalf("guardrail told unchecked %v, want [%s]", seer.seen[0].Unchecked, want)
	}
	strict, err := chat.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	strict.Guardrails = []string{"strict"}
	_, err = h.g.Complete(context.Background(), Scope{}, strict)
	var ge *GuardrailError
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "image_url") {
		t.Fatalf("on_unchecked block: %v, want the refusal naming %s", err, want)
	}
}

// TestGuardrailUncheckedPartsInResponsesTerms: on /v1/responses the parts pre_call
// guardrails cannot read are named as the Responses API spells them — an input_file part
// itself (input[1].content[1], not the chat surface's ….file, a member it has not), an
// input_image part's image_url, and a function_call_output's file by its place in the
// output (input[3].output[1], not the user turn the gateway made of the outputs' files) —
// in GuardrailInput.Unchecked and in the on_unchecked refusal.
func TestGuardrailUncheckedPartsInResponsesTerms(t *testing.T) {
	oai, _ := spokenUpstream(t, "Hi.")
	seer := &inputSeer{}
	h := newHarness(t, func(o *Options) {
		o.Providers = fakeRegistry{"openai": oai}
		o.Prices = providers.DefaultCatalog()
		o.Guardrails = []GuardrailConfig{{Name: "seer", Kind: GuardrailCustom, Mode: GuardrailPreCall, DefaultOn: true, Custom: seer},
			{Name: "strict", Kind: GuardrailBannedWords, Mode: GuardrailPreCall, Words: []string{"zzz"}, OnUnchecked: GuardrailBlock}}
	})
	body := `{"model":"openai/gpt-4o","instructions":"Be brief.","input":[
		{"role":"user","content":"Hello."},
		{"role":"user","content":[{"type":"input_text","text":"What is in these?"},
			{"type":"input_file","file_data":"` + pdfDataURL + `","filename":"q3.pdf"},
			{"type":"input_image","image_url":"data:image/png;base64,` + pngData + `"}]},
		{"type":"function_call","call_id":"call_1","name":"fetch","arguments":"{}"},
		{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":"Fetched."},
			{"type":"input_file","file_data":"` + pdfDataURL + `","filename":"q4.pdf"}]}],
		"tools":[{"type":"function","name":"fetch","parameters":{"type":"object","properties":{}}}]}`
	var rr ResponsesRequest
	if err := json.Unmarshal([]byte(body), &rr); err != nil {
		t.Fatal(err)
	}
	chat, err := rr.ToChatRequest()
	if err != nil {
		t.Fatal(err)
	}
	req, err := chat.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.Complete(context.Background(), Scope{}, req); err != nil {
		t.Fatal(err)
	}
	want := []string{"input[1].content[1]", "input[1].content[2].image_url", "input[3].output[1]"}
	if len(seer.seen) != 1 || fmt.Sprint(seer.seen[0].Unchecked) != fmt.Sprint(want) {
		t.Fatalf("guardrail told unchecked %v, want %v", seer.seen[0].Unchecked, want)
	}
	strict, err := chat.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	strict.Guardrails = []string{"strict"}
	_, err = h.g.Complete(context.Background(), Scope{}, strict)
	var ge *GuardrailError
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), want[0]+" cannot be checked") || strings.Contains(err.Error(), ".file") {
		t.Fatalf("on_unchecked block: %v, want the refusal naming %s", err, want[0])
	}
}

// TestResponsesToolOutputFileErrorField: a function_call_output's input_file a provider
// refuses is named by its place in the output (input[1].output[1].file_url), not as a part
// of the user turn the gateway made of the outputs' files (input[1].output.content[0]…).
func TestResponsesToolOutputFileErrorField(t *testing.T) {
	var r ResponsesRequest
	if err := json.Unmarshal([]byte(`{"model":"o/gpt-4o","input":[{"type":"function_call","call_id":"c1","name":"fetch","arguments":"{}"},
		{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"Fetched."},{"type":"input_file","file_url":"https://example.com/a.pdf"}]}],
		"tools":[{"type":"function","name":"fetch","parameters":{"type":"object","properties":{}}}]}`), &r); err != nil {
		t.Fatal(err)
	}
	c, err := r.ToChatRequest()
	if err != nil {
		t.Fatal(err)
	}
	req, err := c.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	o, _ := providers.New(providers.FormatOpenAI, providers.Config{Name: "o", BaseURL: "http://127.0.0.1:1", APIKey: "k"})
	h := newHarness(t, nil)
	h.g.opts.Providers = fakeRegistry{"a": h.a, "o": o}
	_, err = h.g.Complete(context.Background(), Scope{}, req)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "input[1].output[1].file_url" {
		t.Fatalf("err %v, want a ValidationError naming input[1].output[1].file_url", err)
	}
}
