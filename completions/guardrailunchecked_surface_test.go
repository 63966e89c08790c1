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
