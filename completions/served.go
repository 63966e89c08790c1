package completions

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/switchyard-ai/switchyard/providers"
)

// servedNames is what a request may name under Options.ListConfigured besides the model
// groups, as LiteLLM's proxy takes a model_name, a deployment's litellm_params.model or a
// name a wildcard deployment matches: the groups' members, the listed models, and every
// model of a listed "provider/*".
type servedNames struct {
	models    map[string]bool // the groups' members and the listed "provider/model"
	providers map[string]bool // the providers of the listed "provider/*"
}

// newServedNames indexes the members of groups and the names of listed (Routes.Listed).
func newServedNames(groups map[string]ModelGroup, listed []string) servedNames {
	s := servedNames{models: map[string]bool{}, providers: map[string]bool{}}
	for _, grp := range groups {
		for _, m := range grp.Models {
			s.models[m] = true
		}
	}
	for _, m := range listed {
		if prov, ok := strings.CutSuffix(m, "/*"); ok {
			s.providers[prov] = true
			continue
		}
		s.models[m] = true
	}
	return s
}

// NamedDeployment is one deployment a name of Options.DeploymentNames stands for.
type NamedDeployment struct {
	// ModelName is the model group (a LiteLLM config's model_name) it is a member of: its
	// id (DeploymentIDOf) and its attempts' ModelGroup are those it has there.
	ModelName string
	// Member is the "provider/model" it calls.
	Member string
}

// checkDeploymentNames checks Routes.DeploymentNames: each name stands for 1 to MaxModels
// deployments, each calling a "provider/model".
func checkDeploymentNames(named map[string][]NamedDeployment) error {
	for name, ds := range named {
		if len(ds) == 0 || len(ds) > MaxModels {
			return fmt.Errorf("%w: deployment name %q: 1 to %d deployments, got %d", ErrInvalid, name, MaxModels, len(ds))
		}
		for _, d := range ds {
			if _, _, err := providers.ParseModel(d.Member); err != nil {
				return fmt.Errorf("%w: deployment name %q: %q is not of the form provider/model", ErrInvalid, name, d.Member)
			}
		}
	}
	return nil
}

// deploymentsNamed returns the deployments asked stands for as a deployment's own name
// (Options.DeploymentNames), nil when it is none or is routed otherwise: a model group, or
// a name a wildcard or a listed "provider/*" matches that is not their ModelName (LiteLLM's
// proxy tries its model_names, then its wildcards, then its deployments' models).
func (rt *routeTable) deploymentsNamed(asked string) []NamedDeployment {
	ds := rt.named[asked]
	if len(ds) == 0 {
		return nil
	}
	if _, ok := rt.groups[asked]; ok {
		return nil
	}
	if slices.ContainsFunc(ds, func(d NamedDeployment) bool { return d.ModelName == asked }) {
		return ds // a model_name: ahead of the wildcards
	}
	if prov, _, err := providers.ParseModel(asked); err == nil && rt.served.providers[prov] {
		return nil
	}
	for i := range rt.wildcards {
		if rt.wildcards[i].re.MatchString(asked) {
			return nil
		}
	}
	return ds
}

// namedMembers returns the members of the deployments asked stands for as a deployment's
// own name (routeTable.deploymentsNamed), nil when none.
func (rt *routeTable) namedMembers(asked string) []string {
	ds := rt.deploymentsNamed(asked)
	if ds == nil {
		return nil
	}
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Member
	}
	return out
}

// notServedMessage is LiteLLM's proxy's refusal of a model its model_list does not hold,
// without the route it prefixes ("/chat/completions: "), which the server adds.
const notServedMessage = "Invalid model name passed in model=%s. Call `/v1/models` to view available models for your key."

// notServed is the refusal of a request naming model, which the configuration does not
// serve, in field.
func notServed(field, model string) *ValidationError {
	ve := invalid(field, notServedMessage, model)
	ve.Err = ErrModelNotServed
	return ve
}

