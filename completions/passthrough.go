package completions

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// OperationPassThrough is RequestRecord.Operation for a request forwarded as it is to a
// provider's own API (LiteLLM's pass-through endpoints: /anthropic/…, /gemini/…,
// /openai/…).
const OperationPassThrough = "pass_through"

// ErrPassThroughUnavailable means a pass-through request names a provider that is not
// configured here, or one whose adapter cannot forward requests (Azure OpenAI, Vertex AI):
// *PassThroughUnavailableError says which and why.
var ErrPassThroughUnavailable = errors.New("completions: provider unavailable for pass-through")

// PassThroughUnavailableError is a pass-through request's refusal for its provider. It
// matches ErrPassThroughUnavailable, and providers.ErrUnknownProvider when no provider of
// that name is registered.
type PassThroughUnavailableError struct {
	// Provider is the provider's name ("anthropic").
	Provider string
	// Reason says what is missing ("set ANTHROPIC_API_KEY", …).
	Reason string
	// Unknown: no provider of that name is registered at all.
	Unknown bool
}

// Error names the provider and what is missing.
func (e *PassThroughUnavailableError) Error() string {
	return fmt.Sprintf("provider %q is not available for pass-through: %s", e.Provider, e.Reason)
}

// Is matches ErrPassThroughUnavailable, and providers.ErrUnknownProvider when Unknown.
func (e *PassThroughUnavailableError) Is(target error) bool {
	return target == ErrPassThroughUnavailable || e.Unknown && target == providers.ErrUnknownProvider
}

// PassThrough is one request a server forwards as it is to a provider's own API, held to
// its key like a gateway request: Gateway.BeginPassThrough admits it (the key's models,
// budget, block and token rate), Forwarder sends it, and End bills the usage its answer
// reported and records it in the ledger and through the Observer (operation
// OperationPassThrough). End must be called once on every way out.
type PassThrough struct {
	g      *Gateway
	p      *plan
	t      target
	f      providers.Forwarder
	stream bool
	begin  time.Time
	once   sync.Once
}

// BeginPassThrough admits a request of scope to be forwarded to provider's own API
// ("anthropic", "gemini", "openai") for model, the model its body or path names ("" when
// it names none); stream says the caller asked for a stream. A scope held to a Budget (a
// virtual or temporary key) may forward only a request that names a model it allows: one
// that names none could reach anything of the operator's account (files, batches), so it
// is refused with ErrModelNotAllowed. Errors: *PassThroughUnavailableError
// (ErrPassThroughUnavailable), ErrModelNotAllowed, ErrBudgetExceeded (ErrBlocked for a
// blocked key), *TokenRateError, or the context's error. tags are the request's tags (its
// headers' and its key's): it draws on their tag budgets and is recorded under them.
func (g *Gateway) BeginPassThrough(ctx context.Context, scope Scope, provider, model string, stream bool, tags ...string) (*PassThrough, error) {
	if g.breakers == nil {
		return nil, ErrZeroGateway
	}
	p, err := g.opts.Providers.Lookup(provider)
	if err != nil {
		return nil, &PassThroughUnavailableError{Provider: provider, Reason: "no such provider is configured here", Unknown: true}
	}
	f, ok := p.(providers.Forwarder)
	if !ok || !f.CanForward() {
		return nil, &PassThroughUnavailableError{Provider: provider, Reason: "its adapter does not forward requests to the provider's own API"}
	}
	if !providers.IsConfigured(p) {
		reason := "it has no credential"
		if n := providers.Needs(p); n != "" {
			reason = "set " + n
		}
		return nil, &PassThroughUnavailableError{Provider: provider, Reason: reason}
	}
	name := provider
	if model != "" {
		name = provider + "/" + model
	}
	if scope.Budget != nil && model == "" {
		return nil, fmt.Errorf("%w: a key held to models and a budget may forward only requests that name a model to call (a model operation's body model, or Gemini's models/{model}:{method} in the path), not files, batches or other resources of the provider's account", ErrModelNotAllowed)
	}
	if err := CheckTags("tags", tags); err != nil {
		return nil, err
	}
	if scope, err = g.withTagBudgets(ctx, scope, tags); err != nil {
		return nil, err
	}
	t := target{name: name, provider: provider, model: model, p: p}
	pl, err := g.enterOp(ctx, scope, name, tags, []target{t}, nil)
	if err != nil {
		return nil, err
	}
	// The route forwards the request itself, under its caller's context: no call takes
	// over the deadline context the admission kept, whose timer would run until End.
	pl.dropDeadline()
	pl.req.Stream = stream
	g.countModel(pl, t, g.opts.Now()) // admitted by enterOp: the request is sent now
	return &PassThrough{g: g, p: pl, t: t, f: f, stream: stream, begin: g.opts.Now()}, nil
}

