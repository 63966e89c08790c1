package completions

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/switchyard-ai/switchyard/providers"
)

// Mid-stream continuation: when a stream breaks or stalls after fragments were sent and a
// later model of the request can continue a partial answer (providers.Prefiller: Anthropic,
// and OpenAI-format servers with a prefill mode such as Mistral and OpenRouter), the gateway
// sends the conversation plus the text already streamed as an assistant prefix to that
// model and splices what it writes into the same client stream. The client sees one answer
// ending normally; the final response says which model continued from which character
// (Response.Continued, Attempt.ContinuedFrom), and its usage adds up both attempts (the
// broken one's estimated when it reported none). Not for answers with tool calls or a JSON
// response format, and never after a content filter; when the next model refuses the
// prefill, the original error is reported unchanged.

// Continuation says that a broken stream was continued by another model.
type Continuation struct {
	// Model is the "provider/model" that continued the answer.
	Model string `json:"model"`
	// FromChar is the character (Unicode code point) offset of the answer where it took
	// over.
	FromChar int `json:"from_char"`
	// After is the failure of the attempt it continued (an ErrorKind name).
	After string `json:"after"`
}

// part is an attempt billed besides the answering one: the broken beginning of a continued
// answer, or a hedged start that lost.
type part struct {
	t       target
	attempt int              // index in plan.attempts
	usage   *providers.Usage // as reported; nil: estimated at the end
	chars   int              // characters of the answer it produced (for the estimate)
	thought int              // characters of the reasoning it showed (for the estimate)
	latency time.Duration
}

// classify turns the error that ended an upstream stream into the one to report.
func (s *ResponseStream) classify(err error) (error, providers.ErrorKind) {
	kind := providers.KindOf(err)
	switch {
	case s.ctx.Err() != nil:
		return s.ctx.Err(), providers.KindUnknown
	case deadlineHit(s.dctx):
		return timeoutError(s.t, "answer before the request deadline", s.p.timing.deadline.Sub(s.p.start)), providers.KindTimeout
	case s.whole.passed():
		return timeoutError(s.t, "no complete response", s.whole.limit), providers.KindTimeout
	case s.stalled.Load():
		return timeoutError(s.t, "no stream fragment", s.p.timing.idle), providers.KindTimeout
	}
	return err, kind
}

// canContinue reports whether a stream that failed with kind may be continued: after
// text (not of a tool call or a JSON answer), on a model that continues it; or after
// reasoning alone, on any later model, which answers afresh (its reasoning follows the
// first model's; the client has seen no answer yet). A stream its caller closed is not,
// nor one that asked for log probabilities: a continuation's tokens are another model's,
// whose log probabilities would not be of the same answer (the stream fails as it broke).
func (s *ResponseStream) canContinue(kind providers.ErrorKind) bool {
	// A spoken answer is not continued: another model cannot go on with its voice.
	if s.p.preq.Logprobs || s.p.preq.Audio != nil || kind == providers.KindContentFilter || kind == providers.KindUnknown || s.ctx.Err() != nil || deadlineHit(s.dctx) || len(s.calls) > 0 ||
		s.closedEarly.Load() { // its caller closed it: nobody reads a continuation
		return false
	}
	if s.text.Len() == 0 {
		return len(s.thoughts) > 0
	}
	return !s.p.preq.ResponseFormat.JSON()
}

