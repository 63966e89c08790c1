package completions

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// Observer sees every request the gateway accepted (past validation and the budget), once,
// when it ends: answered, failed, or abandoned by the caller. Metrics, traces and the
// console's recent-request list are Observers. ObserveRequest runs on the request's
// goroutine after the answer is complete and must not block.
type Observer interface {
	ObserveRequest(ctx context.Context, r RequestRecord)
}

// Outcomes of a RequestRecord.
const (
	// RequestOK: an answer was delivered in full.
	RequestOK = "ok"
	// RequestFailed: no model answered (every attempt failed, or the request ran out of
	// time before an answer started).
	RequestFailed = "error"
	// RequestStreamFailed: a stream broke after its first fragment and was not continued.
	RequestStreamFailed = "stream_error"
	// RequestFiltered: a provider's content filter refused the request.
	RequestFiltered = "content_filter"
	// RequestCancelled: the caller went away (or closed the stream) before the end.
	RequestCancelled = "cancelled"
	// RequestBlocked: a guardrail refused the request (pre_call: no model was called) or
	// its answer (post_call: the answer was paid for and not returned).
	RequestBlocked = "guardrail_blocked"
)

// RequestRecord is what an Observer learns about one request.
type RequestRecord struct {
	// Owner and Tag are the request's Scope's.
	Owner, Tag string
	// Operation is OperationEmbeddings for an embeddings request, OperationTranscription,
	// OperationTranslation or OperationSpeech for an audio request, OperationRerank for a
	// rerank request, OperationModeration for a moderation request,
	// OperationImageGeneration for an image generation request, OperationImageEdit for an
	// image edit request, OperationPassThrough for a request forwarded as it is to a
	// provider's own API, "" for a chat request (any surface).
	Operation string
	// Stream says the answer was streamed.
	Stream bool
	// Outcome is one of RequestOK, RequestFailed, RequestStreamFailed, RequestFiltered,
	// RequestCancelled.
	Outcome string
	// Provider and Model answered ("" when none did).
	Provider, Model string
	// Requested is the first model the request named (after ranking), for the labels of a
	// request that ended before any attempt was recorded.
	Requested string
	// ModelGroup is the model name the caller asked for (LiteLLM's model_group): a model
	// group's name, or the one "provider/model" it named; "" when it named several.
	ModelGroup string
	// EndUser is the Scope's EndUser.
	EndUser string
	// APIBase is the endpoint root of Model's provider (or of the last model tried when
	// none answered) without credentials: user info, query and fragment removed, as
	// Deployment.APIBase; "" when its adapter does not say.
	APIBase string
	// RequestID is the request's Scope.RequestID: the id the caller was answered with (the
	// server's x-request-id); "" when the scope had none.
	RequestID string
	// ResponseID is the chat answer's ResponseMessageID: the uuid in the id each surface
	// answered with (chatcmpl-…, msg_…); "" for other operations.
	ResponseID string
	// Attempts are every upstream attempt in order (retries, fallbacks, continuations).
	Attempts []Attempt
	// Usage is the answer's usage with its costs; UsageEstimated says it was counted
	// locally. A stream that ended before its end after its first fragment (outcomes
	// RequestStreamFailed and RequestCancelled) carries what it was charged, as its
	// upstreams bill it: the prompt and the output streamed so far (estimated when they
	// reported none), with any earlier parts (a continued start, a hedged start that lost).
	// A request a content filter refused (RequestFiltered) carries what the refused call was
	// billed (ContentFilterError.Usage). A request that failed after an upstream's answer
	// was refused as over the size cap carries what that call was charged (its attempt's
	// Usage, with AnswerBytes; the prompt's estimate when the upstream's usage was not read,
	// UsageEstimated), as does one after a call the upstream billed though the gateway
	// refused its answer (a ranking refused, embeddings answered in part): what that
	// attempt was charged. It is zero when nothing was billed (every attempt failed before
	// its first fragment).
	Usage          Usage
	UsageEstimated bool
	// Continuations counts models that continued a broken stream.
	Continuations int
	// Start is when the request was received; Latency how long it took to its end; TTFT
	// how long to the first fragment (0 when none came).
	Start   time.Time
	Latency time.Duration
	TTFT    time.Duration
	// ConversationID is the conversation the turn belongs to ("" without a store).
	ConversationID string
	// Cache is how the response cache took part (CacheHit, CacheMiss, CacheBypass; "" when
	// it did not). A hit made no attempt: Usage has the answer's tokens and no cost, and
	// SavedUSD what it cost when it was made.
	Cache    string
	SavedUSD float64
	// Tags are the request's tags (Request.Tags).
	Tags []string
	// KeyID, TeamID and UserID are the Scope's: the virtual key the request was made with,
	// its team and its user ("" when none). None of them is a secret.
	KeyID, TeamID, UserID string
	// KeyAlias and TeamAlias are the Scope's: the key's and its team's names ("" when none).
	KeyAlias, TeamAlias string
	// Prompt is a chat request as it was sent upstream: the system prompt, the stored
	// history of its conversation, its messages as the pre_call guardrails left them (masked
	// text masked), its tools and sampling parameters (MaxTokens lowered to what a budget
	// had left). It is nil for the other operations and for a request refused before it was
	// prepared. Observers read it during ObserveRequest only and must not modify it.
	Prompt *providers.Request
	// Answer is the answer delivered (RequestOK of a chat request, a cache hit's too): its
	// text, whole also when it was streamed, tool calls, reasoning and finish reason. It is
	// nil otherwise (no answer, or one a post_call guardrail blocked). Observers read it
	// during ObserveRequest only and must not modify it.
	Answer *Response
	// Partial is what a stream delivered before it ended without its end (outcomes
	// RequestStreamFailed and RequestCancelled after the first fragment): its text, tool
	// calls, reasoning and refusal so far, with the answering provider and model and an
	// empty FinishReason. It is nil for any other record, when nothing was delivered, and
	// for a non-streamed request (one read whole from an internal stream delivers nothing).
	// Observers read it during ObserveRequest only and must not modify it.
	Partial *Response
	// Accounts are the budget accounts the request was charged to, as they stand after
	// its last charge: the scope's Budget's own first, then those it sits inside (a
	// team's, a user's, an end user's…); nil when nothing was charged (no Budget, no
	// answered attempt). Observers must not modify it.
	Accounts []AccountState
	// Err is the failure, nil on RequestOK.
	Err error
	// CutBy is, for a RequestCancelled request the server itself cut rather than its
	// caller leaving (its context cancelled with a cause of its own: the graceful
	// shutdown's server.ErrShuttingDown, answered 503), that cause; nil otherwise.
	CutBy error
}

