package completions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// ResponseStream is a streamed answer. Recv yields fragments, then io.EOF once the upstream
// finished properly and the turn was saved; Response then returns the final response. A
// failure after the first fragment is a *StreamError: the text delivered so far is
// incomplete. A ResponseStream is used by one goroutine; Close may be called from any.
type ResponseStream struct {
	g *Gateway
	p *plan
	t target

	// up, cancel and timer are the answering attempt's: Recv's goroutine alone changes
	// them (a continuation, restoreFailure), holding upMu, which Close holds to stop them
	// from another goroutine; closing says (under upMu) that Close has.
	up      providers.Stream
	cancel  context.CancelFunc
	timer   *time.Timer
	upMu    sync.Mutex
	closing bool
	stalled *atomic.Bool
	whole   wholeBound      // the answering attempt's bound on its whole call (collectedTimeout)
	ctx     context.Context // the caller's
	dctx    context.Context // the caller's, bounded by the request's deadline
	undl    context.CancelFunc
	begin   time.Time // start of the answering attempt
	idx     int       // the answering model's index in p.targets

	// A continued answer (continuation.go): what the broken attempts used, and the
	// whitespace the continuation must not repeat.
	parts     []part
	trimSpace bool
	continued *Continuation
	recorded  bool // the failed attempt is already in p.attempts
	prefixLen int  // bytes of text the answering attempt was given as its prefix

	pending string // text of a fragment read but not yet returned
	// pendingThought is the answering attempt's first fragment when it was reasoning, not
	// yet returned; thoughtBase is added to the reasoning indexes of a continuing attempt.
	pendingThought *providers.ReasoningDelta
	thoughtBase    int
	// pendingAudio is the answering attempt's first fragment when it was a piece of a
	// spoken answer, not yet returned; audio is the spoken answer so far.
	pendingAudio *providers.AudioDelta
	audio        audioBuild
	// thinking: the last fragment read was reasoning, no text or call yet after it: the
	// model may be silent for as long as reasoning allows (silence).
	thinking bool
	// sources are the web pages the provider's search found so far; the first
	// pendingSources of them, read before the first fragment, are not yet returned.
	sources        []providers.Source
	pendingSources int
	thoughts       []reasoningBuild // the reasoning so far, by block index
	ended          bool             // upstream reached its end marker
	text           strings.Builder
	deltas         []providers.ToolCallDelta // tool-call fragments read but not yet returned
	next           int                       // the next of deltas to return
	calls          []toolCallBuild           // the tool calls so far, by index
	refusal        strings.Builder           // the model's refusal, when it refuses
	// logprobs are the log probabilities read so far (Request.Logprobs); the first
	// logprobsSent of their content tokens went out with text chunks.
	logprobs     providers.Logprobs
	logprobsSent int
	usage        *providers.Usage
	finish       string
	stopSeq      string // the stop sequence that ended the answer (see providers.Chunk)
	// fingerprint and tier are the last system_fingerprint and service_tier the answering
	// attempt's upstream sent (an OpenAI-compatible one's chunks carry them); "" until it
	// sent one.
	fingerprint, tier string
	firstAt           time.Time
	final             *Response
	err               error
	closeOne          sync.Once
	// ending is set once complete or fail runs: a Close before that is the caller leaving.
	ending   atomic.Bool
	observed sync.Once
	// recvMu is held by Recv: a Close from another goroutine waits for a running Recv (which
	// then ends the stream itself) before it charges what the stream used; accounted says
	// complete or fail charged it.
	recvMu    sync.Mutex
	accounted bool
	// spent is what chargeUnfinished charged for a stream that ended before its end (the
	// earlier parts and the answering attempt so far; nil until then, so that a stream that
	// completes carries none of it): the Observer's record carries it (RequestRecord.Usage).
	spent *spentUsage
	// closedEarly: the caller closed the stream before its end (a Recv the closed upstream
	// then ends records the attempt as cancelled, not as the model's failure).
	closedEarly atomic.Bool
}

// spentUsage is what a stream that ended before its end was charged; estimated says some
// of it was counted locally.
type spentUsage struct {
	usage     Usage
	estimated bool
}

