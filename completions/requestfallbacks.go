package completions

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// LiteLLMFallbacks are LiteLLM's request-body fallbacks, read by the OpenAI-compatible
// surfaces (chat completions, legacy completions, Responses).
type LiteLLMFallbacks struct {
	// Fallbacks is LiteLLM's client-side fallbacks: model names (or groups) tried in order
	// after Model's own, after FallbackModels. LiteLLM's per-fallback objects ({"model",
	// "messages"}), which would change what is sent, are refused naming the item.
	Fallbacks json.RawMessage `json:"fallbacks,omitempty" jsonschema:"-"`
	// ContextWindowFallbacks is LiteLLM's request context_window_fallbacks, written as its
	// router's: [{"gpt-4o-mini": ["gpt-4o"]}] (Request.ContextWindowFallbacks).
	ContextWindowFallbacks json.RawMessage `json:"context_window_fallbacks,omitempty" jsonschema:"type=array,description=LiteLLM's context_window_fallbacks for this request: [{gpt-4o-mini: [gpt-4o]}]: when the model asked fails with a prompt too long the entry for it (by name\\, else without its provider\\, else *) is tried in place of the plain fallbacks; they replace the key's and the model group's; with no entry for it ([] included) the prompt too long's error stands"`
}

// maxWindowFallbackModels bounds the models a request's context_window_fallbacks name
// entries for, as a key's router_settings are bounded.
const maxWindowFallbackModels = 100

// requestWindowFallbacks reads a request's context_window_fallbacks (LiteLLM's list of
// {model: [fallbacks]} objects) into one list per model, the first entry of a model
// listed twice winning as LiteLLM's lookup finds it: nil when absent or null, an empty
// map for [] (which asks for none). Errors are *ValidationError naming the field.
func requestWindowFallbacks(raw json.RawMessage) (map[string][]string, error) {
	const field = "context_window_fallbacks"
	if !present(raw) {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, invalid(field, `must be a list of objects each naming a model and its fallbacks: [{"gpt-4o-mini": ["gpt-4o"]}]`)
	}
	out := map[string][]string{}
	for i, it := range items {
		var entry map[string]json.RawMessage
		if err := json.Unmarshal(it, &entry); err != nil || entry == nil {
			return nil, invalid(fmt.Sprintf("%s[%d]", field, i), `must be an object naming a model and its fallbacks: {"gpt-4o-mini": ["gpt-4o"]}`)
		}
		for _, m := range slices.Sorted(maps.Keys(entry)) {
			at := fmt.Sprintf("%s[%d][%q]", field, i, m)
			if strings.TrimSpace(m) == "" {
				return nil, invalid(fmt.Sprintf("%s[%d]", field, i), "a model must not be empty")
			}
			var list []string
			if err := json.Unmarshal(entry[m], &list); err != nil {
				return nil, invalid(at, "must be a list of model names")
			}
			if len(list) > MaxModels {
				return nil, invalid(at, "at most %d fallbacks, got %d", MaxModels, len(list))
			}
			for j, f := range list {
				if strings.TrimSpace(f) == "" {
					return nil, invalid(fmt.Sprintf("%s[%d]", at, j), "must not be empty")
				}
			}
			if _, seen := out[m]; !seen {
				out[m] = slices.Clip(list)
			}
		}
	}
	if len(out) > maxWindowFallbackModels {
		return nil, invalid(field, "at most %d models, got %d", maxWindowFallbackModels, len(out))
	}
	return out, nil
}
