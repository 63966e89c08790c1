package completions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/switchyard-ai/switchyard/providers"
)

// OperationRealtime is RequestRecord.Operation for a session of OpenAI's Realtime API
// relayed through the gateway (/v1/realtime): one record per session, with the usage of
// all its responses summed.
const OperationRealtime = "realtime"

// realtimeVendors maps realtime model-name prefixes to the provider that serves the family,
// for bare names the catalogue does not list.
var realtimeVendors = []struct{ prefix, provider string }{
	{"gpt-realtime", "openai"}, {"gpt-4o-realtime", "openai"}, {"gpt-4o-mini-realtime", "openai"},
}

// servesRealtime reports whether p opens realtime sessions.
func servesRealtime(p providers.Provider) bool {
	_, ok := p.(providers.RealtimeDialer)
	return ok && providers.ServesChat(p)
}

// realtimeModel returns the "provider/model" a bare realtime model name stands for: the
// configured providers' catalogued realtime model of that name, else its family's provider
// (realtimeVendors).
func (g *Gateway) realtimeModel(field, name string) (string, error) {
	bare := map[string][]string{}
	if cat, ok := g.prices().(interface{ RealtimeModels(string) []string }); ok {
		for _, prov := range g.configuredProviders(servesRealtime) {
			for _, pm := range cat.RealtimeModels(prov) {
				if _, m, err := providers.ParseModel(pm); err == nil && m == name {
					bare[name] = append(bare[name], pm)
				}
			}
		}
	}
	return g.kindModel(field, name, bare, realtimeVendors)
}

// realtimeTargets resolves a realtime session's model: a model group's members in order,
// else the model itself.
func (g *Gateway) realtimeTargets(name string) ([]target, error) {
	return g.groupTargets(name, g.realtimeModel, servesRealtime, func(field, provider, m string) error {
		return invalid(field, "model %q has no realtime API here (provider %q does not open Realtime API sessions)", m, provider)
	})
}

// ResolveRealtimeModel returns the "provider/model" a realtime model name stands for, and
// whether a configured provider opens realtime sessions with it: a model the catalogue
// prices as a realtime model (an Azure OpenAI deployment by its base model), or any
// deployment of Azure OpenAI, whose names are its operator's.
func (g *Gateway) ResolveRealtimeModel(name string) (string, bool) {
	ts, err := g.realtimeTargets(name)
	if err != nil || len(ts) != 1 || !providers.IsConfigured(ts[0].p) {
		return name, false
	}
	if _, ok := ts[0].p.(*providers.Azure); ok {
		return ts[0].name, true
	}
	cat, ok := g.prices().(interface {
		LookupRealtime(string) (providers.RealtimePrice, bool)
	})
	if !ok {
		return name, false
	}
	if _, ok := cat.LookupRealtime(priceNameOf(g.prices(), ts[0])); ok {
		return ts[0].name, true
	}
	return name, false
}

// realtimePricer is what the gateway's Prices implements to price realtime sessions.
type realtimePricer interface {
	RealtimeCost(model string, u providers.RealtimeUsage) providers.Cost
}

// realtimeCost prices the usage of a realtime response of t, a target of request p
// (priceAt).
func (g *Gateway) realtimeCost(p *plan, t target, u providers.RealtimeUsage) Costs {
	return priceAt(g, p, t, u, realtimePricer.RealtimeCost)
}

// RealtimeSession is one session of OpenAI's Realtime API a server relays, held to its key
// like a gateway request: Gateway.BeginRealtime admits it (the key's models, budget, block
// and token rate), Dial opens the upstream session, Bill charges each response's usage as
// it is reported (the key's, team's and proxy's budgets and the ledger) and End records the
// session once through the Observer with the usage summed (operation OperationRealtime),
// as LiteLLM logs a realtime session. End must be called once on every way out.
type RealtimeSession struct {
	g     *Gateway
	p     *plan
	begin time.Time

	mu        sync.Mutex
	t         target // the target dialled (the first before Dial)
	usage     providers.RealtimeUsage
	costs     Costs
	responses int
	// transcriptions counts the input audio transcriptions billed (BillTranscription).
	transcriptions int
	// transcription marks a transcription-only session (BeginRealtimeTranscription).
	transcription bool
	lastBill      time.Time
	ttft          time.Duration
	once          sync.Once
}

