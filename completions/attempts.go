package completions

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/switchyard-ai/switchyard/providers"
)

// plan is one validated request on its way through the attempts.
type plan struct {
	// release counts the request out of its budget's spend gate when it ends (nil: not
	// gated); observe* call it.
	release func()
	// lease, for a request enterLeased admitted, holds the leases its answer's charge ends
	// (nil: none); perResponse says the request is a session billed per response (a
	// realtime session's), whose charges leave its leases to release.
	lease       *leaseHold
	perResponse bool

	scope Scope
	req   *Request
	// rt is the routing table the request started with (Gateway.SetRoutes may swap in
	// another meanwhile): its members' limits and timeouts hold for the whole request.
	rt *routeTable
	// asked is the model name a request other than chat named (a model group's or
	// "provider/model"): RequestRecord.ModelGroup.
	asked string
	// accounts are the budget accounts after the request's last charge
	// (RequestRecord.Accounts); charges of a hedge's attempts may race, hence atomic.
	accounts   atomic.Pointer[[]AccountState]
	start      time.Time
	targets    []target
	preq       providers.Request // Model is set per attempt
	maxRetries int
	timing     timing
	current    int // index in targets of the model being tried
	// members is how many of targets (the first ones) are the named model group's members,
	// or the models asked of a request with context window fallbacks (0: the request names
	// no group and has none; once switched, those tried); switched is the kind of
	// failure whose fallbacks replaced the members left and the group's Fallbacks
	// (switchFallbacks; KindUnknown: none did), and switchedEnd where those end in targets.
	members     int
	switched    providers.ErrorKind
	switchedEnd int
	calls       int // upstream calls made (MaxUpstreamAttempts)
	// failedCharge is what the failing attempt under way was charged (chargeOversized),
	// for run to put on its Attempt; nil: nothing.
	failedCharge *failedCharge
	losers       []part // hedged starts that lost, billed with the answer
	collected    bool   // a stream read whole for a non-streamed request (completeHedged)
	streamed     bool   // the models are called by stream (Stream, StreamN, completeHedged)
	// noQueue: the request does not queue for a slot in flight (MemberLimits.MaxParallel),
	// being a choice of StreamN, whose started siblings hold their slots until the caller
	// reads them, which it can only once every choice has started or failed.
	noQueue bool
	// held are the calls in flight counted against their models' MaxParallel (admit);
	// limitWait is the shortest wait for a model skipped at its limit (0: none was).
	held      []*memberUsage
	limitWait time.Duration
	// modelRefused is the first refusal of a model by its entry of the key's own Models
	// (skipModel): the request's error when no model is called (refusedByKey).
	modelRefused error
	// setAside are the models enterModel took out of targets at the rpm or tpm of the
	// key's own entry for them (not a spent budget): a request waiting for a slot goes
	// to one once the key's minute moves on (waitSlot), as to a model skipped before.
	setAside []target

	convID    string
	convNew   bool
	convTitle string
	msgID     string

	attempts []Attempt

	cache cachePlan // the response cache's part (responsecache.go)

	// mockN is how many of targets (the first ones, the models the request named) its
	// MockFailure fails (mock.go); mocked says its MockResponse answers it.
	mockN  int
	mocked bool

	// admitted is the request's deadline context its admission made, for its calls to
	// take over (requestdeadline.go); none once taken.
	admitted keptDeadline
}

