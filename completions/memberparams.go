package completions

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/switchyard-ai/switchyard/providers"
)

// MemberParams are one model group member's (a deployment's) default request parameters,
// as LiteLLM's deployment litellm_params temperature, max_tokens and the like: each is
// sent to the member when the request leaves it unset, the request's own value winning
// (LiteLLM merges the request's parameters over the deployment's). They hold wherever the
// member is called: through its group, as a fallback, or by its own name. The zero value
// sets nothing.
type MemberParams struct {
	// Temperature, 0 to 2.
	Temperature *float64 `json:"temperature,omitempty" jsonschema:"description=Sent when a request sets none (0 to 2)"`
	// TopP, 0 to 1.
	TopP *float64 `json:"top_p,omitempty" jsonschema:"description=Sent when a request sets none (0 to 1)"`
	// MaxTokens bounds the answer (LiteLLM's max_tokens or max_completion_tokens); 0: none.
	MaxTokens int `json:"max_tokens,omitempty" jsonschema:"description=Bound on the answer sent when a request sets none"`
	// Stop sequences, at most 4.
	Stop []string `json:"stop,omitempty" jsonschema:"description=Stop sequences sent when a request sets none (at most 4)"`
	// Seed for sampling, where the provider takes one.
	Seed *int64 `json:"seed,omitempty" jsonschema:"description=Sent when a request sets none where the provider takes one"`
	// FrequencyPenalty and PresencePenalty, -2 to 2, where the provider takes them.
	FrequencyPenalty *float64 `json:"frequency_penalty,omitempty" jsonschema:"description=Sent when a request sets none (-2 to 2)"`
	PresencePenalty  *float64 `json:"presence_penalty,omitempty" jsonschema:"description=Sent when a request sets none (-2 to 2)"`
	// ReasoningEffort of a reasoning model: none, minimal, low, medium or high.
	ReasoningEffort string `json:"reasoning_effort,omitempty" jsonschema:"description=Sent when a request sets none (none or minimal or low or medium or high)"`
}

// IsZero reports whether p sets nothing.
func (p MemberParams) IsZero() bool { return !p.set() }

// set reports whether p sets anything.
func (p MemberParams) set() bool {
	return p.Temperature != nil || p.TopP != nil || p.MaxTokens != 0 || len(p.Stop) > 0 || p.Seed != nil ||
		p.FrequencyPenalty != nil || p.PresencePenalty != nil || p.ReasoningEffort != ""
}

// Equal reports whether p and o set the same parameters to the same values.
func (p MemberParams) Equal(o MemberParams) bool {
	eq := func(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
	return eq(p.Temperature, o.Temperature) && eq(p.TopP, o.TopP) && p.MaxTokens == o.MaxTokens &&
		slices.Equal(p.Stop, o.Stop) && (p.Seed == nil && o.Seed == nil || p.Seed != nil && o.Seed != nil && *p.Seed == *o.Seed) &&
		eq(p.FrequencyPenalty, o.FrequencyPenalty) && eq(p.PresencePenalty, o.PresencePenalty) && p.ReasoningEffort == o.ReasoningEffort
}

// Check validates p; field names it in the *ValidationError ("model_list[0].litellm_params",
// "params[1]").
func (p MemberParams) Check(field string) error {
	inRange := func(name string, v *float64, lo, hi float64) error {
		if v != nil && (math.IsNaN(*v) || *v < lo || *v > hi) {
			return invalid(field+"."+name, "must be %g to %g, got %g", lo, hi, *v)
		}
		return nil
	}
	for _, err := range []error{
		inRange("temperature", p.Temperature, 0, 2),
		inRange("top_p", p.TopP, 0, 1),
		inRange("frequency_penalty", p.FrequencyPenalty, -2, 2),
		inRange("presence_penalty", p.PresencePenalty, -2, 2),
	} {
		if err != nil {
			return err
		}
	}
	if p.MaxTokens < 0 {
		return invalid(field+".max_tokens", "must be at least 1, got %d", p.MaxTokens)
	}
	if len(p.Stop) > 4 {
		return invalid(field+".stop", "at most 4 sequences, got %d", len(p.Stop))
	}
	for i, s := range p.Stop {
		if s == "" {
			return invalid(fmt.Sprintf("%s.stop[%d]", field, i), "must not be empty")
		}
	}
	switch p.ReasoningEffort {
	case "", "none", "minimal", "low", "medium", "high":
	default:
		return invalid(field+".reasoning_effort", `must be "none", "minimal", "low", "medium" or "high", got %q`, p.ReasoningEffort)
	}
	return nil
}

// apply sets on r the parameters p sets and r leaves unset.
func (p *MemberParams) apply(r *providers.Request) {
	if r.Temperature == nil {
		r.Temperature = p.Temperature
	}
	if r.TopP == nil {
		r.TopP = p.TopP
	}
	if r.MaxTokens == 0 {
		r.MaxTokens = p.MaxTokens
	}
	if len(r.Stop) == 0 {
		r.Stop = p.Stop
	}
	if r.Seed == nil {
		r.Seed = p.Seed
	}
	if r.FrequencyPenalty == nil {
		r.FrequencyPenalty = p.FrequencyPenalty
	}
	if r.PresencePenalty == nil {
		r.PresencePenalty = p.PresencePenalty
	}
	if r.ReasoningEffort == "" {
		r.ReasoningEffort = p.ReasoningEffort
	}
}

// checkParams validates the Params of the group name; errors wrap ErrInvalid and name the
// group and the member.
func checkParams(name string, g ModelGroup) error {
	if len(g.Params) == 0 {
		return nil
	}
	if len(g.Params) != len(g.Models) {
		return fmt.Errorf("%w: model group %q: params: one per model, got %d for %d models", ErrInvalid, name, len(g.Params), len(g.Models))
	}
	for i, p := range g.Params {
		if err := p.Check(fmt.Sprintf("params[%d]", i)); err != nil {
			return fmt.Errorf("model group %q (%s): %w", name, g.Models[i], err)
		}
	}
	return nil
}

// memberParamsOf gathers the default parameters the groups give their members, by model:
// a model's parameters hold wherever it is called, so two groups giving one model
// different ones are refused, naming both (ErrInvalid). Nil when no group sets any.
func memberParamsOf(groups map[string]ModelGroup) (map[string]MemberParams, error) {
	var out map[string]MemberParams
	from := map[string]string{}
	names := make([]string, 0, len(groups))
	for n, g := range groups {
		if len(g.Params) > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		g := groups[name]
		for i, p := range g.Params {
			if !p.set() {
				continue
			}
			m := g.Models[i]
			if prev, ok := out[m]; ok && !prev.Equal(p) {
				return nil, fmt.Errorf("%w: model group %q: params[%d] of %s differ from those model group %q gives it (a model's parameters hold wherever it is called)",
					ErrInvalid, name, i, m, from[m])
			}
			if out == nil {
				out = map[string]MemberParams{}
			}
			out[m], from[m] = p, name
		}
	}
	return out, nil
}