// attemptStream is the state of one streaming attempt before its first fragment.
type attemptStream struct {
	up      providers.Stream
	cancel  context.CancelFunc
	timer   *time.Timer
	stalled *atomic.Bool
	whole   wholeBound // a non-streamed request's bound on the whole call (collectedTimeout)
	first   string
	thought *providers.ReasoningDelta // the first fragment, when it was reasoning
	audio   *providers.AudioDelta     // the first fragment, when it was a piece of a spoken answer
	deltas  []providers.ToolCallDelta // tool-call fragments of the first chunk
	refusal string                    // refusal pieces read before the first fragment
	sources []providers.Source        // web pages found before the first fragment
	// logprobs are the log probabilities read up to the first fragment, its own included.
	logprobs providers.Logprobs
	ended    bool
	usage    *providers.Usage
	finish   string
	stopSeq  string
	// fingerprint and tier: the system_fingerprint and service_tier read so far.
	fingerprint, tier string
	firstAt           time.Time
}

func (a *attemptStream) close() {
	a.timer.Stop()
	if a.up != nil {
		a.up.Close()
	}
	a.cancel()
}

// Stream starts a streamed answer. It returns once an attempt produced its first fragment
// (or ended properly without any); failures before that fall over silently to the next
// attempt, so the errors are those of Complete. The stream is bound to ctx: cancelling it
// cancels the upstream call. The caller must Close the stream.
func (g *Gateway) Stream(ctx context.Context, scope Scope, req *Request) (*ResponseStream, error) {
	return g.stream(ctx, scope, req, false)
}

// stream is Stream; collected says the stream is read whole for a non-streamed request
// (the Observer then sees a non-streamed request).
func (g *Gateway) stream(ctx context.Context, scope Scope, req *Request, collected bool) (*ResponseStream, error) {
	if g.breakers == nil {
		return nil, ErrZeroGateway
	}
	if req == nil {
		return nil, errNilRequest()
	}
	p, err := g.prepare(ctx, scope, req)
	if err != nil {
		return nil, err
	}
	// Until the stream is handed over (its end releases them), every way out gives back the
	// slots in flight the request holds (MemberLimits), a panic's too.
	handed := false
	defer func() {
		if !handed {
			p.releaseHeld()
		}
	}()
	p.collected, p.streamed = collected, true
	p.noQueue = req.choices > 1 && !collected // StreamN's: see plan.noQueue
	var (
		won   *attemptStream
		used  target
		begin time.Time
	)
	dctx, undl := p.withDeadline(ctx)
	idx := 0
	if p.replayed() {
		// The cached answer (or a mock_response) is replayed through the stream machinery, so that every
		// surface writes it as a model's; no model is called, so no retry, breaker or hedge.
		begin, used = g.opts.Now(), p.targets[0]
		won, err = g.openAttempt(dctx, p, used, &p.preq)
	} else if p.timing.hedgeAfter > 0 && len(p.targets) > 1 && p.req.MockFailure == providers.KindUnknown {
		won, idx, begin, err = g.hedged(dctx, p)
		if err == nil {
			used = p.targets[idx]
		}
	} else {
		err = g.run(dctx, p, func(ctx context.Context, t target) error {
			begin = g.opts.Now()
			a, err := g.openAttempt(ctx, p, t, &p.preq)
			if err != nil {
				return err
			}
			won, used, idx = a, t, p.current
			return nil
		})
	}
	if err != nil {
		undl()
		g.observeFailure(ctx, p, !collected, err, nil, 0)
		return nil, err
	}
	st := &ResponseStream{
		g: g, p: p, t: used, idx: idx, up: won.up, cancel: won.cancel, timer: won.timer, stalled: won.stalled, whole: won.whole,
		ctx: ctx, dctx: dctx, undl: undl, begin: begin, pending: won.first, deltas: won.deltas, ended: won.ended, usage: won.usage, finish: won.finish, stopSeq: won.stopSeq, firstAt: won.firstAt,
		pendingThought: won.thought, thinking: won.thought != nil, pendingAudio: won.audio, sources: won.sources, pendingSources: len(won.sources),
		fingerprint: won.fingerprint, tier: won.tier, logprobs: won.logprobs,
	}
	st.refusal.WriteString(won.refusal)
	st.parts = p.losers
	handed = true
	return st, nil
}