// prepare validates req, checks the caller's budget, loads the conversation and orders the
// models. Its errors are *ValidationError, ErrModelNotAllowed, ErrNotFound or
// ErrBudgetExceeded (wrapped).
func (g *Gateway) prepare(ctx context.Context, scope Scope, req *Request) (*plan, error) {
	scope, err := g.withTagBudgets(ctx, scope, req.Tags)
	if err != nil {
		return nil, err
	}
	if err := g.checkMock(req); err != nil {
		return nil, err
	}
	p := &plan{scope: scope, req: req, start: scope.Received, rt: g.routes()}
	if p.start.IsZero() {
		p.start = g.opts.Now()
	}
	primary, fallback, err := g.admission(scope, req)
	if err != nil {
		return nil, err
	}
	// The pre_call guardrails, before anything is taken from the budget, looked up in the
	// cache or sent: a block calls no model; masked text is what the rest sees.
	if req, err = g.guardRequest(ctx, scope, req, primary); err != nil {
		return nil, err
	}
	p.req = req

	msgs := make([]providers.Message, 0, len(req.Messages))
	if req.ConversationID != "" {
		c, history := req.conv, req.history // loaded (and masked) by the pre_call guardrails
		if c == nil {
			if c, history, err = g.scopeConversation(ctx, scope, req.ConversationID); err != nil {
				return nil, err
			}
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
		reasoning := m.Reasoning
		if !providers.HasOpaque(reasoning) && req.ephemeral && m.Role == "assistant" && len(m.ToolCalls) > 0 {
			// The client dropped the reasoning it was answered with (thinking_blocks are not
			// in the OpenAI SDKs' types): the gateway kept it.
			if kept := g.reasoned.get(scope.Owner, m.ToolCalls[0].ID, g.opts.Now()); kept != nil {
				reasoning = kept
			}
		}
		msgs = append(msgs, providers.Message{Role: m.Role, Content: m.Text(), Parts: m.parts(), ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Name: m.Name,
			Reasoning: reasoning, AudioID: m.AudioID})
	}

	p.preq = providers.Request{Messages: msgs, Temperature: req.Temperature, MaxTokens: req.MaxTokens, Search: req.Search, SearchOptions: req.searchOptions, Thinking: req.Thinking,
		TopP: req.TopP, TopK: req.TopK, Stop: req.Stop, Tools: req.Tools, ToolChoice: req.ToolChoice, ParallelToolCalls: req.ParallelToolCalls,
		SingleToolCall: req.legacyFunctions || req.singleToolCall, ResponseFormat: req.ResponseFormat, OpenAIOptions: req.OpenAIOptions, PromptCache: req.promptCache,
		PromptCacheTTL: req.promptCacheTTL, PromptCacheTailTTL: req.promptCacheTailTTL, PromptCacheToolsTTL: req.promptCacheToolsTTL,
		SafetySettings: req.safetySettings, CodeExecution: req.codeExecution, URLContext: req.urlContext,
		Logprobs: req.Logprobs, TopLogprobs: req.TopLogprobs, Modalities: req.modalities, Audio: req.audio}
	p.timing = g.timingFor(p.start, scope, req)
	if req.MockResponse != nil {
		// No model is called: nothing is taken from the budget, nor cached (budgetUsable).
		if err := g.budgetUsable(ctx, scope); err != nil {
			return nil, err
		}
		p.mockAnswer(primary)
		t := p.targets[0]
		p.attempts = append(p.attempts, Attempt{Model: t.name, ModelGroup: t.group, Outcome: OutcomeOK, Mock: true}) // not Started: no call
		p.msgID = uuid.NewString()
		return p, nil
	}
	if p.cache.key = g.cacheKey(p, primary, fallback); p.cache.key != "" {
		if req.Cache != nil {
			p.cache.ctl, p.cache.bypass = *req.Cache, req.Cache.NoCache
		}
		g.lookupCache(ctx, p)
		g.lookupSemantic(ctx, p, primary, fallback)
		if p.cache.hit != nil {
			// No model is called: nothing is taken from the budget (budgetUsable).
			if err := g.budgetUsable(ctx, scope); err != nil {
				return nil, err
			}
			p.targets = []target{p.cache.hit.target()}
			p.msgID = uuid.NewString()
			return p, nil
		}
	}
	if b := scope.Budget; b != nil {
		left, err := g.enterBudget(ctx, p, b, req.choices > 1, &primary, &fallback)
		if err != nil {
			return nil, err
		}
		if left > 0 && req.choices > 1 {
			left = max(left/int64(req.choices), 1) // the choices share what is left
		}
		if left > 0 && (p.preq.MaxTokens == 0 || int64(p.preq.MaxTokens) > left) {
			p.preq.MaxTokens = int(min(left, math.MaxInt32))
			p.cache.capped = true // the answer may be cut short: not the request's answer
		}
	}

	if g.opts.Ranker != nil && len(primary) > 1 && (req.group == nil || req.group.Route) {
		tradeoff := ""
		if req.group != nil {
			tradeoff = req.group.Tradeoff
		}
		primary = g.rank(ctx, msgs, primary, tradeoff, req.Stream)
	}
	if req.group != nil && req.group.Shuffle {
		primary = g.shuffleGroup(primary, req.group)
	}
	if req.group != nil && req.group.Fastest {
		primary = g.latency.fastestFirst(primary, req.Stream)
	}
	if req.group != nil {
		g.log.DebugContext(ctx, "completions: model group", "group", req.groupName, "route", req.group.Route, "shuffle", req.group.Shuffle, "fastest", req.group.Fastest,
			"order", targetNames(primary))
	}
	// Models that cannot take the request (checkProviders) are recorded as skipped now and
	// left out, so that retries and breaker probes see only the models that can be called.
	unfit := func(t target) bool { return t.unfit != "" }
	if req.group != nil || req.windowSwitch {
		// The models asked, which a prompt too long for one of them leaves for the
		// context window fallbacks (switchFallbacks).
		p.members = len(primary) - countFunc(primary, unfit)
	}
	p.mockN = len(primary) - countFunc(primary, unfit)
	if !slices.ContainsFunc(primary, unfit) && !slices.ContainsFunc(fallback, unfit) {
		p.targets = append(primary, fallback...) // the usual case, without a copy
	} else {
		for _, ts := range [2][]target{primary, fallback} {
			for _, t := range ts {
				if unfit(t) {
					p.attempts = append(p.attempts, Attempt{Model: t.name, ModelGroup: t.group, Outcome: OutcomeSkipped, Kind: providers.KindBadRequest.String(),
						Error: "skipped: " + t.unfit})
					continue
				}
				p.targets = append(p.targets, t)
			}
		}
	}
	p.maxRetries = g.opts.DefaultMaxRetries
	if scope.NumRetries != nil {
		p.maxRetries = *scope.NumRetries
	}
	if req.MaxRetries != nil {
		p.maxRetries = *req.MaxRetries
	}
	p.msgID = uuid.NewString()
	return p, nil
}

// admission validates req and resolves its models (an unknown provider or model is a
// *ValidationError), and refuses (ErrModelNotAllowed) a model scope's budget does not allow:
// the checks of req alone that prepare makes before it reads or takes anything.
func (g *Gateway) admission(scope Scope, req *Request) (primary, fallback []target, err error) {
	req.userAgent, req.inheritedTags = scope.UserAgent, scope.InheritedTags
	g.addScopeFallbacks(scope, req)
	primary, fallback, err = g.validate(req)
	if err != nil {
		return nil, nil, err
	}
	if b := scope.Budget; b != nil {
		asked := slices.Concat(req.Models, req.FallbackModels, req.scopeFallbacks, req.scopeWindow) // the scope's were allowed as asked
		if err := g.budgetAllows(b, asked, primary, fallback, req.windowFallbacks, req.policyFallbacks); err != nil {
			return nil, nil, err
		}
	}
	return primary, fallback, nil
}

// admissible returns the error Complete would refuse req under scope with before calling
// any model (admission; the key's own per-model limits refusing every model the request
// may go to, enterModel's *ModelBudgetError or *ModelRateError; then budgetUsable: a
// budget, or a request tag's account, whose calls, tokens or dollars are used up, or
// whose tokens per minute are), taking nothing from the budget and counting nothing: a
// request to be answered later (StartBackgroundResponse) is refused now as Complete would
// refuse it.
func (g *Gateway) admissible(ctx context.Context, scope Scope, req *Request) error {
	primary, fallback, err := g.admission(scope, req)
	if err != nil {
		return err
	}
	if _, err := g.guardrailsFor(scope, req, GuardrailPreCall); err != nil { // a name nothing configures
		return err
	}
	scope, err = g.withTagBudgets(ctx, scope, req.Tags) // as prepare: the request's tags' accounts too
	if err != nil {
		return err
	}
	if b := scope.Budget; b != nil {
		// A scratch plan: enterModel only reads the key's entries and records on it.
		p := &plan{scope: scope, req: req, rt: g.routes()}
		if err := g.enterModel(ctx, p, b, &primary, &fallback); err != nil {
			return err
		}
	}
	return g.budgetUsable(ctx, scope)
}

// budgetAllows refuses (ErrModelNotAllowed) the first model of lists that b does not
// allow: the models as resolved, a bare name's provider/model, a model group's members.
// The refusal names the model of asked (the names the request sent) it was resolved
// from, when that is another name (a model group, a bare name): the caller knows the
// name it sent, not the group's provider/model members. Under Options.ListConfigured a
// name of asked is refused unless a name of b's grants it (ownGrant: not a group's
// members' names through the group, nor a group through its members), as LiteLLM's proxy
// checks the name asked.
func (g *Gateway) budgetAllows(b *Budget, asked []string, lists ...[]target) error {
	for _, a := range asked {
		// Under a LiteLLM config the name asked is granted by a name of the key's (ownGrant).
		if g.opts.ListConfigured && !g.budgetAllowsName(b, a) {
			return fmt.Errorf("%w: %s", ErrModelNotAllowed, a)
		}
	}
	for _, ts := range lists {
		for _, t := range ts {
			if !b.allows(t.name, g.allowedAs) && !slices.ContainsFunc(asked, func(a string) bool {
				// A pattern of the key's ("my-ft-*") allows the name asked it stands for.
				return (a == t.name || slices.Contains(g.allowedAs(a), t.name)) && b.allowsAsked(a, t.name, g.allowedAs)
			}) {
				for _, a := range asked {
					if a != t.name && slices.Contains(g.allowedAs(a), t.name) {
						return fmt.Errorf("%w: %s (its deployment %s)", ErrModelNotAllowed, a, t.name)
					}
				}
				return fmt.Errorf("%w: %s", ErrModelNotAllowed, t.name)
			}
		}
	}
	return nil
}

// enterBudget admits p's request into b's spend gate (admitSpend) and takes its call;
// p.release then counts it out of the gate when it ends. left is the tokens b has left
// (0: no token bound). lists are the models the request may go to, from which those the
// key's per-model limits refuse are taken out (enterModel).
func (g *Gateway) enterBudget(ctx context.Context, p *plan, b *Budget, choice bool, lists ...*[]target) (left int64, err error) {
	if err := g.enterModel(ctx, p, b, lists...); err != nil {
		return 0, err // the model's own bounds: nothing taken from the account
	}
	if err := g.pending.admits(ctx, b); err != nil {
		g.alertRefusal(ctx, p.scope, b, err)
		return 0, err // spent once its charges the store has yet to take are counted
	}
	if leased, st := g.spend.leasedAccounts(b); leased != nil {
		// The leases of the requests in flight go in the transaction that reserves the call.
		actx, cancel := p.withDeadline(ctx)
		left, hold, taken, err := g.spend.enterLeased(actx, b, leased, st, choice)
		switch {
		case err != nil && ctx.Err() == nil && deadlineHit(actx):
			cancel()
			return 0, fmt.Errorf("%w at this request's deadline (the budget's bound is kept by the cost of their answers): retry", ErrBudgetBusy)
		case err != nil:
			cancel()
			if taken {
				g.alertRefusal(ctx, p.scope, b, err)
			}
			return 0, err
		}
		p.keepDeadline(ctx, actx, cancel) // for the request's calls (withDeadline)
		p.lease, p.release = hold, hold.release
		return left, nil
	}
	release, err := g.admitSpend(ctx, p, b, choice)
	if err != nil {
		return 0, err
	}
	if left, err = b.reserveCall(ctx); err != nil {
		release()
		p.dropDeadline()
		g.alertRefusal(ctx, p.scope, b, err)
		return 0, err
	}
	p.release = release
	return left, nil
}

// budgetUsable checks scope's budget (nil: none) without taking from it: its bounds and its
// tokens per minute. A request answered from the response cache calls no model, so nothing
// is taken from b, but a spent key gets no answer, as LiteLLM checks a key's limits before
// its cache; a background request is checked so when it is created (admissible).
func (g *Gateway) budgetUsable(ctx context.Context, scope Scope) error {
	b := scope.Budget
	if b == nil {
		return nil
	}
	if err := b.usable(ctx); err != nil {
		g.alertRefusal(ctx, scope, b, err)
		return err
	}
	if err := g.pending.admits(ctx, b); err != nil {
		g.alertRefusal(ctx, scope, b, err)
		return err
	}
	return g.spend.rate(b, time.Now())
}

// admitSpend admits p's request into its budget's spend gate, waiting at most until the
// request's deadline: a request that could not start before it is refused without taking a
// call (ErrBudgetBusy, a 429 the SDKs retry), rather than started with no time left. The
// deadline's context of an admitted request is kept for its calls (keepDeadline).
func (g *Gateway) admitSpend(ctx context.Context, p *plan, b *Budget, choice bool) (release func(), err error) {
	actx, cancel := p.withDeadline(ctx)
	release, err = g.spend.admit(actx, b, choice)
	if err != nil {
		cancel()
		if ctx.Err() == nil && deadlineHit(actx) {
			return nil, fmt.Errorf("%w at this request's deadline (the budget's bound is kept by the cost of their answers): retry", ErrBudgetBusy)
		}
		return nil, err
	}
	p.keepDeadline(ctx, actx, cancel)
	return release, nil
}

// keepReasoning keeps the signed reasoning of a stateless answer with tool calls for the
// tool loop's next request (see reasoningCache).
func (g *Gateway) keepReasoning(p *plan, resp *Response) {
	if p.req.ephemeral && len(resp.ToolCalls) > 0 && len(resp.Reasoning) > 0 {
		g.reasoned.put(p.scope.Owner, resp.ToolCalls[0].ID, resp.Reasoning, g.opts.Now())
	}
}

// unavailable reports whether a failure of kind means the model could not serve the
// request now (timeout, rate limit, overload, quota, a broken connection or stream), as
// latency routing counts it, rather than that the request was wrong for it; an
// unclassified failure is not counted (as the circuit breaker does not).
func unavailable(kind providers.ErrorKind) bool {
	return kind != providers.KindUnknown && kind.Retryable() || kind == providers.KindQuotaExceeded
}

// hidesReasoning reports whether the request's answer leaves reasoning out: a request that
// asked for none (no Thinking), unless its surface shows reasoning unasked
// (Request.unaskedReasoning) — so reasoning a model sends unasked (DeepSeek's, vLLM's) is
// then no fragment of its answer, and a failure before its text still falls over silently.
func (p *plan) hidesReasoning() bool { return p.req.Thinking == nil && !p.req.unaskedReasoning }

// rank asks the Ranker to order ts; a failing or inconsistent ranking keeps the given order.
func (g *Gateway) rank(ctx context.Context, msgs []providers.Message, ts []target, tradeoff string, stream bool) []target {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.name
	}
	var ranked []string
	var err error
	if lr, ok := g.opts.Ranker.(LatencyRanker); ok && tradeoff == "latency" {
		ranked, err = lr.RankFastest(ctx, msgs, slices.Clone(names), g.latency.latencies(names, stream))
	} else if tr, ok := g.opts.Ranker.(TradeoffRanker); ok && tradeoff != "" {
		ranked, err = tr.RankTradeoff(ctx, msgs, slices.Clone(names), tradeoff)
	} else {
		ranked, err = g.opts.Ranker.Rank(ctx, msgs, slices.Clone(names))
	}
	if err != nil {
		g.log.WarnContext(ctx, "completions: ranker failed; keeping the given order", "err", err)
		return ts
	}
	if len(ranked) != len(ts) {
		g.log.WarnContext(ctx, "completions: ranker returned a different set of models; keeping the given order")
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
			g.log.WarnContext(ctx, "completions: ranker returned a different set of models; keeping the given order")
			return ts
		}
	}
	return out
}

