package completions

import (
	"fmt"
	"slices"
	"strings"

	"github.com/switchyard-ai/switchyard/providers"
)

// OpenAIThinking is the thinking object a chat completions request may carry (LiteLLM's
// extension, in Anthropic's shape): {"type": "enabled", "budget_tokens": N} asks for
// reasoning with a budget, {"type": "adaptive"} for reasoning at the request's
// reasoning_effort (medium when it gives none), {"type": "disabled"} for none.
type OpenAIThinking struct {
	Type         string `json:"type" jsonschema:"required,enum=enabled,enum=adaptive,enum=disabled"`
	BudgetTokens int    `json:"budget_tokens,omitempty" jsonschema:"minimum=1"`
	// interleaved: the Messages request asked for interleaved thinking (its anthropic-beta
	// header; see providers.Thinking.Interleaved).
	interleaved bool
}

// OpenAIThinkingBlock is a reasoning block of an assistant message as LiteLLM writes it:
// {"type": "thinking", "thinking": text, "signature": sig} or
// {"type": "redacted_thinking", "data": encrypted}. Clients send the blocks of earlier
// answers back with them so that Claude can continue its own reasoning.
type OpenAIThinkingBlock struct {
	Type      string `json:"type" jsonschema:"required,enum=thinking,enum=redacted_thinking"`
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

// efforts are the reasoning efforts a request may name: OpenAI's (none to xhigh) and
// Anthropic's max.
var efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}

// checkEffort refuses an effort no provider knows (a typo would otherwise ask for the
// default silently), naming field.
func checkEffort(field, effort string) error {
	if effort == "" || slices.Contains(efforts, strings.ToLower(strings.TrimSpace(effort))) {
		return nil
	}
	return invalid(field, "must be one of %s, got %q", strings.Join(efforts, ", "), effort)
}

// thinkingFor is the providers.Thinking of a request's thinking object and reasoning
// effort: nil when neither asks for reasoning. field names the thinking object in errors.
func thinkingFor(field string, t *OpenAIThinking, effort string) (*providers.Thinking, error) {
	effort = strings.ToLower(strings.TrimSpace(effort))
	if t == nil {
		if effort == "" || effort == "none" {
			return nil, nil
		}
		return &providers.Thinking{Effort: effort}, nil
	}
	switch t.Type {
	case "disabled":
		if t.BudgetTokens != 0 {
			return nil, invalid(field+".budget_tokens", "must be absent when thinking is disabled")
		}
		return nil, nil
	case "enabled":
		if t.BudgetTokens <= 0 {
			return nil, invalid(field+".budget_tokens", "is required when thinking is enabled (a number of tokens, at least 1024 for Claude)")
		}
		return &providers.Thinking{BudgetTokens: t.BudgetTokens, Effort: effort, Interleaved: t.interleaved}, nil
	case "adaptive":
		if t.BudgetTokens != 0 {
			return nil, invalid(field+".budget_tokens", "must be absent when thinking is adaptive (the effort sets how much it thinks)")
		}
		if effort == "none" {
			effort = ""
		}
		return &providers.Thinking{Effort: effort, Interleaved: t.interleaved}, nil
	case "":
		return nil, invalid(field+".type", "is required: enabled, adaptive or disabled")
	}
	return nil, invalid(field+".type", "must be enabled, adaptive or disabled, got %q", t.Type)
}

// reasoningFromBlocks reads the thinking blocks of message i (field names them in errors).
func reasoningFromBlocks(field string, blocks []OpenAIThinkingBlock) ([]providers.ReasoningBlock, error) {
	if len(blocks) == 0 {
		return nil, nil
	}
	out := make([]providers.ReasoningBlock, 0, len(blocks))
	for j, b := range blocks {
		switch b.Type {
		case "thinking":
			out = append(out, blockFromSignature(b.Thinking, b.Signature))
		case "redacted_thinking":
			if b.Data == "" {
				return nil, invalid(fmt.Sprintf("%s[%d].data", field, j), "is required in a redacted_thinking block")
			}
			out = append(out, providers.ReasoningBlock{Redacted: b.Data})
		default:
			return nil, invalid(fmt.Sprintf("%s[%d].type", field, j), "must be thinking or redacted_thinking, got %q", b.Type)
		}
	}
	return out, nil
}

// reasoningText joins the text of blocks (blank line between blocks).
func reasoningText(blocks []providers.ReasoningBlock) string {
	var b strings.Builder
	for _, r := range blocks {
		if r.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(r.Text)
	}
	return b.String()
}

// openAIThinkingBlocks renders blocks as LiteLLM's thinking_blocks; nil when none carries
// what a client must send back (a signature or redacted data: reasoning without them is
// only to be read, and reasoning_content has it).
func openAIThinkingBlocks(blocks []providers.ReasoningBlock) []OpenAIThinkingBlock {
	if !providers.HasOpaque(blocks) {
		return nil
	}
	out := make([]OpenAIThinkingBlock, 0, len(blocks))
	for _, r := range blocks {
		out = append(out, openAIThinkingBlock(r.Text, surfaceSignature(r.Signature, r.Encrypted, r.EncryptedBy), r.Redacted))
	}
	return out
}

