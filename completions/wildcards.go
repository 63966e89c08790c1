package completions

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/switchyard-ai/switchyard/providers"
)

// Wildcard is a model-name pattern routed to a provider, as a LiteLLM model_list entry
// whose model_name has a '*' ("*", "openai/*", "anthropic/claude-*") routes every name it
// matches: a request for a name no model group and no catalogued model answers is sent to
// Model with each '*' replaced by what the pattern's '*'s matched, in order ("*" with
// "openai/*": "my-finetune-xyz" → "openai/my-finetune-xyz").
type Wildcard struct {
	// Pattern is the name clients send, '*' matching any run of characters (LiteLLM's
	// model_name).
	Pattern string `json:"pattern"`
	// Model is the "provider/model" called, with as many '*' as it takes of Pattern's
	// matches (LiteLLM's litellm_params.model: "openai/*"); one without '*' is called as it
	// is, and one with fewer '*' than Pattern is called by the name asked.
	Model string `json:"model"`
}

// wildcardRoute is a Wildcard compiled: LiteLLM's regular expression of its pattern
// (every '*' a capturing ".*", matched from the name's start), and the models it calls.
type wildcardRoute struct {
	Wildcard
	re *regexp.Regexp
	// serves matches the models Model makes (its '*' any run of characters).
	serves *regexp.Regexp
}

// compileWildcards compiles ws in LiteLLM's order of specificity: the longest pattern
// expression first, then the one with more '*', then the configuration's order.
func compileWildcards(ws []Wildcard) ([]wildcardRoute, error) {
	out := make([]wildcardRoute, 0, len(ws))
	for i, w := range ws {
		if !strings.Contains(w.Pattern, "*") {
			return nil, fmt.Errorf("%w: wildcards[%d].pattern: %q has no '*'", ErrInvalid, i, w.Pattern)
		}
		if _, _, err := providers.ParseModel(w.Model); err != nil {
			return nil, fmt.Errorf("%w: wildcards[%d].model: %q is not of the form provider/model: %w", ErrInvalid, i, w.Model, err)
		}
		expr := "^" + strings.ReplaceAll(regexp.QuoteMeta(w.Pattern), `\*`, "(.*)")
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("%w: wildcards[%d].pattern %q: %w", ErrInvalid, i, w.Pattern, err)
		}
		serves := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(w.Model), `\*`, ".*") + "$")
		out = append(out, wildcardRoute{Wildcard: w, re: re, serves: serves})
	}
	slices.SortStableFunc(out, func(a, b wildcardRoute) int {
		if la, lb := len(a.re.String()), len(b.re.String()); la != lb {
			return lb - la
		}
		return strings.Count(b.Pattern, "*") - strings.Count(a.Pattern, "*")
	})
	return out, nil
}

// target is the model w calls for name, and whether w's pattern matches name.
func (w *wildcardRoute) target(name string) (string, bool) {
	m := w.re.FindStringSubmatch(name)
	if m == nil {
		return "", false
	}
	segments := m[1:]
	model := w.Model
	if !strings.Contains(model, "*") {
		return model, true
	}
	if len(segments) > strings.Count(model, "*") {
		return name, true // as LiteLLM: the name asked, when the model cannot take them all
	}
	for _, s := range segments {
		model = strings.Replace(model, "*", s, 1)
	}
	return model, true
}

// wildcardModel is the "provider/model" the first of the configured wildcards (in order of
// specificity) that matches name calls for it, or "".
func (g *Gateway) wildcardModel(name string) string {
	ws := g.routes().wildcards
	for i := range ws {
		if full, ok := ws[i].target(name); ok {
			if _, _, err := providers.ParseModel(full); err == nil {
				return full
			}
			return ""
		}
	}
	return ""
}

// wildcardServes reports whether model ("provider/model") is what a configured wildcard
// calls: a model of the pattern its Model makes ("openai/*" serves "openai/my-finetune").
func (g *Gateway) wildcardServes(model string) bool {
	ws := g.routes().wildcards
	for i := range ws {
		if ws[i].serves.MatchString(model) {
			return true
		}
	}
	return false
}

// Wildcards returns the wildcard routes in force (Options.Wildcards, or the last
// SetRoutes'), in the order the gateway tries them.
func (g *Gateway) Wildcards() []Wildcard {
	ws := g.routes().wildcards
	out := make([]Wildcard, len(ws))
	for i, w := range ws {
		out[i] = w.Wildcard
	}
	return out
}

// providerWildcard is what the first wildcard matching name calls when name has a '/' but
// names no known provider ("custom/gpt-4o" of a model_name "custom/*"), else "".
func (g *Gateway) providerWildcard(name string) string {
	if len(g.routes().wildcards) == 0 {
		return ""
	}
	if prov, _, err := providers.ParseModel(name); err == nil {
		if p, err := g.opts.Providers.Lookup(prov); err == nil && p != nil {
			return "" // a provider's own model: it answers for itself
		}
	}
	return g.wildcardModel(name)
}