type recordedFlagKey struct{}

// WithRecordedFlag returns a context under which the gateway sets *recorded when it
// reports a request made with that context to its Observer. A server uses it to record,
// with ObserveRefused, a request it answered with an error the gateway did not record (a
// body that does not decode, a request refused before any model was tried).
func WithRecordedFlag(ctx context.Context, recorded *atomic.Bool) context.Context {
	return context.WithValue(ctx, recordedFlagKey{}, recorded)
}

type billedFlagKey struct{}

// WithBilledFlag returns a context under which the gateway sets *billed when a request
// made with that context ends with usage an upstream billed (tokens counted, a cache hit's
// aside), whatever its outcome. A caller that sends requests again on a server error (a
// batch line) uses it never to send again one that was paid for. Like WithRecordedFlag's,
// the flag is set as the request is reported to the gateway's Observer: a Gateway without
// one never sets it.
func WithBilledFlag(ctx context.Context, billed *atomic.Bool) context.Context {
	return context.WithValue(ctx, billedFlagKey{}, billed)
}

type transientFlagKey struct{}

// WithTransientFlag returns a context under which the gateway sets *transient when a
// request made with that context fails because every model was out of service for the
// while (AllFailedError.Transient: rate limited, overloaded, timed out, its connection or
// stream broken, its circuit breaker open, at its rpm or tpm). The gateway answers that
// failure as final (502, x-should-retry: false: it already retried and fell back); a
// caller that may wait longer, a batch line, uses the flag to send the request again after
// a while. Set as WithBilledFlag's is (a Gateway without an Observer never sets it); a
// failure that was billed sets both.
func WithTransientFlag(ctx context.Context, transient *atomic.Bool) context.Context {
	return context.WithValue(ctx, transientFlagKey{}, transient)
}

type timedOutFlagKey struct{}