// continueAfter tries to continue the answer on the next models that can take a prefill,
// after the upstream failed with err. It reports true when one took over (the stream then
// reads from it); false leaves the stream as it was, for fail to end with err.
func (s *ResponseStream) continueAfter(err error) bool {
	err, kind := s.classify(err)
	if !s.canContinue(kind) {
		return false
	}
	prefix := s.text.String()
	from := utf8.RuneCountInString(prefix)
	var next []int
	for i := s.idx + 1; i < len(s.p.targets); i++ {
		if pf, ok := s.p.targets[i].p.(providers.Prefiller); prefix == "" || ok && pf.SupportsPrefill() {
			next = append(next, i)
		}
	}
	if len(next) == 0 || s.p.calls >= MaxUpstreamAttempts {
		return false
	}
	// The broken attempt ends here; it is billed as a part of the answer.
	s.upMu.Lock()
	s.timer.Stop()
	s.up.Close()
	s.cancel()
	s.upMu.Unlock()
	n := len(s.p.attempts) - 1
	a := &s.p.attempts[n]
	a.Outcome, a.Kind, a.Error, a.Err = OutcomeError, kind.String(), err.Error(), err
	a.LatencyMS = s.g.opts.Now().Sub(s.begin).Milliseconds()
	s.g.breakers.record(s.t.name, err, s.g.opts.Now(), s.p.timing.tight)
	s.p.drop(s.t.name) // the broken call is over: its slot in flight is free
	thought := 0
	for _, b := range s.reasoningFrom(s.thoughtBase) {
		thought += utf8.RuneCountInString(b.Text)
	}
	s.parts = append(s.parts, part{t: s.t, attempt: n, usage: s.usage, chars: from - s.partChars(), thought: thought, latency: s.g.opts.Now().Sub(s.begin)})
	s.g.log.WarnContext(s.ctx, "completions: stream broke mid-answer; continuing on the next model", "model", s.t.name, "kind", kind.String(), "from_char", from)

	req := s.p.preq
	req.AssistantPrefix = prefix
	for _, i := range next {
		t := s.p.targets[i]
		if s.p.calls >= MaxUpstreamAttempts {
			continue
		}
		// No queueing for a slot mid-stream: the indexes in next must stay put.
		if ok, _ := s.g.admit(s.dctx, s.p, i, false); !ok {
			continue
		}
		s.p.calls++
		begin := s.g.opts.Now()
		actx, span := s.g.traceAttempt(s.dctx)
		at, cerr := s.g.openAttempt(actx, s.p, t, &req)
		s.g.breakers.record(t.name, cerr, s.g.opts.Now(), s.p.timing.tight)
		if cerr != nil {
			s.p.drop(t.name)
			s.p.attempts = append(s.p.attempts, Attempt{Model: t.name, ModelGroup: t.group, Outcome: OutcomeError, Kind: providers.KindOf(cerr).String(),
				Error: cerr.Error(), Err: cerr, LatencyMS: s.g.opts.Now().Sub(begin).Milliseconds(), ContinuedFrom: &from, Started: begin, MaxTokens: s.g.maxTokensFor(s.p.req, req.MaxTokens, t), SpanID: span})
			// The model refused to continue: report the original failure, unmasked.
			s.restoreFailure(err)
			return false
		}
		s.t, s.idx, s.begin = t, i, begin
		s.upMu.Lock()
		s.up, s.cancel, s.timer, s.stalled, s.whole = at.up, at.cancel, at.timer, at.stalled, at.whole
		if s.closing {
			// Closed from another goroutine while the continuation opened: it is the
			// answering attempt, stopped at once, and ends (billed) as the stream closed
			// early (Close, fail).
			at.close()
		}
		s.upMu.Unlock()
		s.pending, s.ended, s.usage, s.finish, s.stopSeq = at.first, at.ended, at.usage, at.finish, at.stopSeq
		s.fingerprint, s.tier = at.fingerprint, at.tier // the continuing upstream's, or none
		s.deltas, s.next = at.deltas, 0
		s.pendingThought, s.thoughtBase = at.thought, len(s.thoughts)
		s.prefixLen = len(prefix)
		s.trimSpace = strings.TrimRightFunc(prefix, unicode.IsSpace) != prefix
		s.continued = &Continuation{Model: t.name, FromChar: from, After: kind.String()}
		s.p.attempts = append(s.p.attempts, Attempt{Model: t.name, ModelGroup: t.group, Outcome: OutcomeOK, ContinuedFrom: &from, Started: begin,
			MaxTokens: s.g.maxTokensFor(s.p.req, req.MaxTokens, t), SpanID: span})
		return true
	}
	s.restoreFailure(err)
	return false
}

// partChars is how many characters the earlier broken parts produced.
func (s *ResponseStream) partChars() int {
	n := 0
	for _, p := range s.parts {
		n += p.chars
	}
	return n
}