// traceAttempt is the context an upstream call is made in and the span id its attempt is
// recorded with (Options.TraceAttempt); ctx and no id without a tracer.
func (g *Gateway) traceAttempt(ctx context.Context) (context.Context, [8]byte) {
	if g.opts.TraceAttempt == nil {
		return ctx, [8]byte{}
	}
	return g.opts.TraceAttempt(ctx)
}

// cutAttempt is the record of an attempt of target t, begun at begin and lasting lat ms,
// whose call was cut because its caller went away (ctx ended, not at the request's
// deadline): outcome cancelled, Kind "client_gone" — or "cut" when the context ended with
// a cause of its own (the server's shutdown cutting its requests) — as a stream its caller
// left is recorded.
func cutAttempt(ctx context.Context, t target, begin time.Time, lat int64, maxTokens int, span [8]byte) Attempt {
	kind, err := "client_gone", ctx.Err()
	if cause := serverCut(ctx); cause != nil { // not a background response's cancel: the caller's doing
		kind, err = "cut", cause
	}
	return Attempt{Model: t.name, ModelGroup: t.group, Outcome: OutcomeCancelled, Kind: kind, Error: err.Error(), Err: err,
		LatencyMS: lat, Started: begin, MaxTokens: maxTokens, SpanID: span}
}

// run tries the plan's targets in order, retrying retryable failures with backoff, until
// try succeeds. ctx must carry the request's deadline (plan.withDeadline). It returns the
// caller's context error when the caller went away, *ContentFilterError when a content
// filter answered (unless the request lets it fall over), and *AllFailedError when every
// attempt failed or the request ran out of time or of attempts (MaxUpstreamAttempts).
//
// Which failures are retried on the same model: retryable kinds up to maxRetries, except a
// timeout (a silent model goes to the next one at once) and a 429 without Retry-After when
// another model remains (no burst of retries on the operator's key); a retry is skipped
// when its wait would leave the remaining models less than their first-token timeout each,
// or when it would take a call that an untried model needs (MaxUpstreamAttempts).
// Models whose circuit breaker is open are skipped (recorded as such). A member of the
// named group that fails with a prompt too long or a content filter's refusal, when the
// group has fallbacks for that kind, puts those in place of the members after it and of
// its plain fallbacks (switchFallbacks).
func (g *Gateway) run(ctx context.Context, p *plan, try func(ctx context.Context, t target) error) error {
	for i := 0; i < len(p.targets); i++ { // switchFallbacks may change what follows i
		t := p.targets[i]
		p.current = i
		for retry := 0; ; retry++ {
			if err := ctx.Err(); err != nil {
				if deadlineHit(ctx) {
					return p.outOfTime(t)
				}
				return err
			}
			if retry == 0 && p.mocks(i) {
				if err := g.mockFail(ctx, p, i); err != nil { // no call: the next model, or the fallbacks
					if deadlineHit(ctx) {
						return p.allFailed() // a mock timeout waited until the deadline, as a silent model would
					}
					return err
				}
				break
			}
			if p.calls >= MaxUpstreamAttempts {
				return p.allFailed()
			}
			// Admitted only when its call is made: admit counts it against the model's
			// limits (rpm, a slot in flight).
			if retry == 0 {
				ok, err := g.admit(ctx, p, i, !p.noQueue)
				if err != nil {
					return err // the caller went away while the request waited for a slot
				}
				if !ok {
					if deadlineHit(ctx) {
						return p.allFailed() // it waited for a slot until the deadline
					}
					break // skipped (recorded): the next model
				}
				t = p.targets[i] // a slot may have freed on a later model first (waitSlot)
			}
			p.calls++
			begin := g.opts.Now()
			if u := p.rt.limits.of(t.name); u != nil && retry > 0 {
				u.again(begin)
				g.shareCall(u, begin)
			}
			actx, span := g.traceAttempt(ctx)
			p.failedCharge = nil
			err := try(actx, t)
			lat := g.opts.Now().Sub(begin).Milliseconds()
			if err == nil {
				g.breakers.record(t.name, nil, g.opts.Now(), p.timing.tight)
				p.attempts = append(p.attempts, Attempt{Model: t.name, ModelGroup: t.group, Outcome: OutcomeOK, LatencyMS: lat, Started: begin, MaxTokens: g.sentMaxTokens(p, t), SpanID: span})
				return nil
			}
			if ctx.Err() != nil && !deadlineHit(ctx) {
				// The caller went away: nothing to learn about the model, but the call was
				// made, so it is recorded (cancelled), and its trace has the attempt's span
				// its HTTP span was started under.
				p.attempts = append(p.attempts, cutAttempt(ctx, t, begin, lat, g.sentMaxTokens(p, t), span))
				return ctx.Err()
			}
			if deadlineHit(ctx) && providers.KindOf(err) != providers.KindTimeout {
				err = timeoutError(t, "answer before the request deadline", p.timing.deadline.Sub(p.start))
			}
			g.breakers.record(t.name, err, g.opts.Now(), p.timing.tight)
			kind := providers.KindOf(err)
			if unavailable(kind) && !deadlineHit(ctx) && !p.timing.tight {
				// Slow or unavailable is what latency routing avoids: as slow as the wait, at
				// least as the first-token timeout (an upstream's own timeout, a 429, comes
				// back at once). Not when the request's own deadline or tighter limits cut it:
				// that says nothing of the model, as for the circuit breaker.
				g.latency.timedOut(t.name, max(g.opts.Now().Sub(begin), p.timing.firstToken))
			}
			var retryAfter time.Duration
			var pe *providers.Error
			if errors.As(err, &pe) {
				retryAfter = pe.RetryAfter
			}
			p.attempts = append(p.attempts, Attempt{Model: t.name, ModelGroup: t.group, Outcome: OutcomeError, Kind: kind.String(), Error: err.Error(), Err: err, LatencyMS: lat, Started: begin, MaxTokens: g.sentMaxTokens(p, t), SpanID: span})
			if c := p.failedCharge; c != nil {
				a := &p.attempts[len(p.attempts)-1]
				a.Usage, a.Estimated, a.AnswerBytes, a.charged = &c.usage, c.estimated, c.answerBytes, true
				p.failedCharge = nil
			}
			g.log.DebugContext(ctx, "completions: attempt failed", "model", t.name, "retry", retry, "kind", kind.String(), "err", err)
			if kind == providers.KindContentFilter && !p.filterFallsOver(i) {
				// A policy decision: asking the next model would override it.
				return g.contentFiltered(ctx, p, t, err, time.Duration(lat)*time.Millisecond)
			}
			if deadlineHit(ctx) {
				return p.allFailed()
			}
			d, again := g.retryWait(ctx, p, i, retry, kind, retryAfter)
			if !again {
				p.drop(t.name) // its calls are over: its slot in flight is free
				g.switchFallbacks(ctx, p, i, kind)
				break
			}
			if err := g.opts.Sleep(ctx, d); err != nil {
				if deadlineHit(ctx) {
					return p.allFailed()
				}
				return err
			}
		}
	}
	if !p.req.FallbackOnContentFilter {
		// A refusal let through for the group's content policy fallbacks (filterFallsOver)
		// stands when no model after it answered or failed otherwise.
		for k := len(p.attempts) - 1; k >= 0; k-- {
			a := p.attempts[k]
			if a.Outcome != OutcomeError {
				continue
			}
			if a.Kind == providers.KindContentFilter.String() && a.Err != nil && !a.Mock {
				for _, t := range p.targets {
					if t.name == a.Model {
						return g.contentFiltered(ctx, p, t, a.Err, time.Duration(a.LatencyMS)*time.Millisecond)
					}
				}
			}
			break
		}
	}
	return p.allFailed()
}