// BeginRealtime admits a realtime session of scope with model: a realtime model
// ("openai/gpt-realtime", a bare catalogued name such as "gpt-realtime", an Azure OpenAI
// deployment "azure/{deployment}") or a model group whose members are. Errors:
// *ValidationError (ErrInvalid; ErrUnknownModel, providers.ErrUnknownProvider) naming the
// model, ErrModelNotAllowed, ErrBudgetExceeded (ErrBlocked for a blocked key),
// *TokenRateError, or the context's error. tags are the session's tags (its headers' and
// its key's).
func (g *Gateway) BeginRealtime(ctx context.Context, scope Scope, model string, tags ...string) (*RealtimeSession, error) {
	if g.breakers == nil {
		return nil, ErrZeroGateway
	}
	if model == "" {
		return nil, invalid("model", "name the realtime model in the query: ?model=gpt-realtime")
	}
	targets, err := g.realtimeTargets(model)
	if err != nil {
		return nil, err
	}
	return g.beginRealtime(ctx, scope, model, tags, targets)
}

// beginRealtime admits a session of scope with model, which resolved to targets.
func (g *Gateway) beginRealtime(ctx context.Context, scope Scope, model string, tags []string, targets []target) (*RealtimeSession, error) {
	if err := CheckTags("tags", tags); err != nil {
		return nil, err
	}
	scope, err := g.withTagBudgets(ctx, scope, tags)
	if err != nil {
		return nil, err
	}
	p, err := g.enterOp(ctx, scope, model, tags, targets, nil)
	if err != nil {
		return nil, err
	}
	// A session outlives the request's deadline and its calls (Dial, Call) take their
	// caller's context: none takes over the deadline context the admission kept, whose
	// timer would run until End.
	p.dropDeadline()
	p.req.Stream = true
	p.perResponse = true
	now := g.opts.Now()
	return &RealtimeSession{g: g, p: p, begin: now, lastBill: now, t: p.targets[0]}, nil
}

// CheckRealtime reports whether a realtime session of scope with model would be admitted as
// to its model, as BeginRealtime admits it (its errors naming the model,
// ErrModelNotAllowed), without counting a request or reading any spend, and whether each
// model it stands for is a priced realtime model (or an Azure OpenAI deployment): for
// handing out an ephemeral client secret a session is opened with later.
func (g *Gateway) CheckRealtime(scope Scope, model string) error {
	if g.breakers == nil {
		return ErrZeroGateway
	}
	if model == "" {
		return invalid("model", "name the realtime model")
	}
	targets, err := g.realtimeTargets(model)
	if err != nil {
		return err
	}
	cat, _ := g.prices().(interface {
		LookupRealtime(string) (providers.RealtimePrice, bool)
	})
	for _, t := range targets {
		if _, azure := t.p.(*providers.Azure); azure {
			continue // its deployments' names are its operator's
		}
		if cat == nil {
			return invalid("model", "model %q: the price catalogue has no realtime prices", t.name)
		}
		if _, ok := cat.LookupRealtime(priceNameOf(g.prices(), t)); !ok {
			return invalid("model", "model %q has no realtime API here (the catalogue prices no realtime model of that name)", t.name)
		}
	}
	_, err = g.opPlan(scope, model, nil, targets)
	return err
}

// Model is the "provider/model" of the session: the one dialled, the first the model named
// before.
func (s *RealtimeSession) Model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.t.name
}