// WithTimedOutFlag returns a context under which the gateway sets *timedOut when a request
// made with that context fails and one of its attempts timed out (AllFailedError.TimedOut:
// no answer within the first-token, attempt or request timeout). The provider may have
// answered, and billed, a call the gateway stopped waiting for, and the request took its
// whole timeout: a caller that sends requests again (a batch line) does so fewer times.
// Set as WithBilledFlag's is (a Gateway without an Observer never sets it).
func WithTimedOutFlag(ctx context.Context, timedOut *atomic.Bool) context.Context {
	return context.WithValue(ctx, timedOutFlagKey{}, timedOut)
}

// ObserveRefused reports to the Observer a request of scope that was refused with err
// before the gateway recorded it (see WithRecordedFlag): outcome RequestFailed (or
// RequestCancelled when ctx ended), no attempts, operation op ("" for chat) and stream as
// the request asked. It does nothing without an Observer or when ctx's recorded flag is
// set already.
func (g *Gateway) ObserveRefused(ctx context.Context, scope Scope, op string, stream bool, err error) {
	g.ObserveRefusedAsking(ctx, scope, op, stream, "", err)
}

// ObserveRefusedAsking is ObserveRefused of a request that named model (a model group's or
// a model's name, as the caller wrote it; "": none known) before it was refused: its
// record's ModelGroup, as the gateway's own refusals (a budget's, a model not allowed) are
// recorded, so the usage history, /spend/logs and the metrics' requested_model say what was
// asked.
func (g *Gateway) ObserveRefusedAsking(ctx context.Context, scope Scope, op string, stream bool, model string, err error) {
	if g == nil || g.opts.Observer == nil {
		return
	}
	if f, ok := ctx.Value(recordedFlagKey{}).(*atomic.Bool); ok && f.Load() {
		return
	}
	start := scope.Received
	if start.IsZero() {
		start = g.opts.Now()
	}
	r := RequestRecord{Owner: scope.Owner, Tag: scope.Tag, Operation: op, Stream: stream, Outcome: RequestFailed,
		Attempts: []Attempt{}, Start: start, Latency: g.opts.Now().Sub(start), Err: err}
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		r.Outcome = RequestCancelled
	}
	g.observe(ctx, &plan{rt: g.routes(), scope: scope, asked: model}, r)
}

// observeResponse reports a delivered answer; ttft is the time to its first fragment (the
// whole latency when not streamed).
func (g *Gateway) observeResponse(ctx context.Context, p *plan, stream bool, resp *Response, ttft time.Duration) {
	p.ended()
	if g.opts.Observer == nil {
		return
	}
	r := g.answerRecord(p, stream, resp, ttft, RequestOK)
	r.ConversationID = resp.ConversationID
	r.Answer = resp
	if resp.Continued != nil {
		r.Continuations = countContinuations(p.attempts)
	}
	g.observe(ctx, p, r)
}

// answerRecord is the record of p answered by resp (delivered or blocked after it came):
// who asked, the answering model, attempts, usage, timing and what the cache did.
func (g *Gateway) answerRecord(p *plan, stream bool, resp *Response, ttft time.Duration, outcome string) RequestRecord {
	r := RequestRecord{Owner: p.scope.Owner, Tag: p.scope.Tag, Stream: stream, Outcome: outcome,
		Provider: resp.Provider, Model: resp.Provider + "/" + resp.Model, Attempts: cloneAttempts(p.attempts),
		Usage: resp.Usage, UsageEstimated: resp.UsageEstimated, Start: p.start, Latency: g.opts.Now().Sub(p.start),
		TTFT: ttft, Tags: p.req.Tags, ResponseID: resp.ResponseMessageID}
	if resp.Cache != nil {
		r.Cache, r.SavedUSD = resp.Cache.Result, resp.Cache.SavedUSD
	}
	return r
}

// observeFailure reports a request that ended without a complete answer.
func (g *Gateway) observeFailure(ctx context.Context, p *plan, stream bool, err error, answered *target, ttft time.Duration) {
	g.observePartial(ctx, p, stream, err, answered, ttft, nil, Usage{}, false)
}