// servesAsked reports whether a request naming asked, which stands for full (its
// "provider/model" once resolved; "" when none), is served: always without
// Options.ListConfigured; with it, when asked is a model group or a deployment's own name
// (Options.DeploymentNames), asked or full a group's member or a listed model, full's
// provider listed as "provider/*", or asked matched by a wildcard (a LiteLLM config's
// model_name "*", "anthropic/claude-*").
func (g *Gateway) servesAsked(asked, full string) bool {
	if !g.opts.ListConfigured {
		return true
	}
	rt := g.routes()
	if _, ok := rt.groups[asked]; ok {
		return true
	}
	if rt.served.models[asked] || full != "" && rt.served.models[full] || len(rt.named[asked]) > 0 {
		return true
	}
	name := full
	if name == "" {
		name = asked
	}
	if prov, _, err := providers.ParseModel(name); err == nil && rt.served.providers[prov] {
		return true
	}
	for i := range rt.wildcards {
		if rt.wildcards[i].re.MatchString(asked) {
			return true
		}
	}
	return g.ownModel(asked)
}

// ownModel reports whether name is a model the gateway's own options call: a moderation
// guardrail's model (DefaultModerationModel when it names none) or the semantic cache's
// embedding model. The operator named those, as LiteLLM's guardrails and cache call their
// models whatever the model_list holds, so a LiteLLM config need not list them.
func (g *Gateway) ownModel(name string) bool {
	if sc := g.opts.Cache.Semantic; sc != nil && sc.Model == name {
		return true
	}
	for _, c := range g.opts.Guardrails {
		if c.Kind == GuardrailModeration && cmp.Or(c.Model, DefaultModerationModel) == name {
			return true
		}
	}
	return false
}

// servesChat reports whether a chat request (the OpenAI-compatible and Messages surfaces)
// naming asked is served (servesAsked), its bare name or provider wildcard's name resolved
// as resolve does. A bare name several providers serve, one of them served, is left to
// resolve, which asks for one of them.
func (g *Gateway) servesChat(asked string) bool {
	if !g.opts.ListConfigured || g.IsModelGroup(asked) {
		return true
	}
	full := asked
	if !strings.Contains(asked, "/") {
		var choices []string
		full, choices = g.bareModel(asked)
		for _, c := range choices {
			if g.servesAsked(asked, c) {
				return true
			}
		}
	} else if pw := g.providerWildcard(asked); pw != "" {
		full = pw
	}
	return g.servesAsked(asked, full)
}

// checkServed refuses (ErrModelNotServed) the first model of req's Models,
// FallbackModels and ContextWindowFallbacks entry for the model asked the configuration
// does not serve (servesChat), under
// Options.ListConfigured: what GET /v1/models lists is what a request may name.
func (g *Gateway) checkServed(req *Request) error {
	if !g.opts.ListConfigured {
		return nil
	}
	for i, m := range req.Models {
		if !g.servesChat(m) {
			field := fmt.Sprintf("models[%d]", i)
			if req.ephemeral && i == 0 {
				field = "model" // the OpenAI-compatible request's name for it
			}
			return notServed(field, m)
		}
	}
	for i, m := range req.FallbackModels {
		if !g.servesChat(m) {
			return notServed(fmt.Sprintf("fallback_models[%d]", i), m)
		}
	}
	if req.ContextWindowFallbacks != nil && len(req.Models) > 0 {
		// The request's own entry for the model asked, as its fallback_models.
		key, list := g.fallbackEntryKey(req.ContextWindowFallbacks, req.Models[0])
		for i, m := range list {
			if !g.servesChat(m) {
				return notServed(fmt.Sprintf("%s[%d]", req.windowEntryField(key), i), m)
			}
		}
	}
	return nil
}

// Serves reports whether a request may name name: always without
// Options.ListConfigured; with it, when name is what the configuration serves, as a chat,
// embedding, audio, rerank, image, moderation or realtime model — a model group, a group's member, a
// listed model, a model of a listed "provider/*" or a name a wildcard matches, a bare name
// by the "provider/model" it stands for. What a virtual key may name is checked by it.
func (g *Gateway) Serves(name string) bool {
	if !g.opts.ListConfigured || g.servesChat(name) {
		return true
	}
	if strings.Contains(name, "/") {
		return false // servesChat judged it as it is
	}
	for _, kind := range []func(field, name string) (string, error){g.embeddingModel, g.audioModel, g.rerankModel, g.imageModel, g.moderationModel, g.realtimeModel} {
		if full, err := kind("model", name); err == nil && g.servesAsked(name, full) {
			return true
		}
	}
	return false
}