// Forwarder is the adapter that sends the request (with its own credential).
func (pt *PassThrough) Forwarder() providers.Forwarder { return pt.f }

// Model is the "provider/model" the request names (the provider alone when it names none).
func (pt *PassThrough) Model() string { return pt.t.name }

// End ends the request: u is the usage of its answer (reported by it, estimated when it
// reported none, or neither: no usage), ttft how long its first bytes took, and err why
// it did not end in a whole answer (nil: it did; an upstream's error status is a *providers.Error, a caller gone
// the context's error). Usage reported or estimated is priced from the catalogue (at its
// embedding prices when u.Embeddings) and
// billed to the scope's budget (a partial answer's too) and to the ledger, an estimate
// marked as such there and in the record; the request is recorded once through the
// Observer with one attempt. Only the first call counts.
func (pt *PassThrough) End(ctx context.Context, u PassThroughUsage, ttft time.Duration, err error) {
	pt.once.Do(func() { pt.end(ctx, u, ttft, err) })
}

func (pt *PassThrough) end(ctx context.Context, pu PassThroughUsage, ttft time.Duration, err error) {
	g, p, t := pt.g, pt.p, pt.t
	defer p.ended()
	now := g.opts.Now()
	latency := now.Sub(pt.begin)
	u, billed, estimated := pu.Usage, pu.Reported || pu.Estimated || pu.Audio != nil || pu.Images != nil, pu.Estimated
	a := Attempt{Model: t.name, ModelGroup: t.group, Outcome: "ok", LatencyMS: latency.Milliseconds(), Started: pt.begin}
	if err != nil {
		a.Outcome, a.Error, a.Err = "error", err.Error(), err
		var pe *providers.Error
		if errors.As(err, &pe) {
			a.Kind = pe.Kind.String()
		}
	}
	var costs Costs
	if billed {
		switch {
		case pu.Audio != nil:
			costs = g.audioCost(p, t, *pu.Audio)
		case pu.Images != nil:
			costs = g.imageCost(p, t, *pu.Images)
		case pu.Embeddings:
			costs = g.embeddingCost(p, t, u)
		default:
			costs = g.costsAt(p, t, u)
		}
		g.account(ctx, p, t, u, costs, err == nil, estimated, latency)
	}
	p.attempts = append(p.attempts, a)
	if g.opts.Observer == nil {
		return
	}
	r := RequestRecord{Owner: p.scope.Owner, Tag: p.scope.Tag, Operation: OperationPassThrough, Stream: pt.stream,
		Outcome: RequestOK, Provider: t.provider, Model: t.name, Requested: t.name, Attempts: cloneAttempts(p.attempts),
		Start: p.start, Latency: now.Sub(p.start), TTFT: ttft, Err: err, Tags: p.req.Tags}
	if billed {
		r.Usage = usageOf(u, costs)
		r.UsageEstimated = estimated
	}
	switch {
	case err == nil:
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		r.Outcome = RequestCancelled
	case pt.stream && ttft > 0:
		r.Outcome = RequestStreamFailed
	default:
		r.Outcome = RequestFailed
	}
	g.observe(ctx, p, r)
}