// observePartial is observeFailure of a stream that delivered partial (nil when nothing
// was) before it ended: the record's Partial; spent is what the stream was charged (the
// prompt and what its upstreams streamed so far, estimated says counted locally), the
// record's Usage.
func (g *Gateway) observePartial(ctx context.Context, p *plan, stream bool, err error, answered *target, ttft time.Duration, partial func() *Response,
	spent Usage, estimated bool) {
	p.ended()
	if g.opts.Observer == nil {
		return
	}
	r := RequestRecord{Owner: p.scope.Owner, Tag: p.scope.Tag, Stream: stream, Outcome: RequestFailed,
		Attempts: cloneAttempts(p.attempts), Start: p.start, Latency: g.opts.Now().Sub(p.start), TTFT: ttft,
		ConversationID: p.convID, Err: err, Continuations: countContinuations(p.attempts), Tags: p.req.Tags,
		ResponseID: p.msgID, Usage: spent, UsageEstimated: estimated}
	if spent == (Usage{}) {
		// Answers refused as over the size cap were billed all the same (chargeOversized).
		r.Usage, r.UsageEstimated = failedAttemptsUsage(p.attempts)
	}
	var cf *ContentFilterError
	switch {
	case errors.As(err, &cf):
		r.Outcome = RequestFiltered
		if spent == (Usage{}) { // the blocked call was billed (contentFiltered): what it cost
			r.Usage, r.UsageEstimated = addUsage(r.Usage, cf.Usage), r.UsageEstimated || cf.UsageEstimated
		}
	case errors.Is(err, ErrGuardrailBlocked):
		r.Outcome = RequestBlocked
	case ctx.Err() != nil || errors.Is(err, context.Canceled) && !errors.Is(err, ErrAllFailed):
		// The caller went away, also in the middle of a stream: not a failure of ours.
		// (An *AllFailedError unwraps to its attempts' errors: a cancelled attempt of a
		// request that went on is not a cancelled request.)
		r.Outcome = RequestCancelled
	case errors.Is(err, ErrStreamFailed):
		r.Outcome = RequestStreamFailed
	}
	if answered != nil {
		r.Provider, r.Model = answered.provider, answered.name
	}
	if len(p.targets) > 0 {
		r.Requested = p.targets[0].name
	}
	if partial != nil {
		r.Partial = partial()
	}
	g.observe(ctx, p, r)
}

// observeOpAnswer reports a request of operation op other than chat (embeddings, audio,
// rerank) that model used answered with usage u, at now; cache is the answer's cache status
// (nil when the cache took no part). A cache hit has made no attempt: its record lists none.
func (g *Gateway) observeOpAnswer(ctx context.Context, p *plan, op string, used target, u Usage, estimated bool, cache *CacheStatus, now time.Time) {
	if g.opts.Observer == nil {
		return
	}
	r := RequestRecord{Owner: p.scope.Owner, Tag: p.scope.Tag, Operation: op, Outcome: RequestOK, Tags: p.req.Tags,
		Provider: used.provider, Model: used.name, Attempts: cloneAttempts(p.attempts), Usage: u, UsageEstimated: estimated,
		Start: p.start, Latency: now.Sub(p.start)}
	if r.Attempts == nil {
		r.Attempts = []Attempt{}
	}
	if cache != nil {
		r.Cache, r.SavedUSD = cache.Result, cache.SavedUSD
	}
	g.observe(ctx, p, r)
}

// observeOpFailure reports a request of operation op other than chat (embeddings, audio,
// rerank) that got no answer.
func (g *Gateway) observeOpFailure(ctx context.Context, p *plan, op string, stream bool, err error) {
	if g.opts.Observer == nil {
		return
	}
	r := RequestRecord{Owner: p.scope.Owner, Tag: p.scope.Tag, Operation: op, Stream: stream, Outcome: RequestFailed, Tags: p.req.Tags,
		Attempts: cloneAttempts(p.attempts), Start: p.start, Latency: g.opts.Now().Sub(p.start), Err: err}
	r.Usage, r.UsageEstimated = failedAttemptsUsage(p.attempts)
	if ctx.Err() != nil || errors.Is(err, context.Canceled) && !errors.Is(err, ErrAllFailed) {
		r.Outcome = RequestCancelled
	}
	if len(p.targets) > 0 {
		r.Requested = p.targets[0].name
	}
	g.observe(ctx, p, r)
}

