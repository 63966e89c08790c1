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
	// after Model's own, after FallbackModels; or its router's format, [{"gpt-4o-mini":
	// ["gpt-4o"]}], whose entry for Model is taken. LiteLLM's per-fallback objects
	// ({"model", "messages"}), which would change what is sent, are refused naming the item.
	Fallbacks json.RawMessage `json:"fallbacks,omitempty" jsonschema:"-"`
	// ContextWindowFallbacks is LiteLLM's request context_window_fallbacks, written as its
	// router's: [{"gpt-4o-mini": ["gpt-4o"]}] (Request.ContextWindowFallbacks).
	ContextWindowFallbacks json.RawMessage `json:"context_window_fallbacks,omitempty" jsonschema:"type=array,description=LiteLLM's context_window_fallbacks for this request: [{gpt-4o-mini: [gpt-4o]}]: when the model asked fails with a prompt too long the entry for it (by name\\, else without its provider\\, else *) is tried in place of the plain fallbacks (fallbacks the request names go in its place); they replace the key's and the model group's; with no entry for it ([] included) the prompt too long's error stands"`
}

// maxWindowFallbackModels bounds the models a request's context_window_fallbacks name
// entries for, as a key's router_settings are bounded.
const maxWindowFallbackModels = 100

// requestWindowFallbacks reads a request's context_window_fallbacks (LiteLLM's list of
// {model: [fallbacks]} objects) into one list per model, the first entry of a model
// listed twice winning as LiteLLM's lookup finds it: nil when absent or null, an empty
// map for [] (which asks for none); at is the index in the list of each model's entry,
// for errors naming it as parsing does. Errors are *ValidationError naming the field.
func requestWindowFallbacks(raw json.RawMessage) (fallbacks map[string][]string, at map[string]int, err error) {
	const field = "context_window_fallbacks"
	if !present(raw) {
		return nil, nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, nil, invalid(field, `must be a list of objects each naming a model and its fallbacks: [{"gpt-4o-mini": ["gpt-4o"]}]`)
	}
	out, at := map[string][]string{}, map[string]int{}
	for i, it := range items {
		var entry map[string]json.RawMessage
		if err := json.Unmarshal(it, &entry); err != nil || entry == nil {
			return nil, nil, invalid(fmt.Sprintf("%s[%d]", field, i), `must be an object naming a model and its fallbacks: {"gpt-4o-mini": ["gpt-4o"]}`)
		}
		for _, m := range slices.Sorted(maps.Keys(entry)) {
			name := windowEntryField(m, i)
			if strings.TrimSpace(m) == "" {
				return nil, nil, invalid(fmt.Sprintf("%s[%d]", field, i), "a model must not be empty")
			}
			var list []string
			if err := json.Unmarshal(entry[m], &list); err != nil {
				return nil, nil, invalid(name, "must be a list of model names")
			}
			if len(list) > MaxModels {
				return nil, nil, invalid(name, "at most %d fallbacks, got %d", MaxModels, len(list))
			}
			for j, f := range list {
				if strings.TrimSpace(f) == "" {
					return nil, nil, invalid(fmt.Sprintf("%s[%d]", name, j), "must not be empty")
				}
			}
			if _, seen := out[m]; !seen {
				out[m], at[m] = slices.Clip(list), i
			}
		}
	}
	if len(out) > maxWindowFallbackModels {
		return nil, nil, invalid(field, "at most %d models, got %d", maxWindowFallbackModels, len(out))
	}
	return out, at, nil
}

// windowEntryField names the request's context_window_fallbacks entry for model, at index
// i of the list as sent (context_window_fallbacks[0]["gpt-4o-mini"]), or by model alone
// (i < 0: a library caller's map, which has no list).
func windowEntryField(model string, i int) string {
	if i < 0 {
		return fmt.Sprintf("context_window_fallbacks[%q]", model)
	}
	return fmt.Sprintf("context_window_fallbacks[%d][%q]", i, model)
}

// windowEntryField names the request's own context_window_fallbacks entry for model, as
// parsing named it.
func (r *Request) windowEntryField(model string) string {
	i, ok := r.windowEntryAt[model]
	if !ok {
		i = -1
	}
	return windowEntryField(model, i)
}
