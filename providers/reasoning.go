package providers

import (
	"slices"
	"strings"
)

// Thinking asks a model that can reason before it answers to do so (Request.Thinking).
// Each adapter maps it to its provider's own means and leaves it out for models that
// cannot think:
//
//   - Anthropic: thinking {type: enabled, budget_tokens} for Claude 3.7 and the Claude 4
//     families (the budget from BudgetTokens, else from Effort), or {type: adaptive} with
//     output_config.effort for the models that take it (Opus and Sonnet 4.6 and later)
//     when only an Effort is given. Claude thinks only with the default temperature and
//     without top_k or a forced tool, so those are left out of a thinking request; a
//     request that forces a tool (tool_choice required or a function, or structured
//     output, which is a forced tool there) is sent without thinking, and so is one whose
//     last assistant turn called tools without the signed reasoning Claude needs back.
//   - Gemini: generationConfig.thinkingConfig with includeThoughts for the 2.5 models
//     (thinkingBudget) and Gemini 3 (thinkingLevel).
//   - OpenAI: reasoning_effort for its reasoning models (o1, o3, o4, gpt-5) when the
//     request gives no ReasoningEffort of its own; a budget is read as an effort
//     (see EffortForBudget). With Summary, OpenAI's own API is called through its
//     Responses API instead, for a summary of the reasoning (see ResponsesMode). OpenRouter: its reasoning object (effort, or max_tokens for a
//     budget). Other OpenAI-compatible servers: nothing.
type Thinking struct {
	// Effort is how hard to think: "minimal", "low", "medium", "high" or "max"; "" leaves
	// it to BudgetTokens (or "medium" when that is 0 too).
	Effort string `json:"effort,omitempty"`
	// BudgetTokens caps the tokens spent reasoning; 0 derives it from Effort
	// (see BudgetForEffort).
	BudgetTokens int `json:"budget_tokens,omitempty"`
	// Interleaved asks Claude 4 models to think between tool calls too, not only at the
	// start of a turn (Anthropic's interleaved-thinking beta, which Claude Code asks for);
	// others ignore it.
	Interleaved bool `json:"interleaved,omitempty"`
	// Summary asks to see the reasoning where a provider shows it only on request: OpenAI's
	// reasoning models then answer through its Responses API with a summary of their
	// reasoning (which OpenAI gives to verified organisations only). A request that names
	// only an effort (chat completions' reasoning_effort) asks how hard to think, not to see
	// it, and stays where it was.
	Summary bool `json:"summary,omitempty"`
}

// Budget returns the thinking budget in tokens: BudgetTokens when set, else the budget of
// Effort, clamped to [lo, hi] (hi ≤ 0: no upper bound).
func (t *Thinking) Budget(lo, hi int) int {
	b := t.BudgetTokens
	if b <= 0 {
		b = BudgetForEffort(t.Effort)
	}
	b = max(b, lo)
	if hi > 0 {
		b = min(b, hi)
	}
	return b
}

// BudgetForEffort is the thinking budget, in tokens, a request that names only an effort
// gets from providers that take a budget (Anthropic's budget_tokens, Gemini 2.5's
// thinkingBudget): minimal 512, low 1,024, medium (or "") 4,096, high 16,384, max 32,000.
func BudgetForEffort(effort string) int {
	switch strings.ToLower(effort) {
	case "minimal", "none":
		return 512
	case "low":
		return 1024
	case "high":
		return 16384
	case "max", "xhigh":
		return 32000
	}
	return 4096
}

// EffortForBudget is the effort a request that gives a thinking budget asks of providers
// that take an effort instead (OpenAI's reasoning_effort, Gemini 3's thinkingLevel):
// up to 1,024 tokens low, up to 8,192 medium, more high.
func EffortForBudget(budget int) string {
	switch {
	case budget <= 1024:
		return "low"
	case budget <= 8192:
		return "medium"
	}
	return "high"
}

// effort is the effort t asks for: Effort when set, else the effort of its budget.
func (t *Thinking) effort() string {
	if t.Effort != "" {
		return strings.ToLower(t.Effort)
	}
	if t.BudgetTokens > 0 {
		return EffortForBudget(t.BudgetTokens)
	}
	return "medium"
}

