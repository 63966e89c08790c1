package completions

import (
	"context"
	"errors"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// completeHedged answers a non-streamed request that asks for hedging by streaming it
// internally and reading the stream whole: telling a live model from a silent one needs
// its first fragment. A stream that fails after it started (and could not be continued)
// is reported as every attempt failing, as a non-streamed answer would be.
func (g *Gateway) completeHedged(ctx context.Context, scope Scope, req *Request) (*Response, error) {
	st, err := g.stream(ctx, scope, req, true)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	for {
		_, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return st.Response(), nil
		}
		if err != nil {
			if errors.Is(err, ErrStreamFailed) {
				return nil, &AllFailedError{Attempts: slices.Clone(st.p.attempts)}
			}
			return nil, err
		}
	}
}

// hedged opens the plan's stream with hedging (FaultPolicy.HedgeAfter): it starts the
// first model, starts the next one whenever no running attempt produced a first fragment
// within hedgeAfter (or the running ones all failed), and keeps the first attempt that
// produces one; the others are cancelled and recorded as cancelled ("hedged"), and billed
// with the answer (their prompt, estimated). Each model is tried once: hedging replaces
// retries. It returns the winning attempt, its index in p.targets and when it started.
func (g *Gateway) hedged(ctx context.Context, p *plan) (*attemptStream, int, time.Time, error) {
	type result struct {
		i   int
		a   *attemptStream
		err error
	}
	results := make(chan result, len(p.targets))
	cancels := map[int]context.CancelFunc{}
	begins := map[int]time.Time{}
	spans := map[int][8]byte{} // the attempts' reserved span ids (traceAttempt)
	next := 0
	var gone error // the caller went away while the request waited for a slot
	// start starts the next model that can be called. With no attempt running it may
	// queue for a slot (admit): a hedge started beside a running one never waits.
	start := func() bool {
		for next < len(p.targets) && p.calls < MaxUpstreamAttempts && gone == nil {
			i := next
			next++
			p.current = i
			ok, err := g.admit(ctx, p, i, len(cancels) == 0 && !p.noQueue)
			if err != nil {
				gone = err
				return false
			}
			if !ok {
				if deadlineHit(ctx) {
					return false
				}
				continue
			}
			p.calls++
			actx, cancel := context.WithCancel(ctx)
			cancels[i], begins[i] = cancel, g.opts.Now()
			actx, spans[i] = g.traceAttempt(actx)
			go func() {
				a, err := g.openAttempt(actx, p, p.targets[i], &p.preq)
				results <- result{i, a, err}
			}()
			return true
		}
		return false
	}
	// stopAll cancels the running attempts, whose slots in flight are free from then on;
	// their results are drained in the background.
	stopAll := func(record bool) {
		for i, cancel := range cancels {
			cancel()
			p.drop(p.targets[i].name)
			if record {
				// Started and SpanID: its call is traced (its HTTP span has a parent).
				p.attempts = append(p.attempts, Attempt{Model: p.targets[i].name, ModelGroup: p.targets[i].group, Outcome: OutcomeCancelled, Kind: "hedged",
					Error: "cancelled: another model answered first", LatencyMS: g.opts.Now().Sub(begins[i]).Milliseconds(), Started: begins[i], SpanID: spans[i]})
				p.losers = append(p.losers, part{t: p.targets[i], attempt: len(p.attempts) - 1, latency: g.opts.Now().Sub(begins[i])})
			}
		}
		n := len(cancels)
		go func() {
			for range n {
				if r := <-results; r.a != nil {
					r.a.close()
				}
			}
		}()
		clear(cancels)
	}
	if !start() {
		if gone != nil {
			return nil, 0, time.Time{}, gone
		}
		return nil, 0, time.Time{}, p.allFailed()
	}
	timer := time.NewTimer(p.timing.hedgeAfter)
	defer timer.Stop()
	for len(cancels) > 0 {
		select {
		case <-timer.C:
			if start() {
				timer.Reset(p.timing.hedgeAfter)
			}
		case r := <-results:
			cancel := cancels[r.i]
			delete(cancels, r.i)
			t := p.targets[r.i]
			lat := g.opts.Now().Sub(begins[r.i]).Milliseconds()
			g.breakers.record(t.name, r.err, g.opts.Now(), p.timing.tight)
			if r.err == nil {
				// The winner's context lives as long as its stream.
				inner := r.a.cancel
				r.a.cancel = func() { inner(); cancel() }
				stopAll(true)
				p.attempts = append(p.attempts, Attempt{Model: t.name, ModelGroup: t.group, Outcome: OutcomeOK, LatencyMS: lat, Started: begins[r.i], MaxTokens: g.sentMaxTokens(p, t), SpanID: spans[r.i]})
				return r.a, r.i, begins[r.i], nil
			}
			cancel()
			p.drop(t.name) // its one call is over: its slot in flight is free
			if ctx.Err() != nil && !deadlineHit(ctx) {
				// The caller went away: the calls made are recorded cancelled (their HTTP
				// spans have their attempts' spans), not as the model's failures.
				p.attempts = append(p.attempts, cutAttempt(ctx, t, begins[r.i], lat, g.sentMaxTokens(p, t), spans[r.i]))
				for _, i := range slices.Sorted(maps.Keys(cancels)) {
					t := p.targets[i]
					p.attempts = append(p.attempts, cutAttempt(ctx, t, begins[i], g.opts.Now().Sub(begins[i]).Milliseconds(), g.sentMaxTokens(p, t), spans[i]))
				}
				stopAll(false)
				return nil, 0, time.Time{}, ctx.Err()
			}
			kind := providers.KindOf(r.err)
			if unavailable(kind) && !deadlineHit(ctx) && !p.timing.tight {
				g.latency.timedOut(t.name, max(g.opts.Now().Sub(begins[r.i]), p.timing.firstToken)) // as run does
			}
			p.attempts = append(p.attempts, Attempt{Model: t.name, ModelGroup: t.group, Outcome: OutcomeError, Kind: kind.String(), Error: r.err.Error(), Err: r.err, LatencyMS: lat, Started: begins[r.i], MaxTokens: g.sentMaxTokens(p, t), SpanID: spans[r.i]})
			if kind == providers.KindContentFilter && !p.req.FallbackOnContentFilter {
				stopAll(true)
				return nil, 0, time.Time{}, g.contentFiltered(ctx, p, t, r.err, time.Duration(lat)*time.Millisecond)
			}
			if len(cancels) == 0 && start() {
				timer.Reset(p.timing.hedgeAfter)
			}
		}
	}
	if gone != nil {
		return nil, 0, time.Time{}, gone
	}
	return nil, 0, time.Time{}, p.allFailed()
}