// Dial opens the upstream session with the session's model, header going with the
// handshake (OpenAI-Beta): a model group's members in order, the next one tried when one's
// provider refuses or cannot be reached, or the key's per-model limits refuse its model
// (skipped). The error is the last member's (a *providers.Error, or a *ModelBudgetError
// or *ModelRateError) when none opened, or the context's.
func (s *RealtimeSession) Dial(ctx context.Context, header http.Header) (*websocket.Conn, error) {
	var conn *websocket.Conn
	if s.transcription {
		// A transcription session: its address names no model (the session update does).
		err := s.eachMember(ctx, func(t target) bool { return servesRealtimeTranscription(t.p) }, nil, func(t target) error {
			var err error
			conn, err = t.p.(providers.RealtimeTranscriptionDialer).DialRealtimeTranscription(ctx, t.model, header)
			return err
		})
		return conn, err
	}
	err := s.eachMember(ctx, func(t target) bool {
		_, ok := t.p.(providers.RealtimeDialer)
		return ok
	}, nil, func(t target) error {
		var err error
		conn, err = t.p.(providers.RealtimeDialer).DialRealtime(ctx, t.model, header)
		return err
	})
	return conn, err
}

// Call opens the session as a WebRTC call (OpenAI's POST /v1/realtime/calls): sdp, the
// caller's offer, goes with session (a session configuration; its type and its model set
// to each member's) to the model's provider — a model group's members in order, as Dial
// tries them, except that a member's refusal of the offer or session itself
// (providers.IsOfferRefusal: another would refuse it too) is returned at once — and the
// provider's SDP answer and the call's id are returned. The caller's media then flows to
// the provider; Sideband watches the call. Errors as Dial's.
func (s *RealtimeSession) Call(ctx context.Context, sdp string, session json.RawMessage) (answer, callID string, err error) {
	fields := map[string]json.RawMessage{}
	if len(session) > 0 {
		if err := json.Unmarshal(session, &fields); err != nil {
			return "", "", invalid("session", "must be a JSON object")
		}
	}
	fields["type"] = json.RawMessage(`"realtime"`)
	err = s.eachMember(ctx, func(t target) bool {
		_, ok := t.p.(providers.RealtimeCaller)
		return ok
	}, providers.IsOfferRefusal, func(t target) error {
		fields["model"], _ = json.Marshal(t.model)
		body, _ := json.Marshal(fields)
		var err error
		answer, callID, err = t.p.(providers.RealtimeCaller).CreateRealtimeCall(ctx, t.model, sdp, body)
		return err
	})
	return answer, callID, err
}

// Sideband opens the gateway's own watch of the call callID (Call's), on the provider that
// answered it: the call's server events until it ends.
func (s *RealtimeSession) Sideband(ctx context.Context, callID string) (*websocket.Conn, error) {
	t := s.target()
	c, ok := t.p.(providers.RealtimeCaller)
	if !ok {
		return nil, invalid("model", "model %q opens no realtime calls", t.name)
	}
	return c.DialRealtimeCall(ctx, t.model, callID)
}

// HangUp ends the call callID (Call's) at its provider.
func (s *RealtimeSession) HangUp(ctx context.Context, callID string) error {
	t := s.target()
	c, ok := t.p.(providers.RealtimeCaller)
	if !ok {
		return invalid("model", "model %q opens no realtime calls", t.name)
	}
	return c.HangUpRealtimeCall(ctx, t.model, callID)
}

// HangUpRealtimeCall ends the call callID that a realtime session of model (its
// "provider/model", RealtimeSession.Model) placed, at model's provider with the gateway's
// credential: for a server that did not place the call (another replica's) and has no
// session of it. Errors: *ValidationError naming the model when it places no calls here,
// or the provider's *providers.Error (a 404: no such call, or one already over).
func (g *Gateway) HangUpRealtimeCall(ctx context.Context, model, callID string) error {
	if g.breakers == nil {
		return ErrZeroGateway
	}
	ts, err := g.realtimeTargets(model)
	if err != nil {
		return err
	}
	if len(ts) != 1 {
		return invalid("model", "model %q is a model group, not the model a call was placed with", model)
	}
	c, ok := ts[0].p.(providers.RealtimeCaller)
	if !ok {
		return invalid("model", "model %q opens no realtime calls", ts[0].name)
	}
	return c.HangUpRealtimeCall(ctx, ts[0].model, callID)
}

// target is the member the session opened with.
func (s *RealtimeSession) target() target {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.t
}