// ReasoningBlock is a piece of reasoning a model returned with its answer (Response.Reasoning),
// or one a client sends back with an assistant turn of the history (Message.Reasoning).
//
// Text is the reasoning, or its summary, as the provider shows it. Signature is Anthropic's
// proof that Text is its model's own: Claude takes earlier reasoning back only with it (and
// needs it back when it called tools with thinking on), so blocks without one are never sent
// to Claude. Redacted is reasoning Anthropic returned encrypted (a redacted_thinking block's
// data); Text is then empty. Encrypted is the reasoning of OpenAI's reasoning models as the
// Responses API returns it (a reasoning item's encrypted_content; Text is its summary):
// only that API, of the provider that returned it (EncryptedBy), takes it back, so it
// carries a tool loop's reasoning from one call to the next. Other providers take no
// reasoning back: it is left out of what they are sent.
type ReasoningBlock struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Redacted  string `json:"redacted,omitempty"`
	Encrypted string `json:"encrypted,omitempty"`
	// EncryptedBy names the provider (as registered: "openai", "azure", …) whose API
	// returned Encrypted; "" is "openai". Another organisation's key cannot decrypt it.
	EncryptedBy string `json:"encrypted_by,omitempty"`
}

// EncryptedFor reports whether b carries encrypted reasoning that provider returned.
func (b ReasoningBlock) EncryptedFor(provider string) bool {
	return b.Encrypted != "" && (b.EncryptedBy == provider || b.EncryptedBy == "" && provider == "openai")
}

// Signed reports whether Claude takes b back: it carries Claude's signature or is redacted
// reasoning.
func (b ReasoningBlock) Signed() bool { return b.Signature != "" || b.Redacted != "" }

// Opaque reports whether b carries reasoning its provider needs back as it was: Claude's
// signed or redacted blocks, OpenAI's encrypted reasoning.
func (b ReasoningBlock) Opaque() bool { return b.Signed() || b.Encrypted != "" }

// HasSigned reports whether any of rs is Signed.
func HasSigned(rs []ReasoningBlock) bool { return slices.ContainsFunc(rs, ReasoningBlock.Signed) }

// HasOpaque reports whether any of rs is Opaque.
func HasOpaque(rs []ReasoningBlock) bool { return slices.ContainsFunc(rs, ReasoningBlock.Opaque) }

// ReasoningDelta is a fragment of a streamed ReasoningBlock (Chunk.Reasoning). Index says
// which block of the answer it belongs to (0 for the first); Text is a piece of the block's
// text, while Signature, Redacted and Encrypted arrive whole, each in a fragment of its own.
// A delta that carries none of them (Started) says the model is reasoning: OpenAI's
// reasoning models show nothing while they do, for seconds or minutes, and a caller
// waiting for its first fragment should not take that silence for a dead upstream.
type ReasoningDelta struct {
	Index     int
	Text      string
	Signature string
	Redacted  string
	Encrypted string
	// EncryptedBy is the provider that returned Encrypted (ReasoningBlock.EncryptedBy).
	EncryptedBy string
}

// Started reports whether d only says the model is reasoning: it carries no text,
// signature, redacted or encrypted reasoning.
func (d *ReasoningDelta) Started() bool {
	return d.Text == "" && d.Signature == "" && d.Redacted == "" && d.Encrypted == ""
}

// reasoningBlocks numbers the reasoning blocks of a streamed answer whose provider sends
// no block index (Gemini, OpenAI-compatible servers): reasoning that comes back after the
// answer's text or calls is a block of its own, as a whole answer has it.
type reasoningBlocks struct {
	block    int
	seen     bool // some reasoning was relayed
	answered bool // text or calls came after it
}

// next is the block index of a reasoning fragment.
func (b *reasoningBlocks) next() int {
	if b.answered {
		b.block, b.answered = b.block+1, false
	}
	b.seen = true
	return b.block
}

// answer records that text or calls were relayed.
func (b *reasoningBlocks) answer() { b.answered = b.seen }
