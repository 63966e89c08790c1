package completions

import (
	"context"
	"errors"
)

// errRequestDeadline is the cause of a request's context ending at its deadline
// (FaultPolicy.Timeout, Options.RequestTimeout).
var errRequestDeadline = errors.New("request deadline reached")

// keptDeadline is a request's deadline context made by its admission into its budget's
// spend gate (admitSpend, enterBudget's leases): parent bounded by the request's deadline,
// and its cancel.
type keptDeadline struct {
	parent, ctx context.Context
	cancel      context.CancelFunc
}

// withDeadline bounds ctx by the request's deadline. The context p's admission kept
// (keepDeadline) is handed over when it bounds this same ctx: a context made anew would be
// the same one (same parent, deadline and cause), so the admission and the calls after it
// share one timer (context.WithDeadlineCause costs 4 allocations). The caller owns what it
// gets, the kept one included: its cancel stops the timer when the calls end (a stream's
// when it is closed, which may be long after its admission).
func (p *plan) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if k := p.admitted; k.ctx != nil && sameContext(k.parent, ctx) {
		p.admitted = keptDeadline{}
		return k.ctx, k.cancel
	}
	return context.WithDeadlineCause(ctx, p.timing.deadline, errRequestDeadline)
}

// keepDeadline keeps dctx, the bound of ctx by the request's deadline the request's
// admission waited under (withDeadline), for its calls under ctx to take over rather than
// make another: the request's deadline context is then made once. The calls' withDeadline
// takes it; ended cancels it when none did (a request admitted that calls no model), and
// enterBudget when the request is refused after all; a request whose calls are not the
// gateway's (a pass-through, a realtime session) drops it once admitted (dropDeadline).
func (p *plan) keepDeadline(ctx, dctx context.Context, cancel context.CancelFunc) {
	p.dropDeadline()
	p.admitted = keptDeadline{parent: ctx, ctx: dctx, cancel: cancel}
}

// dropDeadline cancels the deadline context kept by keepDeadline and not taken over (its
// timer stops; nothing runs under it), if any.
func (p *plan) dropDeadline() {
	if k := p.admitted; k.cancel != nil {
		p.admitted = keptDeadline{}
		k.cancel()
	}
}

// sameContext reports whether a and b are the same context. A context of a type == cannot
// compare (a struct holding a map, say, which == panics on) is never the same as another:
// the kept deadline is then not shared.
func sameContext(a, b context.Context) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// deadlineHit reports whether ctx ended because the request's deadline passed (rather
// than because the caller went away).
func deadlineHit(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), errRequestDeadline)
}
