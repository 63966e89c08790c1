package completions

import (
	"context"
	"slices"
)

// The fallbacks of the requests other than chat (embeddings, audio, images, rerank,
// moderation). LiteLLM's router runs those through the same fallbacks as chat
// (Router.aembedding, atranscription, aimage_generation, … call
// async_function_with_fallbacks), so a model asked that fails after its retries goes on
// to the fallbacks for it: the scope's (a virtual key's or team's router_settings
// fallbacks, looked up as chat's), else the plain Fallbacks of the model group asked (the
// server's). Each is resolved as the request's own model is — a model or group of the
// same kind — and is passed over when it is not one, when the request's tags leave none
// of its members, when the scope's budget does not allow it, when the price catalogue
// lists it as a chat model and not as one of the request's kind (a server-wide "*"
// fallback, or a key's, naming a chat model for all requests: only its provider was
// checked, and it would fail upstream), or when it cannot take the request (fits). They
// come after the models asked, each once.

// opFallbacks are the fallback targets of a request other than chat naming asked (the
// model name it resolved, its default filled in), whose own targets are have: resolved by
// targetsOf (the kind's resolution), of the catalogue's mode (providers.EmbeddingMode,
// AudioTranscription, …: a member the catalogue lists as a chat model and not of mode is
// passed over), kept when fits says they can take the request (nil: all can).
func (g *Gateway) opFallbacks(ctx context.Context, scope Scope, asked, mode string, tags []string, have []target,
	targetsOf func(string) ([]target, error), fits func(target) bool) []target {
	prices := g.routes().prices
	chatOnly, _ := prices.(interface{ ChatModelNotOf(model, mode string) bool })
	var names []string
	switch grp, isGroup := g.routes().groups[asked]; {
	case scope.Fallbacks != nil: // an empty map: none
		names = g.fallbackEntry(scope.Fallbacks, asked)
	case isGroup:
		names = grp.Fallbacks
	}
	var out []target
	for _, m := range names {
		if m == asked {
			continue
		}
		ts, err := targetsOf(m)
		if err == nil {
			ts, err = g.tagTargets(m, scope.tagAsk(tags), ts)
		}
		if err == nil && scope.Budget != nil {
			err = g.budgetAllows(scope.Budget, []string{m}, ts)
		}
		if err != nil {
			g.log.DebugContext(ctx, "completions: fallback passed over", "model", asked, "fallback", m, "err", err)
			continue
		}
		for _, t := range ts {
			named := func(o target) bool { return o.name == t.name }
			if slices.ContainsFunc(have, named) || slices.ContainsFunc(out, named) || fits != nil && !fits(t) {
				continue
			}
			if chatOnly != nil && chatOnly.ChatModelNotOf(priceNameOf(prices, t), mode) {
				g.log.DebugContext(ctx, "completions: fallback passed over: a chat model", "model", asked, "fallback", m,
					"member", t.name, "mode", mode)
				continue
			}
			if t.group == "" {
				t.group = m
			}
			out = append(out, t)
		}
	}
	return out
}

// fallingBack reports whether used, the target that answered, is none of asked (the
// request's own targets): a fallback answered.
func fallingBack(used target, asked []target) bool {
	return !slices.ContainsFunc(asked, func(t target) bool { return t.name == used.name })
}
