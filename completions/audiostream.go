package completions

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// errNoTranscript is the cause of a streamed transcription attempt's context ending
// because no event came in time.
var errNoTranscript = errors.New("no transcript in time")

// streamsTranscription reports whether every target streams a transcription: OpenAI's
// gpt-4o transcription models behind an adapter that streams them. A request whose models
// do not (whisper-1 ignores stream on OpenAI too) is answered whole.
func streamsTranscription(targets []target) bool {
	for _, t := range targets {
		if _, ok := t.p.(providers.TranscriptionStreamer); !ok || !transcribeModel(t.model) {
			return false
		}
	}
	return len(targets) > 0
}

// TranscribeStream answers a transcription request with stream on (OpenAI's stream=true):
// the model's transcript.text.delta and transcript.text.done events as they come. Models
// that do not stream (whisper-1, a group with one) answer whole, as Transcribe answers
// (TranscriptionStream.Whole), as OpenAI answers whisper-1 with stream on. The model is
// retried, and a group's other members tried, under Transcribe's rules until its first
// event; a failure after it ends the stream (Next returns it). The returned stream must be
// closed: Close bills the call — the done event's usage, else the audio sent as
// estimatedAudio estimates it, marked estimated — and records it (operation "transcription"). A
// translation cannot stream (a *ValidationError naming stream). Errors as Transcribe's.
func (g *Gateway) TranscribeStream(ctx context.Context, scope Scope, req *TranscriptionRequest) (*TranscriptionStream, error) {
	if g.breakers == nil {
		return nil, ErrZeroGateway
	}
	if req == nil {
		return nil, errNilRequest()
	}
	if req.Translate {
		return nil, invalid("stream", "translations are not streamed (OpenAI's translations take no stream); leave stream unset")
	}
	whole := *req
	whole.Stream = false
	preq, err := whole.validate()
	if err != nil {
		return nil, err
	}
	targets, err := g.audioTargets(req.Model, false)
	if err != nil {
		return nil, err
	}
	if !streamsTranscription(targets) {
		res, err := g.Transcribe(ctx, scope, &whole)
		if err != nil {
			return nil, err
		}
		return &TranscriptionStream{ContentType: res.ContentType, Model: res.Model, Attempts: res.Attempts, Whole: res}, nil
	}
	if scope, err = g.withTagBudgets(ctx, scope, req.Tags); err != nil {
		return nil, err
	}
	p, err := g.audioPlan(scope, req.Model, false, req.Tags)
	if err != nil {
		return nil, err
	}
	if b := scope.Budget; b != nil {
		if _, err := g.enterBudget(ctx, p, b, false, &p.targets); err != nil {
			return nil, err
		}
	}
	s := &TranscriptionStream{g: g, p: p, ctx: ctx, file: preq.File}
	usdBound := scope.Budget != nil && scope.Budget.costBound()
	var answerAsAsked func(*providers.TranscriptionResponse)
	dctx, cancel := p.withDeadline(ctx)
	err = g.run(dctx, p, func(ctx context.Context, t target) error {
		s.begin = g.opts.Now()
		var up *providers.TranscriptionStream
		var first []byte
		// The events after the first come uncut, as a speech answer's audio does.
		cancelAttempt, err := g.firstBounded(ctx, p, t, errNoTranscript, "no transcript", func(actx context.Context) (func(), error) {
			// Asked as Transcribe asks it (a text answer as JSON), in case the upstream
			// answers whole after all; the events are the same.
			r, finish := upstreamTranscription(preq, t, usdBound)
			var err error
			if up, err = t.p.(providers.TranscriptionStreamer).TranscribeStream(actx, &r); err != nil {
				return nil, err
			}
			if up.Whole != nil {
				answerAsAsked = finish
				return nil, nil // answered whole: nothing more to come
			}
			first, err = up.Next()
			if errors.Is(err, io.EOF) {
				err = &providers.Error{Provider: t.provider, Model: t.model, Kind: providers.KindStreamBroken, Message: "the transcription stream has no events"}
			}
			if err != nil {
				up.Close()
				return nil, err
			}
			first = bytes.Clone(first)
			return func() { up.Close() }, nil
		})
		if err != nil {
			return err
		}
		s.up, s.first, s.used, s.cancelAttempt = up, first, t, cancelAttempt
		s.firstAt = g.opts.Now()
		return nil
	})
	if err != nil {
		cancel()
		g.observeOpFailure(ctx, p, OperationTranscription, true, err)
		p.ended()
		return nil, err
	}
	s.cancel = cancel
	s.Model, s.Attempts, s.ContentType = s.used.name, cloneAttempts(p.attempts), "text/event-stream"
	if w := s.up.Whole; w != nil {
		// The upstream answered whole after all: its answer, in the form asked as
		// Transcribe gives it, and usage, billed at Close.
		answerAsAsked(w)
		s.usage, s.eof = w.Usage, true
		s.ContentType = w.ContentType
		s.Whole = &TranscriptionResult{Body: w.Body, ContentType: w.ContentType, Model: s.used.name, Usage: w.Usage, Attempts: s.Attempts}
	}
	return s, nil
}