// encryptedSignature marks OpenAI's encrypted reasoning (providers.ReasoningBlock.Encrypted)
// where a surface carries reasoning back only in a thinking block's signature (chat
// completions' thinking_blocks, /v1/messages): Claude's signatures are base64, so no
// signature of Claude's starts with it, and such a block is never sent to Claude.
const encryptedSignature = "openai-encrypted:"

// encryptedBySignature marks the encrypted reasoning of an OpenAI-format provider other
// than "openai" ("openai-encrypted@azure:<data>"): it goes back only to that provider,
// whose key alone decrypts it. Provider names have no ':'.
const encryptedBySignature = "openai-encrypted@"

// surfaceSignature is the signature a thinking block shows for a block with Claude's
// signature or encrypted reasoning (by the provider that returned it).
func surfaceSignature(signature, encrypted, by string) string {
	switch {
	case encrypted == "":
		return signature
	case by == "" || by == "openai":
		return encryptedSignature + encrypted
	}
	return encryptedBySignature + by + ":" + encrypted
}

// blockFromSignature reads a thinking block sent back: encrypted reasoning (and its
// provider) when its signature is marked so, else Claude's.
func blockFromSignature(text, signature string) providers.ReasoningBlock {
	if enc, ok := strings.CutPrefix(signature, encryptedSignature); ok && enc != "" {
		return providers.ReasoningBlock{Text: text, Encrypted: enc}
	}
	if rest, ok := strings.CutPrefix(signature, encryptedBySignature); ok {
		if by, enc, ok := strings.Cut(rest, ":"); ok && by != "" && enc != "" {
			return providers.ReasoningBlock{Text: text, Encrypted: enc, EncryptedBy: by}
		}
	}
	return providers.ReasoningBlock{Text: text, Signature: signature}
}

func openAIThinkingBlock(text, signature, redacted string) OpenAIThinkingBlock {
	if redacted != "" {
		return OpenAIThinkingBlock{Type: "redacted_thinking", Data: redacted}
	}
	return OpenAIThinkingBlock{Type: "thinking", Thinking: text, Signature: signature}
}

// Prefixes of a Responses reasoning item's encrypted_content: the gateway's own wrapping of
// Claude's signature or redacted data, so that only what it returned goes back to Claude
// (encrypted reasoning from OpenAI's own API would be refused there). OpenAI's encrypted
// reasoning is shown as it is, as OpenAI's API shows it.
const (
	encryptedThinking = "claude-thinking:"
	encryptedRedacted = "claude-redacted:"
)

// reasoningItem is reasoning block k of the answer msgID as a Responses reasoning item.
func reasoningItem(msgID string, k int, r providers.ReasoningBlock) ResponseOutputItem {
	item := ResponseOutputItem{ID: fmt.Sprintf("rs_%s_%d", msgID, k), Type: "reasoning", Status: "completed", Summary: []ResponseSummaryPart{}}
	item.EncryptedContent = encryptedContent(r.Signature, r.Redacted, r.Encrypted, r.EncryptedBy)
	if r.Text != "" {
		item.Summary = []ResponseSummaryPart{{Type: "summary_text", Text: r.Text}}
	}
	return item
}

// encryptedContent is a reasoning item's encrypted_content for a block with Claude's
// signature or redacted data (prefixed), OpenAI's encrypted reasoning (as it is), or
// another OpenAI-format provider's (marked with its name, see encryptedBySignature).
func encryptedContent(signature, redacted, encrypted, by string) string {
	switch {
	case redacted != "":
		return encryptedRedacted + redacted
	case signature != "":
		return encryptedThinking + signature
	case encrypted == "" || by == "" || by == "openai":
		return encrypted
	}
	return surfaceSignature("", encrypted, by)
}

// reasoningFromItem reads back a reasoning item of a request's input: the block the
// gateway returned as it (Claude's, prefixed; OpenAI's encrypted reasoning, as it is), or
// false for reasoning it cannot pass on (a summary alone, which no provider takes back).
func reasoningFromItem(it ResponsesItem) (OpenAIThinkingBlock, bool) {
	if data, ok := strings.CutPrefix(it.EncryptedContent, encryptedRedacted); ok && data != "" {
		return OpenAIThinkingBlock{Type: "redacted_thinking", Data: data}, true
	}
	sig, ok := strings.CutPrefix(it.EncryptedContent, encryptedThinking)
	switch {
	case ok:
	case strings.HasPrefix(it.EncryptedContent, encryptedBySignature):
		sig = it.EncryptedContent // another OpenAI-format provider's, marked so already
	default:
		sig = surfaceSignature("", it.EncryptedContent, "") // OpenAI's own, for its Responses API
	}
	if sig == "" {
		return OpenAIThinkingBlock{}, false
	}
	var text strings.Builder
	for _, p := range it.Summary {
		text.WriteString(p.Text)
	}
	return OpenAIThinkingBlock{Type: "thinking", Thinking: text.String(), Signature: sig}, true
}
