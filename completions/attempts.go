package completions

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/switchyard-ai/switchyard/providers"
)

// plan is one validated request on its way through the attempts.
type plan struct {
	scope      Scope
	req        *Request
	start      time.Time
	targets    []target
	preq       providers.Request // Model is set per attempt
	maxRetries int

	convID    string
	convNew   bool
	convTitle string
	msgID     string

	attempts []Attempt
}

// prepare validates req, checks the caller's budget, loads the conversation and orders the
// models. Its errors are *ValidationError, ErrModelNotAllowed, ErrNotFound or
// ErrBudgetExceeded (wrapped).
func (g *Gateway) prepare(ctx context.Context, scope Scope, req *Request) (*plan, error) {
	p := &plan{scope: scope, req: req, start: scope.Received}
	if p.start.IsZero() {
		p.start = g.opts.Now()
	}
	primary, fallback, err := g.validate(req)
	if err != nil {
		return nil, err
	}
	if b := scope.Budget; b != nil {
		if err := b.checkModels(req.Models); err != nil {
			return nil, err
		}
		if err := b.checkModels(req.FallbackModels); err != nil {
			return nil, err
		}
	}

	msgs := make([]providers.Message, 0, len(req.Messages))
	if req.ConversationID != "" {
		c, history, err := g.Conversation(ctx, scope.Owner, req.ConversationID)
		if err != nil {
			return nil, err
		}
		p.convID, p.convTitle = c.ID, c.Title
		for _, m := range history {
			sm := Message{Role: m.Role, Content: m.Content}
			msgs = append(msgs, providers.Message{Role: m.Role, Content: sm.Text()})
		}
	} else if !req.ephemeral {
		p.convID, p.convNew, p.convTitle = newConversationID(), true, titleFor(req.Messages)
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		msgs = append(msgs, providers.Message{Role: m.Role, Content: m.Text(), ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID})
	}

	p.preq = providers.Request{Messages: msgs, Temperature: req.Temperature, MaxTokens: req.MaxTokens, Search: req.Search,
		TopP: req.topP, Stop: req.stop, Tools: req.Tools, ToolChoice: req.ToolChoice, ParallelToolCalls: req.ParallelToolCalls,
		ResponseFormat: req.ResponseFormat}
	if b := scope.Budget; b != nil {
		left, err := b.reserveCall()
		if err != nil {
			return nil, err
		}
		if left > 0 && (p.preq.MaxTokens == 0 || int64(p.preq.MaxTokens) > left) {
			p.preq.MaxTokens = int(min(left, math.MaxInt32))
		}
	}

	if g.opts.Ranker != nil && len(primary) > 1 {
		primary = g.rank(ctx, msgs, primary)
	}
	p.targets = append(primary, fallback...)
	p.maxRetries = g.opts.DefaultMaxRetries
	if req.MaxRetries != nil {
		p.maxRetries = *req.MaxRetries
	}
	p.msgID = uuid.NewString()
	return p, nil
}

// rank asks the Ranker to order ts; a failing or inconsistent ranking keeps the given order.
func (g *Gateway) rank(ctx context.Context, msgs []providers.Message, ts []target) []target {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.name
	}
	ranked, err := g.opts.Ranker.Rank(ctx, msgs, slices.Clone(names))
	if err != nil {
		g.log.Warn("completions: ranker failed; keeping the given order", "err", err)
		return ts
	}
	if len(ranked) != len(ts) {
		g.log.Warn("completions: ranker returned a different set of models; keeping the given order")
		return ts
	}
	out := make([]target, 0, len(ts))
	used := make([]bool, len(ts))
	for _, name := range ranked {
		found := false
		for i, t := range ts {
			if !used[i] && t.name == name {
				used[i], found = true, true
				out = append(out, t)
				break
			}
		}
		if !found {
			g.log.Warn("completions: ranker returned a different set of models; keeping the given order")
			return ts
		}
	}
	return out
}