// TranscriptionStream is a streamed transcription (Gateway.TranscribeStream): its events,
// read with Next as the model sends them, or, when the model answered whole, Whole. Close
// it in every case: Close ends the request (billing and records).
type TranscriptionStream struct {
	// ContentType is "text/event-stream", or the whole answer's.
	ContentType string
	// Model is the "provider/model" that answers.
	Model    string
	Attempts []Attempt
	// Whole is the answer of a model that did not stream it (nil while streaming): write
	// its Body with its ContentType.
	Whole *TranscriptionResult

	g             *Gateway
	p             *plan
	ctx           context.Context
	file          []byte
	up            *providers.TranscriptionStream
	first         []byte
	used          target
	usage         providers.AudioUsage
	begin         time.Time
	firstAt       time.Time
	cancel        context.CancelFunc
	cancelAttempt func()
	eof           bool
	err           error
	once          sync.Once
}

// Next returns the data of the next event (valid until the next call) — OpenAI's
// transcript.text.delta and transcript.text.done JSON as the model sent them — or io.EOF
// after the last. A failure after the first event is returned as it is (no retry then).
func (s *TranscriptionStream) Next() ([]byte, error) {
	if s.Whole != nil || s.eof {
		return nil, io.EOF
	}
	if s.err != nil {
		return nil, s.err
	}
	var data []byte
	if s.first != nil {
		data, s.first = s.first, nil
	} else {
		var err error
		if data, err = s.up.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				s.eof = true
			} else {
				s.err = err
			}
			return nil, err
		}
	}
	if u := providers.TranscriptionEventUsage(data); u != (providers.AudioUsage{}) {
		s.usage = u
	}
	return data, nil
}

// Close ends the request: the upstream call is released, the call billed to the scope's
// budget and recorded, and the observer told how it ended (ok when the events were read
// to their end). A stream whose done event reported no usage (cut, or left early) is
// billed the audio sent (estimatedAudio: its length and audio tokens), marked estimated. It is safe to call more
// than once; a stream of a request answered by Transcribe (Whole without a call here)
// was billed by it.
func (s *TranscriptionStream) Close() error {
	if s.g == nil {
		return nil
	}
	s.once.Do(func() {
		s.up.Close()
		s.cancelAttempt()
		s.cancel()
		g, p := s.g, s.p
		now := g.opts.Now()
		estimated := false
		if s.usage.Seconds == 0 && s.usage.InputTokens+s.usage.OutputTokens == 0 {
			// Cut or left before the done event: the audio sent, as an over-cap answer's
			// is estimated (its length, and the audio tokens of that length the
			// token-priced models that stream bill); the text out is not counted.
			s.usage = estimatedAudio(s.file)
			estimated = s.usage.Seconds > 0
		}
		costs := g.audioCost(p, s.used, s.usage)
		u := providers.Usage{PromptTokens: s.usage.InputTokens, CompletionTokens: s.usage.OutputTokens}
		g.account(s.ctx, p, s.used, u, costs, s.eof, estimated, now.Sub(s.begin))
		p.ended()
		if g.opts.Observer == nil {
			return
		}
		r := RequestRecord{Owner: p.scope.Owner, Tag: p.scope.Tag, Operation: OperationTranscription, Stream: true, Outcome: RequestOK, Tags: p.req.Tags,
			Provider: s.used.provider, Model: s.used.name, Attempts: cloneAttempts(p.attempts),
			Usage:          Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens, Costs: costs},
			UsageEstimated: estimated, Start: p.start, Latency: now.Sub(p.start), TTFT: s.firstAt.Sub(p.start)}
		r.Outcome, r.Err = relayedOutcome(s.ctx, s.eof, s.err)
		g.observe(s.ctx, p, r)
	})
	return nil
}

// WriteTranscriptionStream sends s to w — its events as server-sent events, as OpenAI
// streams a transcription, or its whole answer — and closes s. A failure after the first
// event ends the stream with a data event holding an OpenAI error object, which the
// OpenAI SDKs raise.
func WriteTranscriptionStream(w http.ResponseWriter, s *TranscriptionStream) error {
	defer s.Close()
	if s.Whole != nil {
		w.Header().Set("Content-Type", cmp.Or(s.Whole.ContentType, "application/json"))
		w.WriteHeader(http.StatusOK)
		_, err := w.Write(s.Whole.Body)
		return err
	}
	sse := NewSSEWriter(w)
	for {
		data, err := s.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			writeOpenAIStreamError(sse, err)
			return err
		}
		if err := sse.BufferData(data); err != nil {
			return err
		}
		if err := sse.Flush(); err != nil {
			return err
		}
	}
}