// openAttempt starts a stream of preq on t and reads until its first fragment (text,
// reasoning or tool call) or its end. Reasoning counts where the caller shows it: a model
// may think for minutes before its first word, and a client is shown its thinking
// meanwhile; where it is hidden, each piece of it holds the model to the idle timeout
// instead of the first-token one (a model reasoning unasked is not silent). The wait for
// the first fragment is the first-token timeout, or the model's own
// MemberTimeouts.StreamTimeout (else Timeout) when shorter; for a non-streamed request
// (completeHedged) the model's own Timeout, when shorter than the attempt timeout, also
// bounds the whole call (collectedTimeout).
func (g *Gateway) openAttempt(ctx context.Context, p *plan, t target, preq *providers.Request) (*attemptStream, error) {
	var actx context.Context
	var cancel context.CancelFunc
	whole := wholeBound{limit: g.collectedTimeout(p, t.name)}
	if whole.limit > 0 { // a non-streamed request's member Timeout bounds the whole call
		actx, cancel = context.WithTimeoutCause(ctx, whole.limit, errWholeCall)
		whole.ctx = actx
	} else {
		actx, cancel = context.WithCancel(ctx)
	}
	a := &attemptStream{cancel: cancel, stalled: new(atomic.Bool), whole: whole}
	first := g.firstTokenTimeout(p, t.name) // the model's own StreamTimeout may be shorter
	a.timer = time.AfterFunc(first, func() { a.stalled.Store(true); cancel() })
	// A failure before the first fragment bills nothing, though the upstream may have
	// accepted the call (200, Claude's message_start): LiteLLM bills none of it, providers
	// do not bill a failed request, and the fallback that answers is billed instead.
	fail := func(err error) (*attemptStream, error) {
		a.close()
		if ctx.Err() == nil && a.whole.passed() {
			return nil, timeoutError(t, "no complete response", a.whole.limit)
		}
		if ctx.Err() == nil && a.stalled.Load() {
			return nil, timeoutError(t, "no first token", first)
		}
		return nil, err
	}
	r := g.attemptRequest(p.req, preq, t)
	up, err := t.p.Stream(actx, &r)
	if err != nil {
		return fail(err)
	}
	a.up = up
	for {
		c, err := up.Recv()
		if errors.Is(err, io.EOF) {
			a.timer.Stop()
			a.ended = true
			a.firstAt = g.opts.Now()
			return a, nil
		}
		if err != nil {
			return fail(err)
		}
		if c.Usage != nil {
			u := *c.Usage
			a.usage = &u
		}
		if c.FinishReason != "" {
			a.finish, a.stopSeq = c.FinishReason, c.StopSequence
		}
		if c.SystemFingerprint != "" {
			a.fingerprint = c.SystemFingerprint
		}
		if c.ServiceTier != "" {
			a.tier = c.ServiceTier
		}
		a.refusal += c.Refusal
		a.logprobs.Append(c.Logprobs)
		a.sources = append(a.sources, c.Sources...) // the search before the answer
		if c.Reasoning != nil && (p.hidesReasoning() || c.Reasoning.Started()) {
			// Not a fragment of this answer (the caller shows no reasoning, or the model only
			// says it reasons), but the model is at work: it is held to the silence allowed
			// while reasoning, not cut as silent.
			a.timer.Reset(p.timing.reasoning)
			continue
		}
		if c.Reasoning != nil {
			a.timer.Stop()
			d := *c.Reasoning
			a.thought = &d
			a.firstAt = g.opts.Now()
			return a, nil
		}
		if c.Text != "" || len(c.ToolCalls) > 0 || c.Audio != nil {
			a.timer.Stop()
			a.first, a.audio = c.Text, c.Audio
			a.deltas = append([]providers.ToolCallDelta(nil), c.ToolCalls...)
			a.firstAt = g.opts.Now()
			return a, nil
		}
	}
}

// Provider returns the provider answering the stream.
func (s *ResponseStream) Provider() string { return s.t.provider }

// Model returns the model answering the stream (without the provider prefix).
func (s *ResponseStream) Model() string { return s.t.model }

// ModelGroup returns the name the answering model was asked by (its Attempt's ModelGroup):
// the model group it is a member of, a fallback group's name after the group asked failed,
// or its own name for a fallback naming a model; "" when the request named the model.
func (s *ResponseStream) ModelGroup() string { return s.t.group }

// ResponseMessageID returns the id of the assistant message being streamed.
func (s *ResponseStream) ResponseMessageID() string { return s.p.msgID }

// ConversationID returns the conversation the answer belongs to.
func (s *ResponseStream) ConversationID() string { return s.p.convID }

// Created returns when the request was received.
func (s *ResponseStream) Created() time.Time { return s.p.start }

// SystemFingerprint returns the last system_fingerprint the answering model's upstream
// sent in the stream so far (an OpenAI-compatible upstream's chunks carry one); "" when it
// sent none. It changes when another model continues a broken stream.
func (s *ResponseStream) SystemFingerprint() string { return s.fingerprint }

