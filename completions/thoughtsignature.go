package completions

import (
	"encoding/base64"
	"strings"

	"github.com/switchyard-ai/switchyard/providers"
)

// Gemini's thought signatures (providers.ToolCall.ThoughtSignature) travel on the chat
// surface as a tool call's extra_content.google.thought_signature, and on the native Gemini
// surface as the functionCall part's thoughtSignature. The Responses API and Anthropic's
// Messages API have no field for them on a call, so there they travel where clients keep
// opaque reasoning and send it back unchanged: a reasoning item's encrypted_content
// (openai-go and Codex CLI both return reasoning items as they got them; neither keeps an
// unknown field of a function_call item), and a thinking block's signature placed just
// before the tool_use block (Claude Code and Anthropic's SDKs send thinking blocks back with
// their signatures). The token names the call it belongs to, so it finds its call wherever
// the client puts it, and its prefix keeps it apart from Claude's signatures and OpenAI's
// encrypted reasoning: it is never sent to Claude or OpenAI, and their opaque reasoning is
// never sent to Gemini as a signature.

// thoughtSignaturePrefix starts a thought-signature token. Claude's signatures are base64
// and OpenAI's encrypted reasoning has none of ':' either, so neither can start with it.
const thoughtSignaturePrefix = "gemini-thought-signature:"

// thoughtSignatureToken is the token carrying call callID's Gemini thought signature sig:
// the prefix, the call id in unpadded base64url, a '.', then sig unchanged.
func thoughtSignatureToken(callID, sig string) string {
	return thoughtSignaturePrefix + base64.RawURLEncoding.EncodeToString([]byte(callID)) + "." + sig
}

// parseThoughtSignatureToken reads a token of thoughtSignatureToken: the call id and the
// signature; false when s is no such token.
func parseThoughtSignatureToken(s string) (callID, sig string, ok bool) {
	rest, ok := strings.CutPrefix(s, thoughtSignaturePrefix)
	if !ok {
		return "", "", false
	}
	enc, sig, ok := strings.Cut(rest, ".")
	if !ok || sig == "" {
		return "", "", false
	}
	id, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(id) == 0 {
		return "", "", false
	}
	return string(id), sig, true
}

// attachThoughtSignatures sets the Gemini thought signature of each tool call of msgs that
// sigs (call id → signature) holds and that carries none of its own.
func attachThoughtSignatures(msgs []OpenAIMessage, sigs map[string]string) {
	if len(sigs) == 0 {
		return
	}
	for i := range msgs {
		for j := range msgs[i].ToolCalls {
			c := &msgs[i].ToolCalls[j]
			if sig := sigs[c.ID]; sig != "" && c.thoughtSignature() == "" {
				c.ExtraContent = googleExtra(sig)
			}
		}
	}
}

// thoughtSignatureItem is the reasoning item carrying the thought signature of call k of
// answer msgID, output just before the call's function_call item.
func thoughtSignatureItem(msgID string, k int, c providers.ToolCall) ResponseOutputItem {
	return ResponseOutputItem{ID: "rs_" + callItemID(msgID, k) + "_sig", Type: "reasoning", Status: "completed", Summary: []ResponseSummaryPart{},
		EncryptedContent: thoughtSignatureToken(c.ID, c.ThoughtSignature)}
}