// restoreFailure leaves the stream failed with err (the original failure) for fail.
func (s *ResponseStream) restoreFailure(err error) {
	s.ended, s.usage, s.recorded = false, nil, true // the broken attempt is recorded and in parts
	s.upMu.Lock()
	s.up = failedStream{err}
	s.upMu.Unlock()
}

// failedStream is an upstream stream that has failed with err.
type failedStream struct{ err error }

func (f failedStream) Recv() (providers.Chunk, error) { return providers.Chunk{}, f.err }
func (f failedStream) Close() error                   { return nil }

// spliced drops the leading whitespace of a continuation whose prefix ended in whitespace
// that the client already has (prefills are sent without it).
func (s *ResponseStream) spliced(frag string) string {
	if !s.trimSpace || frag == "" {
		return frag
	}
	frag = strings.TrimLeftFunc(frag, unicode.IsSpace)
	if frag != "" {
		s.trimSpace = false
	}
	return frag
}

// accountParts bills the parts of the answer besides the answering attempt, estimating the
// usage a part did not report from final (the answering attempt's usage), records each
// part's usage on its attempt, and returns their sum and whether any was estimated.
func (s *ResponseStream) accountParts(final providers.Usage) (Usage, bool) {
	var sum Usage
	anyEstimated := false
	for _, p := range s.parts {
		u, estimated := providers.Usage{}, p.usage == nil
		if p.usage != nil {
			u = *p.usage
		} else {
			// The prompt is the answering attempt's, without the prefix it was given.
			u.PromptTokens = max(0, final.PromptTokens-estimateTokens(s.partChars()))
			u.CompletionTokens = estimateTokens(p.chars)
			if p.chars == 0 { // a hedged start that lost, or reasoning only: the same prompt
				u.PromptTokens = final.PromptTokens
			}
			if p.thought > 0 { // the reasoning it showed is output it was billed for
				u.ReasoningTokens = estimateTokens(p.thought)
				u.CompletionTokens += u.ReasoningTokens
			}
		}
		us := usageOf(u, s.g.costsAt(s.p, p.t, u))
		s.g.account(s.ctx, s.p, p.t, u, us.Costs, false, estimated, p.latency)
		s.p.attempts[p.attempt].Usage, s.p.attempts[p.attempt].Estimated = &us, estimated
		sum = addUsage(sum, us)
		anyEstimated = anyEstimated || estimated
	}
	s.parts = nil
	return sum, anyEstimated
}

// estimateTokens is the usual rough count of tokens in chars characters of English.
func estimateTokens(chars int) int { return (chars + 3) / 4 }

// addUsage adds two usages, costs included; the price is known when both are.
func addUsage(a, b Usage) Usage {
	known := (a.PromptTokens == 0 && a.CompletionTokens == 0) || a.Costs.PriceKnown
	known = known && ((b.PromptTokens == 0 && b.CompletionTokens == 0) || b.Costs.PriceKnown)
	return Usage{
		PromptTokens: a.PromptTokens + b.PromptTokens, CompletionTokens: a.CompletionTokens + b.CompletionTokens,
		TotalTokens: a.TotalTokens + b.TotalTokens, ReasoningTokens: a.ReasoningTokens + b.ReasoningTokens,
		CachedTokens: a.CachedTokens + b.CachedTokens, CacheCreationTokens: a.CacheCreationTokens + b.CacheCreationTokens,
		CacheCreation1hTokens: a.CacheCreation1hTokens + b.CacheCreation1hTokens,
		WebSearches:           a.WebSearches + b.WebSearches,
		PromptAudioTokens:     a.PromptAudioTokens + b.PromptAudioTokens,
		CompletionAudioTokens: a.CompletionAudioTokens + b.CompletionAudioTokens,
		Costs: Costs{InputTokensCost: a.Costs.InputTokensCost + b.Costs.InputTokensCost, OutputTokensCost: a.Costs.OutputTokensCost + b.Costs.OutputTokensCost,
			TotalTokensCost: a.Costs.TotalTokensCost + b.Costs.TotalTokensCost, PriceKnown: known, SearchCost: a.Costs.SearchCost + b.Costs.SearchCost},
	}
}

func ptr[T any](v T) *T { return &v }