// ServiceTier returns the last service_tier the answering model's upstream sent in the
// stream so far, as SystemFingerprint does.
func (s *ResponseStream) ServiceTier() string { return s.tier }

func (s *ResponseStream) chunk(frag string) *Chunk {
	s.text.WriteString(frag)
	c := s.chunkFor(frag)
	if n := len(s.logprobs.Content); n > s.logprobsSent {
		// The tokens read since the last text chunk: this text's (and any that came alone).
		c.Logprobs = &providers.Logprobs{Content: s.logprobs.Content[s.logprobsSent:n:n]}
		s.logprobsSent = n
	}
	return c
}

// LogprobsSent is how many of the answer's content tokens' log probabilities went out
// with text chunks (Chunk.Logprobs) so far; the final Response.Logprobs.Content holds
// them and any after them.
func (s *ResponseStream) LogprobsSent() int { return s.logprobsSent }

// chunkFor is the event for the fragment frag.
func (s *ResponseStream) chunkFor(frag string) *Chunk {
	return &Chunk{Provider: s.t.provider, Model: s.t.model, ResponseMessageID: s.p.msgID, Type: EventText, Text: frag,
		Message: assistantText(frag)}
}

// Recv returns the next fragment; io.EOF after the last one, once the final response is
// ready (see Response); or a *StreamError when the upstream failed mid-answer.
func (s *ResponseStream) Recv() (*Chunk, error) {
	s.recvMu.Lock()
	defer s.recvMu.Unlock()
	return s.recv()
}

// recv is Recv; recvMu is held.
func (s *ResponseStream) recv() (*Chunk, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.final != nil {
		return nil, io.EOF
	}
	if n := s.pendingSources; n > 0 {
		s.pendingSources = 0
		if s.p.req.showSources {
			return s.sourcesChunk(s.sources[:n]), nil
		}
	}
	if d := s.pendingThought; d != nil {
		s.pendingThought = nil
		return s.thoughtChunk(*d), nil
	}
	if d := s.pendingAudio; d != nil {
		s.pendingAudio = nil
		return s.audioChunk(d), nil
	}
	if s.pending != "" {
		frag := s.pending
		s.pending = ""
		if frag = s.spliced(frag); frag != "" {
			return s.chunk(frag), nil
		}
	}
	if s.next < len(s.deltas) {
		s.next++
		return s.toolChunk(s.deltas[s.next-1]), nil
	}
	for !s.ended {
		s.timer.Reset(s.silence())
		c, err := s.up.Recv()
		s.timer.Stop()
		if errors.Is(err, io.EOF) {
			s.ended = true
			break
		}
		if err != nil {
			if s.continueAfter(err) {
				return s.recv()
			}
			if pe := (*providers.Error)(nil); errors.As(err, &pe) && pe.Kind == providers.KindContentFilter && s.ctx.Err() == nil {
				// The provider's output filter cut the answer after it started (Azure's
				// finish_reason content_filter, then the usage and [DONE]): it ends as the
				// upstream ended it, with the text so far, that finish reason and the usage
				// the upstream billed, not as a failure.
				if pe.Usage != nil {
					u := *pe.Usage
					s.usage = &u
				}
				s.finish, s.stopSeq, s.ended = "content_filter", "", true
				break
			}
			return nil, s.fail(err)
		}
		if c.Usage != nil {
			u := *c.Usage
			s.usage = &u
		}
		if c.FinishReason != "" {
			s.finish, s.stopSeq = c.FinishReason, c.StopSequence
		}
		if c.SystemFingerprint != "" {
			s.fingerprint = c.SystemFingerprint
		}
		if c.ServiceTier != "" {
			s.tier = c.ServiceTier
		}
		if c.Refusal != "" {
			s.refusal.WriteString(c.Refusal) // sent whole at the end (see WriteOpenAIStream)
		}
		if c.Logprobs != nil {
			s.logprobs.Append(c.Logprobs)
		}
		if len(c.Sources) > 0 {
			s.sources = append(s.sources, c.Sources...)
			if s.p.req.showSources && c.Text == "" && len(c.ToolCalls) == 0 && c.Reasoning == nil {
				return s.sourcesChunk(c.Sources), nil
			}
		}
		if c.Reasoning != nil {
			s.thinking = true
			if !s.p.hidesReasoning() && !c.Reasoning.Started() {
				return s.thoughtChunk(*c.Reasoning), nil
			}
		}
		if c.Text != "" || len(c.ToolCalls) > 0 || c.Audio != nil {
			s.thinking = false
		}
		if len(c.ToolCalls) > 0 {
			s.deltas, s.next = append(s.deltas[:0], c.ToolCalls...), 0
		}
		if c.Audio != nil {
			// The piece of audio goes first; text and calls that came with it follow.
			s.pending = c.Text
			return s.audioChunk(c.Audio), nil
		}
		if c.Text = s.spliced(c.Text); c.Text != "" {
			return s.chunk(c.Text), nil
		}
		if len(c.ToolCalls) > 0 {
			s.next = 1
			return s.toolChunk(s.deltas[0]), nil
		}
	}
	return nil, s.complete()
}

