package completions

import (
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
	// (LiteLLM's timeout: the time for the complete response); a streamed call, without
	// StreamTimeout, gets as long for its first chunk. 0: the gateway's.
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
	if d := g.timeouts[model].whole(); d > 0 && d < p.timing.attempt {
		return d
	}
	return p.timing.attempt
}

// firstTokenTimeout is how long a streamed call to model may wait for its first chunk:
// the plan's first-token timeout, shortened by the model's own StreamTimeout (else
// Timeout).
func (g *Gateway) firstTokenTimeout(p *plan, model string) time.Duration {
	if d := g.timeouts[model].firstChunk(); d > 0 && d < p.timing.firstToken {
		return d
	}
	return p.timing.firstToken
}
