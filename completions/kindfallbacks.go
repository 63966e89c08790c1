package completions

import (
	"context"

	"github.com/switchyard-ai/switchyard/providers"
)

// The fallbacks by kind of failure (ModelGroup.ContextWindowFallbacks and
// ContentPolicyFallbacks, LiteLLM's context_window_fallbacks and content_policy_fallbacks),
// as LiteLLM's router takes them: a request naming a group tries its members in order;
// the first member to fail with a prompt too long for it (KindContextLength) or a content
// filter's refusal (KindContentFilter), when the group has fallbacks for that kind, ends
// the members — those not yet tried are left out, as deployments of one model would only
// fail alike — and that kind's fallbacks replace the group's plain Fallbacks. A member
// that fails otherwise (a timeout, a 429, a 5xx, …) hands over to the next member as
// before. The request's own fallbacks, when it names some, go in place of the context
// window fallbacks and of the content policy ones (LiteLLM's router runs a request's list
// of models before it looks at the error's kind: validate leaves the first list empty and
// makes the second the request's own, which fall over on a refusal as those would).
// Hedged requests (FaultPolicy.HedgeAfter), whose models run side by side, keep the
// plain order.

// switchFallbacks is called when target i's attempts are over, kind being its last
// failure's: when i is a member of the named group and the group has fallbacks for kind
// (a prompt too long, a content filter's refusal), the members after i are dropped and
// those fallbacks replace the group's Fallbacks after i. The scope's context window
// fallbacks (Scope.ContextWindowFallbacks) do so in place of the group's, for a request
// naming a group or a model (its models asked are then the members), and a scope with
// context window fallbacks but none for the model asked switches to none: only the
// request's own fallbacks are left. Models already tried are not
// tried again; those that cannot take the request are recorded as skipped.
func (g *Gateway) switchFallbacks(ctx context.Context, p *plan, i int, kind providers.ErrorKind) {
	if i >= p.members || p.req == nil {
		return
	}
	var list []target
	switch {
	case kind == providers.KindContextLength && p.req.windowSwitch:
		list = p.req.windowFallbacks
	case kind == providers.KindContentFilter && p.req.group != nil && len(p.req.group.ContentPolicyFallbacks) > 0:
		list = p.req.policyFallbacks
	default:
		return // the next member, else the plain fallbacks, then the request's
	}
	tried := p.targets[:i+1]
	named := func(ts []target, name string) bool {
		for _, t := range ts {
			if t.name == name {
				return true
			}
		}
		return false
	}
	tail := make([]target, 0, len(list)+len(p.targets)-p.members)
	for _, t := range list {
		switch {
		case named(tried, t.name) || named(tail, t.name):
		case t.unfit != "":
			p.attempts = append(p.attempts, Attempt{Model: t.name, ModelGroup: t.group, Outcome: OutcomeSkipped, Kind: providers.KindBadRequest.String(),
				Error: "skipped: " + t.unfit})
		default:
			tail = append(tail, t)
		}
	}
	end := i + 1 + len(tail)
	for _, t := range p.targets[p.members:] {
		if !t.plain && !named(tail, t.name) && !named(list, t.name) { // the request's own fallback_models (not again when list skipped one)
			tail = append(tail, t)
		}
	}
	dropped := targetNames(p.targets[i+1 : p.members])
	p.targets = append(p.targets[:i+1:i+1], tail...)
	p.members = i + 1
	p.switched, p.switchedEnd = kind, end
	g.log.DebugContext(ctx, "completions: model group's fallbacks by kind of failure", "group", p.req.groupName, "kind", kind.String(),
		"members_left_out", dropped, "order", targetNames(p.targets[p.members:]))
}

// filterFallsOver reports whether a content filter's refusal of target i goes on to the
// next model rather than ending the request: when the request asks so
// (FallbackOnContentFilter), and when the named group has ContentPolicyFallbacks, for its
// members and for those fallbacks but the last one.
func (p *plan) filterFallsOver(i int) bool {
	grp := p.req.group
	switch {
	case p.req.FallbackOnContentFilter:
		return true
	case grp == nil || len(grp.ContentPolicyFallbacks) == 0:
		return false
	case i < p.members:
		return true
	}
	return p.switched == providers.KindContentFilter && i < p.switchedEnd-1
}

// countFunc counts the targets of ts for which f is true.
func countFunc(ts []target, f func(target) bool) int {
	n := 0
	for _, t := range ts {
		if f(t) {
			n++
		}
	}
	return n
}