// searchSources are the web pages the provider's search found so far.
func (s *ResponseStream) searchSources() []providers.Source { return s.sources }

// sourcesChunk is the event of web pages the provider's search found.
func (s *ResponseStream) sourcesChunk(sources []providers.Source) *Chunk {
	return &Chunk{Provider: s.t.provider, Model: s.t.model, ResponseMessageID: s.p.msgID, Type: EventSources, Search: &SearchResults{Sources: sources}}
}

// silence is how long the upstream may now be silent: the stream's idle timeout, or the
// longer allowance of a model reasoning.
func (s *ResponseStream) silence() time.Duration {
	if s.thinking {
		return s.p.timing.reasoning
	}
	return s.p.timing.idle
}

// reasoningBuild is a reasoning block being assembled from its fragments.
type reasoningBuild struct {
	text                                        strings.Builder
	signature, redacted, encrypted, encryptedBy string
}

// maxStreamReasoningBlocks bounds the reasoning blocks assembled from one stream (an
// upstream's index beyond it is relayed but not kept).
const maxStreamReasoningBlocks = 1024

// thoughtChunk records the reasoning fragment d and returns its event; d's index is made
// the answer's own (after the reasoning of attempts it continues).
func (s *ResponseStream) thoughtChunk(d providers.ReasoningDelta) *Chunk {
	d.Index += s.thoughtBase
	if d.Index >= 0 && d.Index < maxStreamReasoningBlocks {
		for len(s.thoughts) <= d.Index {
			s.thoughts = append(s.thoughts, reasoningBuild{})
		}
		b := &s.thoughts[d.Index]
		b.text.WriteString(d.Text)
		if d.Signature != "" {
			b.signature = d.Signature
		}
		if d.Redacted != "" {
			b.redacted = d.Redacted
		}
		if d.Encrypted != "" {
			b.encrypted, b.encryptedBy = d.Encrypted, d.EncryptedBy
		}
	}
	return &Chunk{Provider: s.t.provider, Model: s.t.model, ResponseMessageID: s.p.msgID, Type: EventReasoning, Reasoning: &d}
}

// thoughtText is the text of reasoning block i (the answer's index, as Chunk.Reasoning has
// it) assembled so far, for writers that send a block whole once it is complete.
func (s *ResponseStream) thoughtText(i int) string {
	if i < 0 || i >= len(s.thoughts) {
		return ""
	}
	return s.thoughts[i].text.String()
}

// reasoning returns the reasoning blocks assembled from the stream's fragments.
func (s *ResponseStream) reasoning() []providers.ReasoningBlock { return s.reasoningFrom(0) }

// reasoningFrom returns the reasoning blocks from index from on (an attempt's own, after
// the ones of the attempts it continued).
func (s *ResponseStream) reasoningFrom(from int) []providers.ReasoningBlock {
	if len(s.thoughts) <= from {
		return nil
	}
	out := make([]providers.ReasoningBlock, 0, len(s.thoughts)-from)
	for i := from; i < len(s.thoughts); i++ {
		b := &s.thoughts[i]
		if b.text.Len() == 0 && b.signature == "" && b.redacted == "" && b.encrypted == "" {
			continue // an index the upstream skipped
		}
		out = append(out, providers.ReasoningBlock{Text: b.text.String(), Signature: b.signature, Redacted: b.redacted, Encrypted: b.encrypted,
			EncryptedBy: b.encryptedBy})
	}
	return out
}

// toolCallBuild is a tool call being assembled from its fragments.
type toolCallBuild struct {
	id, name, signature string
	args                []byte
}

