package providers

import (
	"strings"
	"unicode"
)

// PrefillMode is how an OpenAI-format server is asked to continue a partial assistant
// answer. OpenAI's own API has none (a trailing assistant message is read as an earlier
// turn, not continued), so the default is none.
type PrefillMode string

const (
	// PrefillNone: the server cannot continue a partial answer.
	PrefillNone PrefillMode = ""
	// PrefillTrailing: a trailing assistant message is continued as is (OpenRouter).
	PrefillTrailing PrefillMode = "trailing"
	// PrefillPrefix: the trailing assistant message carries "prefix": true (Mistral,
	// DeepSeek's beta endpoint).
	PrefillPrefix PrefillMode = "prefix"
	// PrefillContinueFinal: the body carries "continue_final_message": true and
	// "add_generation_prompt": false (vLLM).
	PrefillContinueFinal PrefillMode = "continue_final_message"
)

// valid reports whether m is one of the modes above.
func (m PrefillMode) valid() bool {
	switch m {
	case PrefillNone, PrefillTrailing, PrefillPrefix, PrefillContinueFinal:
		return true
	}
	return false
}

// prefillText is the prefix as sent: without trailing whitespace, which Anthropic refuses
// and which would make other models start the continuation with a second space.
func prefillText(prefix string) string {
	return strings.TrimRightFunc(prefix, unicode.IsSpace)
}

// errNoPrefill is the error of a prefill request to an adapter that cannot continue one.
func (e *endpoint) errNoPrefill(model string) error {
	return e.errorf(model, KindBadRequest, "%s cannot continue a partial answer (no assistant prefill)", e.cfg.Name)
}