// eachMember calls open with the session's members in order until one opens (those whose
// provider cannot, can false, passed over; those the key's per-model limits refuse
// skipped) or one's error is final (final nil: none is), recording each try as an attempt
// and the member that opened as the session's. The error is the last member's when none
// opened, or the context's.
func (s *RealtimeSession) eachMember(ctx context.Context, can func(target) bool, final func(error) bool, open func(target) error) error {
	var last error
	for _, t := range s.p.targets {
		begin := s.g.opts.Now()
		if !can(t) {
			continue
		}
		// The key's limits of the member's model, as for a chat request's attempt: a
		// member refused is skipped, and the one opened counted.
		if err := s.g.admitModel(ctx, s.p, t, begin); err != nil {
			s.mu.Lock()
			s.p.skipModel(t, err)
			s.mu.Unlock()
			last = err
			continue
		}
		s.g.countModel(s.p, t, begin)
		err := open(t)
		a := Attempt{Model: t.name, ModelGroup: t.group, Outcome: "ok", LatencyMS: s.g.opts.Now().Sub(begin).Milliseconds(), Started: begin}
		if err != nil {
			a.Outcome, a.Error, a.Err = "error", err.Error(), err
			var pe *providers.Error
			if errors.As(err, &pe) {
				a.Kind = pe.Kind.String()
			}
		}
		s.mu.Lock()
		s.p.attempts = append(s.p.attempts, a)
		if err == nil {
			s.t = t
		}
		s.mu.Unlock()
		if err == nil {
			return nil
		}
		last = err
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		if final != nil && final(err) {
			return err
		}
	}
	if last == nil {
		last = invalid("model", "no member of %q opens Realtime API sessions", s.p.asked)
	}
	return last
}

// Bill charges u, the usage one response.done event of the session reported, to the
// scope's budgets (the key's, its team's, the proxy's) and to the ledger, priced from the
// catalogue's realtime rates (text and audio tokens apart), and adds it to the session's
// sum that End records.
func (s *RealtimeSession) Bill(ctx context.Context, u providers.RealtimeUsage) {
	s.mu.Lock()
	t := s.t
	now := s.g.opts.Now()
	latency := now.Sub(s.lastBill)
	s.lastBill = now
	if s.responses == 0 {
		s.ttft = max(now.Sub(s.begin), time.Nanosecond)
	}
	c := s.g.realtimeCost(s.p, t, u)
	s.usage = s.usage.Add(u)
	s.costs = addCosts(s.costs, c, s.responses == 0 && s.transcriptions == 0)
	s.responses++
	s.mu.Unlock()
	s.g.account(ctx, s.p, t, u.Tokens(), c, true, false, latency)
}

// BillTranscription charges u, the usage of one transcription of the session's input audio
// (OpenAI's conversation.item.input_audio_transcription.completed event, which a session
// with input transcription on, or a transcription session, reports per audio segment), at
// the transcription model's own rates (gpt-4o-transcribe's tokens, whisper-1's seconds: the
// provider bills the transcription at its ASR model's price, not the realtime model's), to
// the same budgets and ledger as Bill, under that model's name; model is the provider's name
// of it ("gpt-4o-transcribe"), run by the session's provider. The tokens and cost join the
// session's sum that End records.
func (s *RealtimeSession) BillTranscription(ctx context.Context, model string, u providers.AudioUsage) {
	s.mu.Lock()
	t := s.t
	now := s.g.opts.Now()
	latency := now.Sub(s.lastBill)
	s.lastBill = now
	if s.responses == 0 && s.transcriptions == 0 {
		s.ttft = max(now.Sub(s.begin), time.Nanosecond)
	}
	// The transcription model is what answered: a key's model_max_budget entry of its own
	// is charged (the ledger names it too), not the realtime model's or group's.
	asr := s.g.transcriber(t, model)
	c := s.g.audioCost(s.p, asr, u)
	tokens := providers.RealtimeUsage{InputTokens: u.InputTokens, InputAudioTokens: u.InputAudioTokens, InputTextTokens: u.InputTokens - u.InputAudioTokens,
		OutputTokens: u.OutputTokens, OutputTextTokens: u.OutputTokens}
	s.usage = s.usage.Add(tokens)
	s.costs = addCosts(s.costs, c, s.responses == 0 && s.transcriptions == 0)
	s.transcriptions++
	s.mu.Unlock()
	s.g.account(ctx, s.p, asr, tokens.Tokens(), c, true, false, latency)
}