// observe completes r with what p knows of the caller's ask — the model name it asked for,
// its end user, the answering (or last tried) provider's endpoint — and hands it to the
// Observer, with the scope's request id and marking ctx's recorded flag (WithRecordedFlag).
func (g *Gateway) observe(ctx context.Context, p *plan, r RequestRecord) {
	r.RequestID = p.scope.RequestID
	if r.Outcome == RequestCancelled {
		r.CutBy = serverCut(ctx)
	}
	if f, ok := ctx.Value(recordedFlagKey{}).(*atomic.Bool); ok {
		f.Store(true)
	}
	if f, ok := ctx.Value(billedFlagKey{}).(*atomic.Bool); ok && r.Cache != CacheHit && r.Usage.PromptTokens+r.Usage.CompletionTokens+r.Usage.TotalTokens > 0 {
		f.Store(true)
	}
	if f, ok := ctx.Value(transientFlagKey{}).(*atomic.Bool); ok && r.Outcome == RequestFailed {
		var af *AllFailedError
		if errors.As(r.Err, &af) && af.Transient() {
			f.Store(true)
		}
	}
	if f, ok := ctx.Value(timedOutFlagKey{}).(*atomic.Bool); ok && r.Outcome == RequestFailed {
		var af *AllFailedError
		if errors.As(r.Err, &af) && af.TimedOut() {
			f.Store(true)
		}
	}
	r.EndUser = p.scope.EndUser
	r.KeyID, r.TeamID, r.UserID = p.scope.KeyID, p.scope.TeamID, p.scope.UserID
	r.KeyAlias, r.TeamAlias = p.scope.KeyAlias, p.scope.TeamAlias
	if r.Operation == "" && p.req != nil && len(p.preq.Messages) > 0 {
		r.Prompt = &p.preq
	}
	if a := p.accounts.Load(); a != nil {
		r.Accounts = *a
	}
	r.ModelGroup = p.asked
	if p.req != nil && r.ModelGroup == "" {
		if p.req.groupName != "" {
			r.ModelGroup = p.req.groupName
		} else if len(p.req.Models) == 1 {
			r.ModelGroup = p.req.Models[0]
		}
	}
	model := r.Model
	if n := len(r.Attempts); model == "" && n > 0 {
		model = r.Attempts[n-1].Model
	}
	if model == "" {
		model = r.Requested
	}
	r.APIBase = g.apiBase(p, model)
	g.opts.Observer.ObserveRequest(ctx, r)
}

// apiBase is the endpoint root of model's provider without credentials (PublicURL): of
// p's target for it, else of the registry's provider; "" when its adapter does not say.
func (g *Gateway) apiBase(p *plan, model string) string {
	prov, _, ok := strings.Cut(model, "/")
	if !ok {
		return ""
	}
	var pr providers.Provider
	for _, t := range p.targets {
		if t.provider == prov && t.p != nil {
			pr = t.p
			break
		}
	}
	if pr == nil && g.opts.Providers != nil {
		pr, _ = g.opts.Providers.Lookup(prov)
	}
	if b, ok := pr.(interface{ BaseURL() string }); ok && pr != nil {
		return PublicURL(b.BaseURL())
	}
	return ""
}

func cloneAttempts(a []Attempt) []Attempt { return append([]Attempt(nil), a...) }

func countContinuations(a []Attempt) int {
	n := 0
	for _, at := range a {
		if at.ContinuedFrom != nil {
			n++
		}
	}
	return n
}

// ended counts a finished request out of its budget's spend gate, and its calls still in
// flight out of their models' MaxParallel, and stops the deadline's timer its admission
// kept when no call took it over (keepDeadline).
func (p *plan) ended() {
	p.releaseHeld()
	p.dropDeadline()
	if p.release != nil {
		p.release()
	}
}

// serverCut is the cause ctx was cancelled with when the server itself cut the request
// (its graceful shutdown's timeout ran out): a cause other than a plain cancel, a
// deadline, or a background response's owner cancelling or deleting it; nil otherwise.
func serverCut(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	cause := context.Cause(ctx)
	if cause == nil || errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) ||
		errors.Is(cause, errRequestDeadline) || errors.Is(cause, errBackgroundCancelled) || errors.Is(cause, errBackgroundLost) {
		return nil
	}
	return cause
}