// toolChunk records the tool-call fragment d and returns its event.
func (s *ResponseStream) toolChunk(d providers.ToolCallDelta) *Chunk {
	if d.Index >= 0 && d.Index < maxStreamToolCalls {
		for len(s.calls) <= d.Index {
			s.calls = append(s.calls, toolCallBuild{})
		}
		b := &s.calls[d.Index]
		if b.args == nil {
			b.args = make([]byte, 0, 512) // most calls' arguments fit: no regrowth per fragment
		}
		if d.ID != "" {
			b.id = d.ID
		}
		if d.Name != "" {
			b.name = d.Name
		}
		if d.ThoughtSignature != "" {
			b.signature = d.ThoughtSignature // whichever fragment it came with
		}
		b.args = append(b.args, d.Arguments...)
	}
	return &Chunk{Provider: s.t.provider, Model: s.t.model, ResponseMessageID: s.p.msgID, Type: EventToolCall, ToolCall: d}
}

// maxStreamToolCalls bounds the tool calls assembled from one stream (an upstream's index
// beyond it is relayed but not kept).
const maxStreamToolCalls = 1024

// toolCalls returns the tool calls assembled from the stream's fragments.
func (s *ResponseStream) toolCalls() []providers.ToolCall {
	if len(s.calls) == 0 {
		return nil
	}
	out := make([]providers.ToolCall, 0, len(s.calls))
	for _, b := range s.calls {
		if b.id == "" && b.name == "" && len(b.args) == 0 {
			continue // an index the upstream skipped
		}
		out = append(out, providers.ToolCall{ID: b.id, Name: b.name, Arguments: string(b.args), ThoughtSignature: b.signature})
	}
	return out
}

// fail ends the stream after the first fragment: it records the failed attempt and returns
// the sticky *StreamError.
func (s *ResponseStream) fail(err error) error {
	s.ending.Store(true)
	if pe := (*providers.Error)(nil); s.usage == nil && errors.As(err, &pe) && pe.Usage != nil {
		s.usage = pe.Usage // what the upstream billed for a blocked answer
	}
	err, kind := s.classify(err)
	// The caller went away (a client that disconnected, or closed the stream while this
	// Recv waited): the attempt was cancelled, not failed.
	closed := s.closedEarly.Load()
	gone := closed || s.ctx.Err() != nil && errors.Is(err, context.Canceled)
	cut := false
	if cause := context.Cause(s.ctx); gone && !closed && cause != nil && !errors.Is(cause, context.Canceled) &&
		!errors.Is(cause, errBackgroundCancelled) && !errors.Is(cause, errBackgroundLost) {
		// Cancelled with a cause (the server's shutdown cutting its requests): the event
		// ending the stream says why, not "context canceled". A background response its
		// owner cancelled or deleted is the caller's doing (client_gone), not a cut.
		err, cut = cause, true
	}
	s.Close()
	if n := len(s.p.attempts); n > 0 && !s.recorded {
		a := &s.p.attempts[n-1]
		a.Outcome, a.Kind, a.Error, a.Err = OutcomeError, kind.String(), err.Error(), err
		switch {
		case closed:
			a.Outcome, a.Kind = OutcomeCancelled, "closed_early"
		case cut:
			a.Outcome, a.Kind = OutcomeCancelled, "cut"
		case gone:
			a.Outcome, a.Kind = OutcomeCancelled, "client_gone"
		}
		a.LatencyMS = s.g.opts.Now().Sub(s.begin).Milliseconds()
	}
	s.chargeUnfinished()
	if gone {
		s.g.log.DebugContext(s.ctx, "completions: the caller went away mid-stream", "model", s.t.name)
	} else {
		s.g.log.WarnContext(s.ctx, "completions: stream failed after it started", "model", s.t.name, "kind", kind.String(), "err", err)
	}
	s.err = &StreamError{Model: s.t.name, Kind: kind.String(), Err: err}
	s.observeEnd(s.err)
	return s.err
}

// chargeUnfinished charges what a stream that did not complete used: its earlier parts and
// the answering attempt so far (the upstream bills them).
// What it charged is kept (spent) for the Observer's record of the stream.
func (s *ResponseStream) chargeUnfinished() {
	s.accounted = true
	u, estimated := s.attemptUsage()
	hadParts := len(s.parts) > 0
	parts, partsEstimated := s.accountParts(u)
	s.spent = &spentUsage{parts, partsEstimated}
	if !s.recorded {
		c := s.g.costsAt(s.p, s.t, u)
		s.g.account(s.ctx, s.p, s.t, u, c, false, estimated, s.g.opts.Now().Sub(s.begin))
		if !s.p.replayed() { // a replayed answer called no model: it cost nothing
			own := usageOf(u, c)
			s.spent.usage = addUsage(s.spent.usage, own)
			s.spent.estimated = s.spent.estimated || estimated
			if n := len(s.p.attempts); hadParts && n > 0 {
				// Not the only attempt billed: its own share is on it (as complete does).
				s.p.attempts[n-1].Usage, s.p.attempts[n-1].Estimated = &own, estimated
			}
		}
	}
}