// contentFiltered ends a request that target t's content filter blocked, t's failed call
// being the last attempt: the call is billed (the usage the upstream reported, else an
// estimate of the prompt) to the budget and the ledger, and the error carries that usage.
func (g *Gateway) contentFiltered(ctx context.Context, p *plan, t target, err error, latency time.Duration) *ContentFilterError {
	msg := err.Error()
	var u providers.Usage
	var pe *providers.Error
	if errors.As(err, &pe) {
		if pe.Message != "" {
			msg = pe.Message
		}
		if pe.Usage != nil {
			u = *pe.Usage
		}
	}
	sent := p.preq
	sent.Model = t.model
	u, estimated := measured(t.name, u, &sent, nil)
	us := usageOf(u, g.costsAt(p, t, u))
	if n := len(p.attempts); n > 0 {
		p.attempts[n-1].Usage, p.attempts[n-1].Estimated = &us, estimated
	}
	g.account(ctx, p, t, u, us.Costs, false, estimated, latency)
	return &ContentFilterError{Model: t.name, Message: msg, Attempts: slices.Clone(p.attempts),
		ResponseMessageID: p.msgID, Usage: us, UsageEstimated: estimated}
}

// failedCharge is what a failed attempt was charged: its usage with costs, estimated
// when counted locally, and the size of the answer refused.
type failedCharge struct {
	usage       Usage
	estimated   bool
	answerBytes int64
}

// chargeOversized charges t's failed call of p, begun at begin, when err refused its
// answer as larger than the cap (providers.ErrResponseTooLarge): the upstream made that
// answer and bills it, though none of it is delivered. The charge is the usage the error
// carries, else prompt (the request's input counted locally, estimated), priced by price,
// to the budget and the ledger as a part (not the answer); run puts it, with the bytes
// known of the answer, on the attempt, and a request that then fails records it as its
// usage.
func (g *Gateway) chargeOversized(ctx context.Context, p *plan, t target, err error, begin time.Time,
	prompt func() providers.Usage, price func(providers.Usage) Costs) {
	g.chargeOversizedOp(ctx, p, t, err, begin, func(pe *providers.Error) (providers.Usage, Costs, bool) {
		u, estimated := providers.Usage{}, true
		if pe.Usage != nil {
			u, estimated = *pe.Usage, pe.UsageEstimated
		} else {
			u = prompt()
		}
		return u, price(u), estimated
	})
}

// chargeOversizedOp is chargeOversized for an operation priced otherwise than by tokens
// (rerank, images, moderation, transcriptions): charge says what the call is charged —
// the tokens it counts toward the budget's and the model's token bounds, its cost, and
// whether that is an estimate — from pe, the refusal (the usage it carries when the
// answer's was read, else the operation's own estimate of the call).
func (g *Gateway) chargeOversizedOp(ctx context.Context, p *plan, t target, err error, begin time.Time,
	charge func(pe *providers.Error) (u providers.Usage, c Costs, estimated bool)) {
	var pe *providers.Error
	if !errors.Is(err, providers.ErrResponseTooLarge) || !errors.As(err, &pe) {
		return
	}
	u, costs, estimated := charge(pe)
	us := g.chargeFailedAttempt(ctx, p, t, u, costs, estimated, begin)
	p.failedCharge.answerBytes = pe.AnswerBytes
	g.log.WarnContext(ctx, "completions: the upstream's answer was over the size cap; charged its call all the same",
		"model", t.name, "answer_bytes", pe.AnswerBytes, "prompt_tokens", u.PromptTokens, "cost_usd", us.Costs.TotalTokensCost, "estimated", estimated)
}

// chargeFailedAttempt charges t's call of p, begun at begin, that the upstream billed
// though the attempt failed (an answer over the size cap, a ranking refused, an answer
// cut after part of it): u priced at c (estimated: counted locally) to the budget and the
// ledger as a part, not the answer; run puts it on the attempt, and a request that then
// fails records it as its usage (failedAttemptsUsage). It returns the usage charged.
func (g *Gateway) chargeFailedAttempt(ctx context.Context, p *plan, t target, u providers.Usage, c Costs, estimated bool, begin time.Time) Usage {
	us := usageOf(u, c)
	g.account(ctx, p, t, u, us.Costs, false, estimated, g.opts.Now().Sub(begin))
	p.failedCharge = &failedCharge{usage: us, estimated: estimated}
	return us
}

// failedAttemptsUsage is the sum of what p's failed attempts were charged
// (chargeFailedAttempt) and whether any of it was estimated: the usage of a request that
// then failed.
func failedAttemptsUsage(attempts []Attempt) (Usage, bool) {
	var sum Usage
	estimated := false
	for _, a := range attempts {
		if a.Outcome == OutcomeError && a.Usage != nil && a.charged {
			sum = addUsage(sum, *a.Usage)
			estimated = estimated || a.Estimated
		}
	}
	return sum, estimated
}

// rateLimitedBefore reports whether model had a rate-limited attempt before the last one.
func rateLimitedBefore(attempts []Attempt, model string) bool {
	n := 0
	for _, a := range attempts {
		if a.Model == model && a.Kind == providers.KindRateLimited.String() {
			n++
		}
	}
	return n > 1
}

