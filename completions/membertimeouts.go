package completions

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// MemberTimeouts are one model group member's (a deployment's) own time limits, as
// LiteLLM's deployment timeout and stream_timeout: a call that runs out of them fails with
// a timeout, and the request goes on to its next model (member or fallback) as after any
// timeout. They only shorten the gateway's own limits (Options.AttemptTimeout,
// Options.FirstTokenTimeout and a request's fault policy), never lengthen them. The zero
// value keeps the gateway's limits.
type MemberTimeouts struct {
	// Timeout is the most seconds one whole non-streamed call to the member may take
	// (LiteLLM's timeout: the time for the complete response), one served through a
	// stream for hedging (FaultPolicy.HedgeAfter) too; a streamed call, without
	// StreamTimeout, gets as long for its first chunk. Speech (Gateway.Speak) waits as
	// long for its first audio; the audio then streams to the caller uncut (no other
	// model can take over once it started). A retry is weighed against each remaining
	// model's own bound (the first-token timeout, shortened by Timeout, or for a stream
	// by StreamTimeout). 0: the gateway's.
	Timeout float64 `json:"timeout,omitempty"`
	// StreamTimeout is the most seconds a streamed call to the member may wait for its
	// first chunk (LiteLLM's stream_timeout: "maximum time to wait for the first chunk");
	// after it, the gateway's idle timeout between chunks holds. 0: Timeout, else the
	// gateway's first-token timeout.
	StreamTimeout float64 `json:"stream_timeout,omitempty"`
}

// maxMemberSeconds bounds a MemberTimeouts value: a day (longer never shortens anything).
const maxMemberSeconds = 86400

// set reports whether t limits anything.
func (t MemberTimeouts) set() bool { return t.Timeout > 0 || t.StreamTimeout > 0 }

// whole is the member's bound on a whole non-streamed call (0: none of its own).
func (t MemberTimeouts) whole() time.Duration { return secondsOf(t.Timeout) }

// firstChunk is the member's bound on a streamed call's wait for its first chunk (0: none
// of its own).
func (t MemberTimeouts) firstChunk() time.Duration {
	if t.StreamTimeout > 0 {
		return secondsOf(t.StreamTimeout)
	}
	return secondsOf(t.Timeout)
}

// secondsOf converts validated seconds to a duration.
func secondsOf(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// checkTimeouts validates the Timeouts of the group name; errors wrap ErrInvalid and name
// the group and the member.
func checkTimeouts(name string, g ModelGroup) error {
	if len(g.Timeouts) == 0 {
		return nil
	}
	if len(g.Timeouts) != len(g.Models) {
		return fmt.Errorf("%w: model group %q: timeouts: one per model, got %d for %d models", ErrInvalid, name, len(g.Timeouts), len(g.Models))
	}
	for i, t := range g.Timeouts {
		for _, f := range []struct {
			field string
			v     float64
		}{{"timeout", t.Timeout}, {"stream_timeout", t.StreamTimeout}} {
			if math.IsNaN(f.v) || f.v < 0 || f.v > maxMemberSeconds {
				return fmt.Errorf("%w: model group %q: timeouts[%d].%s (%s): must be seconds, 0 (the gateway's) to %d (a day), got %g",
					ErrInvalid, name, i, f.field, g.Models[i], maxMemberSeconds, f.v)
			}
		}
	}
	return nil
}

// memberTimeoutsOf gathers the timeouts the groups give their members, by model: a
// model's timeouts hold wherever it is called (any group, a fallback, its own name), so
// two groups giving one model different timeouts are refused, naming both (ErrInvalid).
func memberTimeoutsOf(groups map[string]ModelGroup) (map[string]MemberTimeouts, error) {
	return perMember(groups, "timeouts", "timeouts hold for each of its calls",
		func(g ModelGroup) []MemberTimeouts { return g.Timeouts }, MemberTimeouts.set)
}

// attemptTimeout is how long one whole non-streamed call to model may take: the plan's
// attempt timeout, shortened by the model's own Timeout.
func (g *Gateway) attemptTimeout(p *plan, model string) time.Duration {
	if d := p.rt.timeouts[model].whole(); d > 0 && d < p.timing.attempt {
		return d
	}
	return p.timing.attempt
}

// firstTokenTimeout is how long a streamed call to model may wait for its first chunk:
// the plan's first-token timeout, shortened by the model's own StreamTimeout (else
// Timeout).
func (g *Gateway) firstTokenTimeout(p *plan, model string) time.Duration {
	if d := p.rt.timeouts[model].firstChunk(); d > 0 && d < p.timing.firstToken {
		return d
	}
	return p.timing.firstToken
}

// leastTime is the least time a call to model is kept when a retry is weighed (retryWait):
// the plan's first-token timeout, shortened by the model's own bound on what that call
// waits for: for a stream (Stream, and a non-streamed request served through one,
// completeHedged), its first chunk (firstTokenTimeout); otherwise the whole call
// (attemptTimeout).
func (g *Gateway) leastTime(p *plan, model string) time.Duration {
	if p.streamed {
		return g.firstTokenTimeout(p, model)
	}
	return min(p.timing.firstToken, g.attemptTimeout(p, model))
}

// errWholeCall is the cause of an attempt's context ending at the model's own Timeout
// (collectedTimeout).
var errWholeCall = errors.New("the model's timeout for a whole call passed")

// collectedTimeout bounds a whole call to model streamed for a non-streamed request
// (completeHedged): the model's own Timeout (LiteLLM's timeout of a non-streamed call)
// when it is shorter than the plan's attempt timeout; 0 otherwise: such a stream is held
// to the first-token and idle timeouts, as any stream, not to the attempt timeout.
func (g *Gateway) collectedTimeout(p *plan, model string) time.Duration {
	if !p.collected {
		return 0
	}
	if d := g.attemptTimeout(p, model); d < p.timing.attempt {
		return d
	}
	return 0
}

// wholeBound is an attempt's bound on its whole call (collectedTimeout): its context ends
// with errWholeCall at limit. The zero value bounds nothing.
type wholeBound struct {
	ctx   context.Context // the attempt's context; nil: no bound
	limit time.Duration
}

// passed reports whether the attempt ran out of its whole-call bound.
func (b wholeBound) passed() bool {
	return b.ctx != nil && errors.Is(context.Cause(b.ctx), errWholeCall)
}
