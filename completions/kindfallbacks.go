package completions

import (
	"context"

	"github.com/switchyard-ai/switchyard/providers"
)

// The fallbacks by kind of failure (ModelGroup.ContextWindowFallbacks and
// ContentPolicyFallbacks, LiteLLM's context_window_fallbacks and content_policy_fallbacks):
// a request naming a group tries its members as usual; once they are done, when the
// failures of the members called are of one such kind, that kind's fallbacks replace the
// group's plain Fallbacks among the models still to try. The request's own fallback_models
// stay after them. Hedged requests (FaultPolicy.HedgeAfter), whose models run side by
// side, keep the plain order.

// switchFallbacks is called when the last of the named group's members is done (its
// attempts failed or it was skipped): when every member called failed for the same
// reason, a prompt too long for it (KindContextLength) or a content filter's refusal
// (KindContentFilter) — or was unavailable meanwhile (a timeout, a 429, a 5xx: no verdict on
// the request) — and the group has fallbacks for that kind, those replace the group's
// Fallbacks after the members. Models already tried are not tried again; those that cannot
// take the request are recorded as skipped.
func (g *Gateway) switchFallbacks(ctx context.Context, p *plan) {
	kind := p.membersFailedAs()
	var list []target
	switch {
	case p.req.group == nil:
		return
	case kind == providers.KindContextLength && len(p.req.group.ContextWindowFallbacks) > 0:
		list = p.req.windowFallbacks
	case kind == providers.KindContentFilter && len(p.req.group.ContentPolicyFallbacks) > 0:
		list = p.req.policyFallbacks
	default:
		return // today's way: the plain fallbacks, then the request's
	}
	tried := p.targets[:p.members]
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
			p.attempts = append(p.attempts, Attempt{Model: t.name, Outcome: OutcomeSkipped, Kind: providers.KindBadRequest.String(),
				Error: "skipped: " + t.unfit})
		default:
			tail = append(tail, t)
		}
	}
	end := p.members + len(tail)
	for _, t := range p.targets[p.members:] {
		if !t.plain && !named(tail, t.name) { // the request's own fallback_models
			tail = append(tail, t)
		}
	}
	p.targets = append(p.targets[:p.members:p.members], tail...)
	p.switched, p.switchedEnd = kind, end
	g.log.DebugContext(ctx, "completions: model group's fallbacks by kind of failure", "group", p.req.groupName, "kind", kind.String(),
		"order", targetNames(p.targets[p.members:]))
}

// membersFailedAs returns the kind of failure every member of the named group that was
// called ended with, its being unavailable (unavailable: no verdict on the request) aside;
// KindUnknown when no member was called, none failed otherwise, or they failed
// differently.
func (p *plan) membersFailedAs() providers.ErrorKind {
	found, have := providers.KindUnknown, false
	for _, m := range p.targets[:p.members] {
		last := -1
		for k, a := range p.attempts {
			if a.Model == m.name && a.Outcome == OutcomeError {
				last = k
			}
		}
		if last < 0 {
			continue // skipped (an open breaker, a limit): not called
		}
		kind, _ := providers.ParseErrorKind(p.attempts[last].Kind)
		switch {
		case unavailable(kind):
		case !have:
			found, have = kind, true
		case kind != found:
			return providers.KindUnknown
		}
	}
	return found
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