// retryWait decides whether target i is tried again after a failure of kind, and after
// how long.
func (g *Gateway) retryWait(ctx context.Context, p *plan, i, retry int, kind providers.ErrorKind, retryAfter time.Duration) (time.Duration, bool) {
	last := i == len(p.targets)-1
	switch {
	case !kind.Retryable() || retry >= p.maxRetries:
		return 0, false
	case kind == providers.KindTimeout && !last:
		return 0, false // silent or stalled: the next model is the better bet
	case kind == providers.KindRateLimited && retryAfter == 0 && !last:
		return 0, false // no burst of retries into the operator's rate limit
	case kind == providers.KindRateLimited && rateLimitedBefore(p.attempts, p.targets[i].name):
		return 0, false // a 429 is retried once per model at most, never as a series
	case g.breakers.open(p.targets[i].name, g.opts.Now()):
		return 0, false // this model's breaker just opened
	case p.rt.limits.rateFull(p.targets[i].name, g.opts.Now()):
		return 0, false // this model reached its rpm or tpm meanwhile (its slot in flight is this request's)
	case MaxUpstreamAttempts-p.calls <= len(p.targets)-1-i:
		return 0, false // the calls left are the untried models' (fallbacks get their turn)
	}
	d, ok := g.opts.Backoff.delay(retry, retryAfter)
	if !ok {
		return 0, false // Retry-After longer than we honour: the next model is a better bet
	}
	// The retry itself and every remaining model keep at least a first-token timeout (each
	// model's own, leastTime); a caller's own deadline counts as well as the request's.
	need := d
	for _, t := range p.targets[i:] {
		need += g.leastTime(p, t.name)
	}
	if dl, ok := ctx.Deadline(); ok && g.opts.Now().Add(need).After(dl) {
		return 0, false
	}
	return d, true
}

func targetNames(ts []target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.name
	}
	return out
}

// admit decides whether target i is called, p.targets[i:] being the models left. A
// model at its rpm or tpm (MemberLimits) is skipped (recorded as a skipped attempt); one
// at its max_parallel is skipped likewise while a later model can be called at once
// (laterCallable: one the key's own per-model limits refuse cannot), and otherwise, when
// queue is set and the key's own limits of it let it be called, the request waits for a
// slot (waitSlot): the model whose slot frees first is moved to index i and admitted. An admitted model's call is counted
// against its limits and holds a slot in flight until its attempts end (plan.drop) or
// the request does. Its breaker may skip it (recorded likewise) while a later model's
// breaker is not open and that model is not at a limit; when every remaining model is
// open (or at a limit) this one is tried anyway, as a probe. A model the key's own
// per-model limits refuse (admitModel) is skipped, recorded likewise; one admitted is
// counted in its entry's requests of the minute (countModel). The error is ctx's when the
// caller went away while the request waited; when the request's deadline passed the
// waited-for models are recorded as skipped at their limit.
func (g *Gateway) admit(ctx context.Context, p *plan, i int, queue bool) (bool, error) {
	now := g.opts.Now()
	t := p.targets[i]
	u := p.rt.limits.of(t.name)
	if u != nil {
		if wait, why, at := u.take(now, nil); at != limitNone {
			if !queue || at != limitParallel || g.laterCallable(ctx, p, i, now) {
				p.skipLimited(t.name, why, wait)
				return false, nil
			}
			if err := g.admitModel(ctx, p, t, now); err != nil {
				p.skipModel(t, err) // no wait for a slot the key's own limits would refuse
				return false, nil
			}
			ok, err := g.waitSlot(ctx, p, i)
			if !ok || err != nil {
				return false, err
			}
			t = p.targets[i]
			u = p.rt.limits.of(t.name)
			now = g.opts.Now()
		}
	}
	if err := g.admitModel(ctx, p, t, now); err != nil {
		// The key's limits of the model: the next model (a fallback) is tried.
		if u != nil {
			u.untake(now)
		}
		p.skipModel(t, err)
		return false, nil
	}
	if g.breakers.allow(t.name, now) {
		p.hold(u)
		g.shareCall(u, now)
		g.countModel(p, t, now)
		return true, nil
	}
	if g.laterCallable(ctx, p, i, now) {
		if u != nil {
			u.untake(now)
		}
		p.attempts = append(p.attempts, Attempt{Model: t.name, ModelGroup: t.group, Outcome: OutcomeSkipped, Kind: "circuit_open",
			Error: "skipped: the circuit breaker is open after repeated failures of this model"})
		return false, nil
	}
	p.hold(u)
	g.shareCall(u, now)
	g.countModel(p, t, now)
	return true, nil
}

// laterCallable reports whether a model after target i can be called at now: its breaker
// is not open, it is at none of its limits, and the key's own limits of it (its entry of
// the key's Models: budget, rpm, tpm; admitModel) let it be called, so that target i is
// not passed over for a model the key would refuse. Model access needs no check here:
// every model the request may go to was checked at admission (budgetAllows).
func (g *Gateway) laterCallable(ctx context.Context, p *plan, i int, now time.Time) bool {
	for _, later := range p.targets[i+1:] {
		if !g.breakers.open(later.name, now) && !p.rt.limits.full(later.name, now) && g.admitModel(ctx, p, later, now) == nil {
			return true
		}
	}
	return false
}

// waitSlot queues the request for a slot in flight on the models left from target i on
// (p.targets[i:]) that are at their max_parallel only (not at their rpm or tpm, breaker
// not open), no model left being callable at once, as LiteLLM's router waits on each
// deployment's semaphore. It waits without spinning (a member wakes the first requests
// queued on it when a call of its ends: releases, leave), first come first served on
// each member, until one of them admits it (take, counted in flight). The models skipped
// meanwhile are not forgotten: one at its rpm or tpm, or whose breaker is open, from
// target i on or skipped so before it (never called: skippedBefore), or taken out at the
// key's own per-model rpm or tpm when the request began (plan.setAside), ends the wait when
// it may be callable again (a timer on Options.Sleep, set to the soonest such moment), and
// the request re-plans then, so it goes to whichever model is callable first; a timer
// that fires before that moment has come on Options.Now does not re-plan and is not set
// again until a slot wakes the request (awaitSlotOrTimer), so a Sleep that returns at
// once never makes the wait a busy loop. The model admitted is moved to index i, the
// others keeping their order around it, and ok is true. A model that meanwhile reached
// its rpm or tpm, or whose breaker opened, is no longer waited for by slot, nor one the
// key's own per-model limits refuse (admitModel: its minute's end sets the timer as a
// rate does, a spent budget not); when target i itself comes to be refused so, it is
// recorded as skipped by them (skipModel, ok false); when no model
// is left to wait for by slot, target i is recorded as skipped at its limit (ok false:
// the request goes on to the next model).
// When ctx ends the request leaves every queue: the error is ctx's when the caller went
// away; at the request's deadline (the bound of the wait) the models waited for are
// recorded as skipped at their limit and ok is false.
func (g *Gateway) waitSlot(ctx context.Context, p *plan, i int) (ok bool, err error) {
	w := newSlotWaiter()
	var queued []*memberUsage // the members w is queued on, in order
	unqueue := func(u *memberUsage) {
		if j := slices.Index(queued, u); j >= 0 {
			u.leave(w)
			queued = slices.Delete(queued, j, j+1)
		}
	}
	defer func() {
		for _, u := range queued {
			u.leave(w)
		}
	}()
	stopTimer := func() {}
	defer func() { stopTimer() }()
	earlier := p.skippedBefore(i)
	began := g.opts.Now()
	logged := false
	for {
		now := g.opts.Now()
		var soonest time.Duration // until a model not waited for by slot may be callable (0: none)
		sooner := func(d time.Duration) {
			if d > 0 && (soonest == 0 || d < soonest) {
				soonest = d
			}
		}
		candidates := append(slices.Clone(earlier), indexesFrom(i, len(p.targets))...)
		for j := range p.setAside {
			candidates = append(candidates, asideRef(j))
		}
		for _, k := range candidates {
			t := p.candidate(k)
			name := t.name
			u := p.rt.limits.of(name)
			if err := g.admitModel(ctx, p, t, now); err != nil {
				// The key's own limits of it refuse it: no slot will do until its minute
				// moves on (a spent budget stays spent for the wait).
				if u != nil {
					unqueue(u)
				}
				if mr := (*ModelRateError)(nil); errors.As(err, &mr) {
					sooner(mr.RetryAfter)
				}
				continue
			}
			if d := g.breakers.reopensIn(name, now); d > 0 {
				if u != nil {
					unqueue(u)
				}
				sooner(d) // it may still be at a limit then: re-planned when it comes
				continue
			}
			if u == nil { // no limits, its breaker (open when it was passed over) closed since
				g.slotTaken(ctx, p, k, i, began)
				return true, nil
			}
			wait, _, at := u.take(now, w)
			switch at {
			case limitNone:
				if j := slices.Index(queued, u); j >= 0 {
					queued = slices.Delete(queued, j, j+1) // take took w out of u's queue
				}
				g.slotTaken(ctx, p, k, i, began)
				return true, nil
			case limitRate:
				unqueue(u) // no slot will do: its rpm or tpm holds it
				sooner(wait)
			case limitParallel:
				if !slices.Contains(queued, u) {
					u.queue(w) // pokes w when a slot is free for it already
					queued = append(queued, u)
				}
			}
		}
		if len(queued) == 0 {
			t := p.targets[i]
			if err := g.admitModel(ctx, p, t, now); err != nil {
				p.skipModel(t, err) // the key's own limits of it came to refuse it while it waited
				return false, nil
			}
			u := p.rt.limits.of(t.name)
			u.mu.Lock()
			wait, why, at := u.atLimit(now, nil)
			u.mu.Unlock()
			if at == limitNone { // its breaker opened while the request waited
				p.attempts = append(p.attempts, Attempt{Model: t.name, ModelGroup: t.group, Outcome: OutcomeSkipped, Kind: "circuit_open",
					Error: "skipped: the circuit breaker is open after repeated failures of this model"})
				return false, nil
			}
			p.skipLimited(t.name, why, wait)
			return false, nil
		}
		if !logged {
			g.log.DebugContext(ctx, "completions: every model left is at its max_parallel; waiting for a slot", "models", len(queued), "replan_in", soonest)
			logged = true
		}
		stopTimer()
		stopTimer = func() {}
		var fired chan struct{} // the timer's, this pass only (nil: no timer)
		var due time.Time       // the moment it is for, on Options.Now
		if soonest > 0 {
			tctx, cancel := context.WithCancel(ctx)
			stopTimer = cancel
			fired, due = make(chan struct{}, 1), now.Add(soonest)
			go func() {
				if g.opts.Sleep(tctx, soonest) == nil {
					fired <- struct{}{} // a skipped model may be callable
				}
			}()
		}
		if err := g.awaitSlotOrTimer(ctx, w, fired, due); err != nil {
			if !deadlineHit(ctx) {
				return false, err
			}
			for _, u := range queued {
				p.skipLimited(u.model, fmt.Sprintf("max_parallel %d calls in flight until the request deadline", u.lim.MaxParallel), time.Second)
			}
			return false, nil
		}
	}
}