// transcriber is the target a realtime session of t is charged for a transcription of its
// input audio by model, the name the session gives it: model run by t's provider, priced
// as that provider prices it. An Azure OpenAI session names a deployment of its resource,
// priced by the base model configured for it (model_info.base_model): when t's own provider
// entry configures none, the deployment configured as another entry (LiteLLM gives a
// deployment with other litellm_params — an api_version, a key — an entry of its own) is
// the one charged, an entry of the same endpoint first, else the one entry that configures
// it; with none, the deployment is priced by its own name ("azure/{deployment}").
func (g *Gateway) transcriber(t target, model string) target {
	asr := target{name: t.provider + "/" + model, provider: t.provider, model: model, p: t.p}
	asr.group = asr.name
	az, ok := t.p.(*providers.Azure)
	lister, listed := g.opts.Providers.(interface{ Names() []string })
	if !ok || az.HasBaseModel(model) || !listed {
		return asr
	}
	var same, other []target
	for _, name := range lister.Names() {
		p, err := g.opts.Providers.Lookup(name)
		q, isAzure := p.(*providers.Azure)
		if err != nil || !isAzure || q == az || !q.HasBaseModel(model) {
			continue
		}
		c := target{name: name + "/" + model, provider: name, model: model, p: q}
		c.group = c.name
		if q.BaseURL() == az.BaseURL() {
			same = append(same, c)
		} else {
			other = append(other, c)
		}
	}
	switch {
	case len(same) > 0:
		return same[0]
	case len(other) == 1:
		return other[0]
	}
	return asr
}

// addCosts is the sum of a and b; the sum's price is known when both are (b's alone when
// first).
func addCosts(a, b Costs, first bool) Costs {
	known := b.PriceKnown && (first || a.PriceKnown)
	return Costs{InputTokensCost: a.InputTokensCost + b.InputTokensCost, OutputTokensCost: a.OutputTokensCost + b.OutputTokensCost,
		TotalTokensCost: a.TotalTokensCost + b.TotalTokensCost, SearchCost: a.SearchCost + b.SearchCost, PriceKnown: known}
}

// Usage is the usage the session's responses reported so far, summed, with its cost, and
// how many responses reported it.
func (s *RealtimeSession) Usage() (providers.RealtimeUsage, Costs, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usage, s.costs, s.responses
}

// End ends the session: err says why it did not end cleanly (nil: either side closed it
// normally; the context's error or one matching context.Canceled: the caller went away or
// the server shut it). The session is recorded once through the Observer with the usage of
// its responses summed and priced (operation OperationRealtime), and leaves its budget's
// spend gate. Only the first call counts.
func (s *RealtimeSession) End(ctx context.Context, err error) {
	s.once.Do(func() { s.end(ctx, err) })
}

func (s *RealtimeSession) end(ctx context.Context, err error) {
	g, p := s.g, s.p
	defer p.ended()
	if g.opts.Observer == nil {
		return
	}
	s.mu.Lock()
	t, u, costs, n, ttft := s.t, s.usage, s.costs, s.responses+s.transcriptions, s.ttft
	attempts := cloneAttempts(p.attempts)
	s.mu.Unlock()
	if n == 0 {
		costs = g.realtimeCost(p, t, providers.RealtimeUsage{})
		if s.transcription {
			costs = g.audioCost(p, t, providers.AudioUsage{})
		}
	}
	now := g.opts.Now()
	r := RequestRecord{Owner: p.scope.Owner, Tag: p.scope.Tag, Operation: OperationRealtime, Stream: true,
		Outcome: RequestOK, Provider: t.provider, Model: t.name, Requested: p.asked, Attempts: attempts,
		Start: p.start, Latency: now.Sub(p.start), TTFT: ttft, Err: err, Tags: p.req.Tags,
		Usage: usageOf(u.Tokens(), costs)}
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		r.Outcome = RequestCancelled
	case n > 0:
		r.Outcome = RequestStreamFailed
	default:
		r.Outcome = RequestFailed
	}
	g.observe(ctx, p, r)
}