// observeEnd reports the stream's end to the Observer, once: the final response, or err.
func (s *ResponseStream) observeEnd(err error) {
	s.observed.Do(func() {
		var ttft time.Duration
		if !s.firstAt.IsZero() {
			ttft = s.firstAt.Sub(s.p.start)
		}
		if err == nil && s.final != nil {
			s.g.observeResponse(s.ctx, s.p, !s.p.collected, s.final, ttft)
			return
		}
		var partial func() *Response
		if !s.p.collected { // a non-streamed request's caller was delivered nothing
			partial = s.partial
		}
		var spent spentUsage
		if s.spent != nil {
			spent = *s.spent
		}
		s.g.observePartial(s.ctx, s.p, !s.p.collected, err, &s.t, ttft, partial, spent.usage, spent.estimated)
	})
}

// partial is what the stream delivered so far, for the record of a stream that ended
// before its end (RequestRecord.Partial); nil when nothing was.
func (s *ResponseStream) partial() *Response {
	if s.text.Len() == 0 && len(s.calls) == 0 && len(s.thoughts) == 0 && s.refusal.Len() == 0 && !s.audio.started {
		return nil
	}
	return &Response{Provider: s.t.provider, Model: s.t.model, ResponseMessageID: s.p.msgID, ConversationID: s.p.convID,
		Message: assistantText(s.text.String()), ToolCalls: s.toolCalls(), Reasoning: s.reasoning(), Refusal: s.refusal.String(),
		Sources: s.sources, Audio: s.audio.answer()}
}

// attemptUsage is the usage of the answering attempt: what its upstream reported or, when
// it reported none, a local count of its request and of what it streamed so far (true) —
// the prompt as the upstream counted it at the stream's start when it did (Claude's
// message_start; its message_delta's usage, when it came, is the reported one).
func (s *ResponseStream) attemptUsage() (providers.Usage, bool) {
	var u providers.Usage
	if s.usage != nil {
		u = *s.usage
	}
	if u.PromptTokens != 0 || u.CompletionTokens != 0 {
		return u, false
	}
	req := s.p.preq
	req.Model = s.t.model
	text := s.text.String()
	if s.prefixLen > 0 && s.prefixLen <= len(text) {
		req.AssistantPrefix, text = text[:s.prefixLen], text[s.prefixLen:]
	}
	est := providers.EstimateUsage(s.t.name, &req, &providers.Response{Text: text, ToolCalls: s.toolCalls(), Refusal: s.refusal.String(), Reasoning: s.reasoningFrom(s.thoughtBase),
		Audio: s.audio.answer()})
	if r, ok := s.up.(providers.PromptUsageReporter); ok && !s.p.replayed() {
		if pu, ok := r.PromptUsage(); ok {
			// The upstream counted the prompt at the stream's start (Claude's message_start)
			// but the stream ended before the whole usage (message_delta's): the prompt is
			// billed by its count, only the answer by the local one. Its audio part is the
			// upstream's too: the local estimate of the recordings was a part of the local
			// prompt count it replaces.
			est.PromptTokens, est.CachedTokens, est.CacheCreationTokens, est.CacheCreation1hTokens, est.PromptAudioTokens =
				pu.PromptTokens, pu.CachedTokens, pu.CacheCreationTokens, pu.CacheCreation1hTokens, min(pu.PromptAudioTokens, pu.PromptTokens)
		}
	}
	return est, true
}