// awaitSlotOrTimer is waitSlot's wait between two passes: it returns nil when w is poked
// (a slot may be free for it) or when the re-plan timer fires (on fired) once Options.Now
// has reached due, the moment the timer was set for, and ctx's error when ctx ends. A
// timer that fires before due on Options.Now (a Sleep that returns at once, as one
// disabling backoff does, on a clock that has not moved) is let go: re-planning then
// would find every skipped model as it was and set the same timer again, a busy loop,
// so the request waits on for a slot or ctx's end, setting no new timer until a poke
// makes it re-plan.
func (g *Gateway) awaitSlotOrTimer(ctx context.Context, w *slotWaiter, fired <-chan struct{}, due time.Time) error {
	for {
		select {
		case <-w.poke:
			return nil
		case <-fired:
			if !g.opts.Now().Before(due) {
				return nil // a skipped model may be callable: re-plan
			}
			fired = nil // early on Options.Now: no re-plan, and no timer again
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// slotTaken ends waitSlot with candidate k admitted (counted against its limits, if
// any): it is moved to index i (a model set aside, asideRef, is put back in there).
func (g *Gateway) slotTaken(ctx context.Context, p *plan, k, i int, began time.Time) {
	g.log.DebugContext(ctx, "completions: a model is callable", "model", p.candidate(k).name, "waited", g.opts.Now().Sub(began))
	if k < 0 {
		j := -k - 1
		t := p.setAside[j]
		p.setAside = slices.Delete(slices.Clip(p.setAside), j, j+1)
		p.insertAt(t, i)
		return
	}
	p.moveTo(k, i)
}

// asideRef is waitSlot's reference to p.setAside[j] among its candidates, which are
// otherwise indexes of p.targets.
func asideRef(j int) int { return -j - 1 }

// candidate is the target a waitSlot candidate k refers to: p.targets[k], or a model set
// aside (asideRef).
func (p *plan) candidate(k int) target {
	if k < 0 {
		return p.setAside[-k-1]
	}
	return p.targets[k]
}

// indexesFrom is from, from+1, ..., to-1.
func indexesFrom(from, to int) []int {
	out := make([]int, 0, max(to-from, 0))
	for k := from; k < to; k++ {
		out = append(out, k)
	}
	return out
}

// skippedBefore are the indexes of the targets before i that were only skipped, at a
// limit (MemberLimits), at the rpm or tpm of the key's own entry for them (Models: its
// minute moves on, as a member's does) or with their breaker open, never called: models
// a request waiting for a slot may still go to once they are callable (waitSlot). One
// skipped for a spent per-model budget is not: it stays spent for the wait.
func (p *plan) skippedBefore(i int) []int {
	var out []int
	for k, t := range p.targets[:i] {
		skipped := false
		for _, a := range p.attempts {
			if a.Model != t.name {
				continue
			}
			if a.Outcome != OutcomeSkipped || !passingSkip(a.Kind) {
				skipped = false
				break
			}
			skipped = true
		}
		if skipped {
			out = append(out, k)
		}
	}
	return out
}

// passingSkip reports whether a model skipped with kind (Attempt.Kind) is held back only
// for a while: at a member's limit, at the key's own per-model rate, or with its breaker
// open.
func passingSkip(kind string) bool {
	return kind == limitReachedKind || kind == modelRateKind || kind == "circuit_open"
}

// moveTo moves target k to index i, the targets between keeping their order. A model
// skipped before i (k < i) is put in at i, in front of the models left (target i, the
// member waited on, comes next): its skipped entry stays where it was, among the targets
// before i, which are done with. Membership in the named group (p.members) goes by index:
// a member moved past it is tried as a fallback is (no kind fallbacks switch).
func (p *plan) moveTo(k, i int) {
	moved := p.targets[k]
	if k < i {
		p.insertAt(moved, i)
		return
	}
	copy(p.targets[i+1:k+1], p.targets[i:k])
	p.targets[i] = moved
}

// insertAt puts t in targets at index i, in front of the models left, as moveTo puts a
// model skipped before i.
func (p *plan) insertAt(t target, i int) {
	p.targets = slices.Insert(slices.Clip(p.targets), i, t) // a new array: nothing shared is written
	if i < p.members {
		p.members++
	}
	if p.switched != providers.KindUnknown && i < p.switchedEnd {
		p.switchedEnd++
	}
}

// allFailed is the error of a plan whose attempts all failed: a *LimitedError when every
// model was skipped, at least one at its limit (plan.limited), else the refusal of the
// key's per-model limits when every model was skipped, at least one by them
// (plan.refusedByKey).
func (p *plan) allFailed() error {
	if err := p.limited(); err != nil {
		return err
	}
	if err := p.refusedByKey(); err != nil {
		return err
	}
	return &AllFailedError{Attempts: slices.Clone(p.attempts)}
}

// outOfTime records that the request's deadline passed before t could be tried.
func (p *plan) outOfTime(t target) error {
	p.attempts = append(p.attempts, Attempt{Model: t.name, ModelGroup: t.group, Outcome: OutcomeSkipped, Kind: providers.KindTimeout.String(),
		Error: "skipped: the request deadline passed"})
	return p.allFailed()
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
		Usage:             usageOf(u, g.costsAt(p, t, u)),
		Latency:           now.Sub(p.start).Milliseconds(),
		TTFT:              firstToken.Sub(p.start).Milliseconds(),
		FinishReason:      finish,
		ModelGroup:        p.req.groupName,
		Attempts:          p.attempts,
		Cache:             p.cache.status(now),
		masked:            p.req.masked,
	}
	if p.replayed() {
		r.Usage.Costs = Costs{PriceKnown: true} // no model was called: it cost nothing
		if r.Attempts == nil {
			r.Attempts = []Attempt{}
		}
	}
	return r
}

// markEstimated flags the answer's usage, and its answering (last) attempt's, as estimated.
func (r *Response) markEstimated(estimated bool) {
	if !estimated {
		return
	}
	r.UsageEstimated = true
	if n := len(r.Attempts); n > 0 {
		r.Attempts[n-1].Estimated = true
	}
}

// account reports an answered attempt to the budget and the ledger; estimated says u is a
// local count (the upstream reported none).
func (g *Gateway) account(ctx context.Context, p *plan, t target, u providers.Usage, c Costs, complete, estimated bool, latency time.Duration) {
	if p.replayed() {
		return // no model was called
	}
	p.rt.limits.tokens(t.name, int64(u.PromptTokens+u.CompletionTokens), g.opts.Now())
	g.shareTokens(p.rt.limits.of(t.name), int64(u.PromptTokens+u.CompletionTokens), g.opts.Now())
	if b := p.scope.Budget; b != nil {
		tokens := int64(u.PromptTokens + u.CompletionTokens)
		entries := g.modelEntries(p, b, t) // the model that answered, not the one asked
		entry := modelAt(entries, 0)
		var ends *leaseHold
		if complete && !p.perResponse {
			ends = p.lease // the answer: the request is no longer in flight
		}
		alerts, accounts, err := b.chargeEnding(ctx, tokens, c.Spent(), complete, entries, ends)
		if len(accounts) > 0 {
			p.accounts.Store(&accounts)
		}
		if err != nil {
			g.log.WarnContext(ctx, "completions: charging the scoped key's budget", "tag", p.scope.Tag, "err", err)
			// What the store did not take is kept and applied again: the tokens were spent.
			g.pending.keep(ctx, p.scope, tokens, c.Spent(), complete, chargeFailures(err))
		}
		if f := g.opts.BudgetAlert; f != nil {
			for _, a := range alerts {
				a.Owner, a.Tag = p.scope.Owner, p.scope.Tag
				f(ctx, a)
			}
		}
		g.spend.used(b, tokens, time.Now())
		if ml, ok := b.limits.Models[entry]; ok && entry != "" && ml.TokensPerMinute != nil {
			g.spend.modelCount(b, entry, true, tokens, time.Now())
		}
	}
	if g.opts.Ledger != nil {
		g.opts.Ledger.Record(ctx, LedgerEntry{Owner: p.scope.Owner, Tag: p.scope.Tag, Model: t.name, Complete: complete,
			Usage: u, Estimated: estimated, Cost: c, Latency: latency, Time: g.opts.Now(), Tags: p.req.Tags})
	}
}

// callAttempts runs call on p's models under run (retries, fallbacks, circuit breakers)
// within the request's deadline, each call bounded by the attempt timeout (or the model's
// own MemberTimeouts.Timeout when shorter): a call that
// runs out of it is a timeout saying what was missing (what: "no embeddings"). call gets
// run's context, the attempt's and when the attempt began. It returns the model that
// answered and when its attempt began.
func (g *Gateway) callAttempts(ctx context.Context, p *plan, what string, call func(ctx, actx context.Context, t target, begin time.Time) error) (used target, begin time.Time, err error) {
	dctx, cancelDeadline := p.withDeadline(ctx)
	defer cancelDeadline()
	err = g.run(dctx, p, func(ctx context.Context, t target) error {
		begin = g.opts.Now()
		limit := g.attemptTimeout(p, t.name) // the model's own Timeout may be shorter
		actx := ctx
		if d, ok := ctx.Deadline(); !ok || time.Now().Add(limit).Before(d) {
			// Only an attempt timeout ending before the request's deadline needs a context
			// of its own (7 allocations); one ending after it would be ctx's own deadline.
			var cancel context.CancelFunc
			actx, cancel = context.WithTimeout(ctx, limit)
			defer cancel()
		}
		if err := call(ctx, actx, t, begin); err != nil {
			if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
				return timeoutError(t, what, limit)
			}
			return err
		}
		used = t
		return nil
	})
	return used, begin, err
}

// CompleteN answers req n times at once — n whole answers, each with req's models, retries
// and fallbacks, billed and recorded as n requests — for a client that asks for n choices
// (OpenAI's n), which no provider but OpenAI's own gives, and then only from one model. It
// returns the answers that came, in order, and the failures of the others: an answer paid
// for is never thrown away because a sibling failed after its own retries and fallbacks;
// err is the first failure when none answered. Only stateless requests take n above 1 (a
// stored conversation has one next turn): else a *ValidationError naming n. With a budget
// each answer is a request of its own: it takes a call, the answers share the tokens the
// budget has left, and its spend gate admits them together, as far as its USD or token
// bound can pay (the others fail with ErrBudgetExceeded; the answers paid for are kept).
func (g *Gateway) CompleteN(ctx context.Context, scope Scope, req *Request, n int) (answers []*Response, failed []error, err error) {
	if n <= 1 {
		r, err := g.Complete(ctx, scope, req)
		if err != nil {
			return nil, nil, err
		}
		return []*Response{r}, nil, nil
	}
	if err := checkChoices(req, n); err != nil {
		return nil, nil, err
	}
	// The pre_call guardrails run once for the n answers.
	if req, err = g.guardRequest(ctx, scope, req, nil); err != nil {
		return nil, nil, err
	}
	out := make([]*Response, n)
	errs := make([]error, n)
	eachChoice(req, n, func(i int, r *Request) { out[i], errs[i] = g.Complete(ctx, scope, r) })
	for i := range n {
		if errs[i] != nil {
			failed = append(failed, errs[i])
			continue
		}
		answers = append(answers, out[i])
	}
	if len(answers) == 0 {
		return nil, failed, failed[0]
	}
	return answers, failed, nil
}

// checkChoices refuses n > 1 choices of a request that keeps a conversation: a stored
// conversation has one next turn.
func checkChoices(req *Request, n int) error {
	if n > 1 && !req.ephemeral {
		return invalid("n", "several choices keep no conversation: ask for them without one (the OpenAI-compatible surface)")
	}
	return nil
}

// eachChoice calls call for each of n choices at once, each with its own copy of req marked
// as one of n (validation writes its resolution into the request), and waits for them all.
func eachChoice(req *Request, n int, call func(i int, r *Request)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := *req
			r.choices = n
			call(i, &r)
		}()
	}
	wg.Wait()
}