// run tries the plan's targets in order, retrying retryable failures with backoff, until
// try succeeds. It returns ctx's error when the caller went away and *AllFailedError when
// every attempt failed.
func (g *Gateway) run(ctx context.Context, p *plan, try func(ctx context.Context, t target) error) error {
	for _, t := range p.targets {
		for retry := 0; ; retry++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			begin := g.opts.Now()
			err := try(ctx, t)
			lat := g.opts.Now().Sub(begin).Milliseconds()
			if err == nil {
				p.attempts = append(p.attempts, Attempt{Model: t.name, Outcome: OutcomeOK, LatencyMS: lat})
				return nil
			}
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			kind := providers.KindOf(err)
			var retryAfter time.Duration
			var pe *providers.Error
			if errors.As(err, &pe) {
				retryAfter = pe.RetryAfter
			}
			p.attempts = append(p.attempts, Attempt{Model: t.name, Outcome: OutcomeError, Kind: kind.String(), Error: err.Error(), LatencyMS: lat})
			g.log.Debug("completions: attempt failed", "model", t.name, "retry", retry, "kind", kind.String(), "err", err)
			if kind == providers.KindContentFilter {
				// A policy decision: asking the next model would override it.
				msg := err.Error()
				if pe != nil && pe.Message != "" {
					msg = pe.Message
				}
				return &ContentFilterError{Model: t.name, Message: msg, Attempts: slices.Clone(p.attempts)}
			}
			if !kind.Retryable() || retry >= p.maxRetries {
				break
			}
			d, ok := g.opts.Backoff.delay(retry, retryAfter)
			if !ok {
				break // Retry-After longer than we honour: the next model is a better bet
			}
			if dl, has := ctx.Deadline(); has && g.opts.Now().Add(d).After(dl) {
				break
			}
			if err := g.opts.Sleep(ctx, d); err != nil {
				return err
			}
		}
	}
	return &AllFailedError{Attempts: slices.Clone(p.attempts)}
}

// timeoutError builds the error of an attempt that ran out of time.
func timeoutError(t target, what string, d time.Duration) error {
	return &providers.Error{Provider: t.provider, Model: t.model, Kind: providers.KindTimeout,
		Message: fmt.Sprintf("%s within %s", what, d)}
}

// response assembles the final response of an answered plan.
func (g *Gateway) response(p *plan, t target, text string, u providers.Usage, finish string, firstToken time.Time) *Response {
	now := g.opts.Now()
	r := &Response{
		Provider:          t.provider,
		Model:             t.model,
		ResponseMessageID: p.msgID,
		Message:           assistantText(text),
		ConversationID:    p.convID,
		ConversationTitle: p.convTitle,
		Usage:             g.usage(t.name, u),
		Latency:           now.Sub(p.start).Milliseconds(),
		TTFT:              firstToken.Sub(p.start).Milliseconds(),
		FinishReason:      finish,
		Attempts:          p.attempts,
	}
	return r
}

// account reports an answered attempt to the budget and the ledger.
func (g *Gateway) account(ctx context.Context, p *plan, t target, u providers.Usage, c Costs, complete bool, latency time.Duration) {
	if b := p.scope.Budget; b != nil {
		b.charge(int64(u.PromptTokens+u.CompletionTokens), c.TotalTokensCost)
	}
	if g.opts.Ledger != nil {
		g.opts.Ledger.Record(ctx, LedgerEntry{Owner: p.scope.Owner, Tag: p.scope.Tag, Model: t.name, Complete: complete,
			Usage: u, Cost: c, Latency: latency, Time: g.opts.Now()})
	}
}

// Complete answers req without streaming (req.Stream is ignored). Errors: *ValidationError
// (ErrInvalid), ErrNotFound, ErrModelNotAllowed, ErrBudgetExceeded, *AllFailedError, or the
// context's error when ctx ends first.
func (g *Gateway) Complete(ctx context.Context, scope Scope, req *Request) (*Response, error) {
	p, err := g.prepare(ctx, scope, req)
	if err != nil {
		return nil, err
	}
	var (
		out   *providers.Response
		used  target
		begin time.Time
	)
	err = g.run(ctx, p, func(ctx context.Context, t target) error {
		begin = g.opts.Now()
		actx, cancel := context.WithTimeout(ctx, g.opts.AttemptTimeout)
		defer cancel()
		r := p.preq
		r.Model = t.model
		res, err := t.p.Complete(actx, &r)
		if err != nil {
			if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
				return timeoutError(t, "no complete response", g.opts.AttemptTimeout)
			}
			return err
		}
		out, used = res, t
		return nil
	})
	if err != nil {
		return nil, err
	}
	now := g.opts.Now()
	resp := g.response(p, used, out.Text, out.Usage, out.FinishReason, now)
	resp.ToolCalls, resp.Refusal = out.ToolCalls, out.Refusal
	g.account(ctx, p, used, out.Usage, resp.Usage.Costs, true, now.Sub(begin))
	if err := g.saveTurn(ctx, p, resp); err != nil {
		return nil, fmt.Errorf("completions: save conversation %s: %w", p.convID, err)
	}
	return resp, nil
}