// complete builds the final response, accounts and saves the turn.
func (s *ResponseStream) complete() error {
	s.ending.Store(true)
	s.accounted = true
	s.Close()
	u, estimated := s.attemptUsage()
	now := s.g.opts.Now()
	if n := len(s.p.attempts); n > 0 {
		s.p.attempts[n-1].LatencyMS = now.Sub(s.begin).Milliseconds()
		if sk, ok := s.up.(providers.EventSkipper); ok {
			s.p.attempts[n-1].SkippedEvents = sk.SkippedEvents()
		}
	}
	resp := s.g.response(s.p, s.t, s.text.String(), u, s.finish, s.firstAt)
	resp.StopSequence = s.stopSeq
	resp.ToolCalls = s.toolCalls()
	resp.Reasoning = s.reasoning()
	resp.Sources = s.sources
	resp.Refusal = s.refusal.String()
	resp.SystemFingerprint, resp.ServiceTier = s.fingerprint, s.tier
	resp.Logprobs = answerLogprobs(&s.p.preq, &s.logprobs)
	resp.Audio = s.audio.answer()
	if n := s.audio.undecodable; n > 0 {
		s.g.log.WarnContext(s.ctx, "completions: pieces of a streamed spoken answer were not base64; left out of the whole answer", "model", s.t.name, "pieces", n)
	}
	resp.markEstimated(estimated)
	if h := s.p.cache.hit; h != nil {
		resp.UsageEstimated = h.answer.Estimated
	}
	s.g.account(s.ctx, s.p, s.t, u, resp.Usage.Costs, true, estimated, now.Sub(s.begin))
	if !s.firstAt.IsZero() && s.firstAt.After(s.begin) && !s.p.replayed() {
		s.g.latency.answered(s.t.name, s.firstAt.Sub(s.begin), now.Sub(s.begin), u.CompletionTokens)
	}
	// The earlier parts (a broken start continued, hedged starts that lost) were billed by
	// their upstreams: they are accounted whether or not a post_call guardrail blocks.
	if len(s.parts) > 0 {
		s.p.attempts[len(s.p.attempts)-1].Usage = ptr(resp.Usage)
		parts, partsEstimated := s.accountParts(u)
		resp.Usage = addUsage(resp.Usage, parts)
		resp.UsageEstimated = resp.UsageEstimated || partsEstimated
		resp.Continued = s.continued
		resp.Attempts = s.p.attempts
	}
	if err := s.guardAnswer(resp); err != nil {
		return err
	}
	s.g.keepReasoning(s.p, resp)
	s.g.storeAnswer(s.p, resp, resp.UsageEstimated)
	if err := s.g.saveTurn(s.ctx, s.p, resp); err != nil {
		s.g.notSaved(s.ctx, s.p, resp, err) // the client has the answer already
	}
	s.final = resp
	s.observeEnd(nil)
	return io.EOF
}

// NotifyWait makes Recv call fn, on Recv's goroutine, whenever it is about to wait for the
// upstream, and reports whether the upstream's stream supports it (see
// providers.WaitNotifier); when it does not, fn is never called and a relay should flush
// after every fragment. The time fn takes (a flush to a slow client) does not count as an
// upstream stall.
func (s *ResponseStream) NotifyWait(fn func()) bool {
	wn, ok := s.up.(providers.WaitNotifier)
	if !ok {
		return false
	}
	if fn == nil {
		wn.NotifyWait(nil)
		return true
	}
	wn.NotifyWait(func() {
		s.timer.Stop()
		fn()
		s.timer.Reset(s.silence())
	})
	return true
}

// Cache says how the response cache took part in the answer (nil when it did not): a
// relay sets its headers from it before the first fragment.
func (s *ResponseStream) Cache() *CacheStatus { return s.p.cache.status(s.g.opts.Now()) }

// Response returns the final response once Recv returned io.EOF, else nil.
func (s *ResponseStream) Response() *Response { return s.final }

// Close stops the stream and releases the upstream connection; it is safe to call more
// than once and from another goroutine.
func (s *ResponseStream) Close() error {
	early := s.ending.CompareAndSwap(false, true)
	if early {
		s.closedEarly.Store(true)
	}
	s.closeOne.Do(func() {
		s.upMu.Lock()
		s.closing = true
		s.timer.Stop()
		s.up.Close()
		s.cancel()
		s.upMu.Unlock()
		s.undl()
	})
	if early {
		// The caller left before the end: what the upstream streamed so far is billed, so
		// it is charged (budget, ledger) — after a Recv running in another goroutine, which
		// the closed upstream ends, has had its say.
		err := fmt.Errorf("completions: stream closed before its end: %w", context.Canceled)
		s.recvMu.Lock()
		if !s.accounted {
			if n := len(s.p.attempts); n > 0 && !s.recorded {
				a := &s.p.attempts[n-1]
				a.Outcome, a.Kind, a.Error, a.Err = OutcomeCancelled, "closed_early", err.Error(), err
				a.LatencyMS = s.g.opts.Now().Sub(s.begin).Milliseconds()
			}
			s.chargeUnfinished()
		}
		if s.err == nil && s.final == nil {
			// A later Recv answers this instead of reading the closed upstream (which would
			// end, and charge, the stream a second time).
			s.err = &StreamError{Model: s.t.name, Kind: "closed_early", Err: err}
		}
		s.recvMu.Unlock()
		s.observeEnd(err)
	}
	return nil
}