// Complete answers req without streaming (req.Stream is ignored). Errors: *ValidationError
// (ErrInvalid), ErrNotFound, ErrModelNotAllowed, ErrBudgetExceeded, *AllFailedError, or the
// context's error when ctx ends first.
func (g *Gateway) Complete(ctx context.Context, scope Scope, req *Request) (*Response, error) {
	if g.breakers == nil {
		return nil, ErrZeroGateway
	}
	if req == nil {
		return nil, errNilRequest()
	}
	// Hedging streams the request: a spoken answer in a format OpenAI does not stream is
	// answered whole, without it.
	if req.FaultPolicy.HedgeAfter != nil && req.MockResponse == nil && req.MockFailure == providers.KindUnknown &&
		(req.audio == nil || req.audio.Format == providers.StreamedAudioFormat) {
		return g.completeHedged(ctx, scope, req)
	}
	p, err := g.prepare(ctx, scope, req)
	if err != nil {
		return nil, err
	}
	// Every way out gives back the slots in flight the request holds (MemberLimits), a
	// panic's too (the server recovers and serves on); ended has released them otherwise.
	defer p.releaseHeld()
	if p.replayed() {
		return g.answerFromCache(ctx, p)
	}
	var (
		out   *providers.Response
		used  target
		begin time.Time
	)
	used, begin, err = g.callAttempts(ctx, p, "no complete response", func(ctx, actx context.Context, t target, begin time.Time) error {
		r := g.attemptRequest(p.req, &p.preq, t)
		res, err := t.p.Complete(actx, &r)
		if err != nil {
			g.chargeOversized(ctx, p, t, err, begin,
				func() providers.Usage { u, _ := measured(t.name, providers.Usage{}, &r, nil); return u },
				func(u providers.Usage) Costs { return g.costsAt(p, t, u) })
		}
		out = res
		return err
	})
	if err != nil {
		g.observeFailure(ctx, p, false, err, nil, 0)
		return nil, err
	}
	now := g.opts.Now()
	sent := p.preq
	sent.Model = used.model
	u, estimated := measured(used.name, out.Usage, &sent, out)
	resp := g.response(p, used, out.Text, u, out.FinishReason, now)
	resp.ToolCalls, resp.Refusal, resp.StopSequence, resp.Sources = out.ToolCalls, out.Refusal, out.StopSequence, out.Sources
	resp.CodeExecution, resp.URLContextMetadata = out.CodeExecution, out.URLContextMetadata
	resp.SystemFingerprint, resp.ServiceTier = out.SystemFingerprint, out.ServiceTier
	resp.Logprobs = answerLogprobs(&p.preq, out.Logprobs)
	resp.Audio = out.Audio
	if !p.hidesReasoning() {
		resp.Reasoning = out.Reasoning
	}
	resp.markEstimated(estimated)
	g.account(ctx, p, used, u, resp.Usage.Costs, true, estimated, now.Sub(begin))
	g.latency.answered(used.name, 0, now.Sub(begin), u.CompletionTokens)
	if err := g.guardOutput(ctx, p, resp); err != nil {
		// Paid for (accounted above), not returned, saved, cached or stored.
		g.observeBlockedAnswer(ctx, p, false, resp, now.Sub(p.start), err)
		return nil, err
	}
	g.storeAnswer(p, resp, estimated)
	g.finish(ctx, p, resp)
	return resp, nil
}

// answerFromCache answers p from its cache hit, or its mock_response (with its usage
// estimated): no model is called, nothing is charged.
func (g *Gateway) answerFromCache(ctx context.Context, p *plan) (*Response, error) {
	t := p.targets[0]
	out, _ := t.p.Complete(ctx, &p.preq)
	u, estimated := out.Usage, false
	if p.mocked {
		sent := p.preq
		sent.Model = t.model
		u, estimated = measured(t.name, out.Usage, &sent, out)
	}
	resp := g.response(p, t, out.Text, u, out.FinishReason, g.opts.Now())
	resp.ToolCalls, resp.Refusal, resp.StopSequence, resp.Sources = out.ToolCalls, out.Refusal, out.StopSequence, out.Sources
	resp.CodeExecution, resp.URLContextMetadata = out.CodeExecution, out.URLContextMetadata
	resp.SystemFingerprint, resp.ServiceTier = out.SystemFingerprint, out.ServiceTier
	resp.Logprobs = answerLogprobs(&p.preq, out.Logprobs)
	if !p.hidesReasoning() {
		resp.Reasoning = out.Reasoning
	}
	if h := p.cache.hit; h != nil {
		resp.UsageEstimated = h.answer.Estimated
	} else {
		resp.markEstimated(estimated)
	}
	if err := g.guardOutput(ctx, p, resp); err != nil {
		g.observeBlockedAnswer(ctx, p, false, resp, g.opts.Now().Sub(p.start), err)
		return nil, err
	}
	g.finish(ctx, p, resp)
	return resp, nil
}

// finish ends a non-streamed answer: it keeps its reasoning for the tool loop, saves the
// turn and reports the request.
func (g *Gateway) finish(ctx context.Context, p *plan, resp *Response) {
	g.keepReasoning(p, resp)
	if err := g.saveTurn(ctx, p, resp); err != nil {
		// The answer exists and is paid for: losing it to a storage failure would make the
		// caller pay again for a retry.
		g.notSaved(ctx, p, resp, err)
	}
	g.observeResponse(ctx, p, false, resp, g.opts.Now().Sub(p.start))
}

// addScopeFallbacks sets req's fallbacks from the scope's (Scope.Fallbacks and
// ContextWindowFallbacks) for the model req names first, for validate: LiteLLM's order,
// the request's own fallbacks, else the scope's, else the server's (the group's). It may
// run twice for one request (admissible, then prepare) and gives the same answer. A
// fallback the scope's budget does not allow, or that no longer resolves (the server's
// models changed since the key's settings were made), is passed over: the scope's
// settings must not refuse a request the caller could make without them (a team's "*"
// fallback, say, beside a key of narrower models).
func (g *Gateway) addScopeFallbacks(scope Scope, req *Request) {
	if req.fallbacksByModel != nil && len(req.Models) > 0 {
		// LiteLLM's body fallbacks in its router's format: the entry for the model asked
		// (get_fallback_model_group: the name, else without a known provider, else "*"),
		// the request's own fallbacks (none when there is no entry), the model asked left out
		// as run_async_fallback skips it.
		for _, m := range g.fallbackEntry(req.fallbacksByModel, req.Models[0]) {
			if !slices.Contains(req.Models, m) && !slices.Contains(req.FallbackModels, m) {
				req.FallbackModels = append(req.FallbackModels, m)
			}
		}
		req.fallbacksByModel, req.fallbacksMapped = nil, true
	}
	// Set when not nil: an empty map (a key's fallbacks: []) is a setting, none, replacing
	// the server's as LiteLLM's router takes a request's list that is not None.
	req.scopeReplaces, req.scopeFallbacks = scope.Fallbacks != nil && !req.namedFallbacks(), nil
	req.scopeWindowSet, req.scopeWindow = scope.ContextWindowFallbacks != nil, nil
	req.ownWindow, req.windowKey = req.ContextWindowFallbacks != nil, ""
	if req.ownWindow {
		// The request's own replace the scope's, as LiteLLM's proxy fills a key's settings
		// only into what the request leaves unset.
		req.scopeWindowSet = true
	}
	if len(req.Models) == 0 {
		return
	}
	if req.ownWindow {
		// The caller's own ask: each is checked as its fallback_models are (validate,
		// admission's budget), not passed over.
		var list []string
		req.windowKey, list = g.fallbackEntryKey(req.ContextWindowFallbacks, req.Models[0])
		for _, m := range list {
			if !slices.Contains(req.Models, m) && !slices.Contains(req.scopeWindow, m) {
				req.scopeWindow = append(req.scopeWindow, m)
			}
		}
	}
	callable := func(m string) bool {
		// As validate resolves them (groupFallbacks, without its ordering): a group for
		// its members, those the request's tags select.
		models := []string{m}
		if fg, isGroup := g.routes().groups[m]; isGroup {
			models, _ = fg.tagMembers(req.tagAsk())
		}
		if len(models) == 0 {
			return false
		}
		ts, err := g.resolve("model", models, req.Search, req.ephemeral)
		return err == nil && len(ts) > 0 && (scope.Budget == nil || g.budgetAllows(scope.Budget, []string{m}, ts) == nil)
	}
	if req.scopeReplaces {
		req.scopeFallbacks = g.scopeFallbacksFor(scope.Fallbacks, req.Models[0], callable, req.Models)
	}
	if req.scopeWindowSet && !req.ownWindow {
		req.scopeWindow = g.scopeFallbacksFor(scope.ContextWindowFallbacks, req.Models[0], callable, req.Models)
	}
}

// fallbackEntry is fbs's list for the model asked: the name as sent, else without its
// provider (openai/gpt-4o's entry gpt-4o, as LiteLLM looks a model's fallbacks up), else
// the entry for every model ("*"). Only a known provider's prefix is taken off
// (knownProvider): a model group named team/fast is found by that name or "*",
// never by an entry fast.
func (g *Gateway) fallbackEntry(fbs map[string][]string, asked string) []string {
	_, list := g.fallbackEntryKey(fbs, asked)
	return list
}

// fallbackEntryKey is fallbackEntry with the name of the entry found ("" for none).
func (g *Gateway) fallbackEntryKey(fbs map[string][]string, asked string) (string, []string) {
	if list, ok := fbs[asked]; ok {
		return asked, list
	}
	if prefix, bare, cut := strings.Cut(asked, "/"); cut && g.knownProvider(prefix) {
		if list, ok := fbs[bare]; ok {
			return bare, list
		}
	}
	if list, ok := fbs["*"]; ok {
		return "*", list
	}
	return "", nil
}

// knownProvider reports whether name is a provider the gateway knows: a preset's
// (providers.Presets) or one its registry holds (a provider configuration's own names).
// Those are the prefixes fallbackEntryKey takes off, as LiteLLM's router strips a model
// group's prefix only when it is one of litellm.provider_list
// (fallback_event_handlers.py, _check_stripped_model_group).
func (g *Gateway) knownProvider(name string) bool {
	if presetProviders()[name] {
		return true
	}
	if g.opts.Providers == nil {
		return false
	}
	_, err := g.opts.Providers.Lookup(name)
	return err == nil
}

// presetProviders are the names of providers.Presets.
var presetProviders = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	for _, p := range providers.Presets() {
		out[p.Name] = true
	}
	return out
})

// scopeFallbacksFor is fbs's entry for asked, leaving out the names of skip (the models
// asked), repeats, and those callable refuses (the scope may not call them, or they do
// not resolve); nil when none is left.
func (g *Gateway) scopeFallbacksFor(fbs map[string][]string, asked string, callable func(string) bool, skip []string) []string {
	var out []string
	for _, m := range g.fallbackEntry(fbs, asked) {
		if slices.Contains(skip, m) || slices.Contains(out, m) || !callable(m) {
			continue
		}
		out = append(out, m)
	}
	return out
}
