package completions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/switchyard-ai/switchyard/providers"
)

// The RequestRecord.Operation of audio requests.
const (
	// OperationTranscription is a /v1/audio/transcriptions request's.
	OperationTranscription = "transcription"
	// OperationTranslation is a /v1/audio/translations request's.
	OperationTranslation = "translation"
	// OperationSpeech is a /v1/audio/speech request's.
	OperationSpeech = "speech"
)

// MaxAudioFileBytes is the largest audio file a transcription takes (OpenAI's limit).
const MaxAudioFileBytes = 25 << 20

// MaxSpeechInput is the most characters a speech request's input may have (OpenAI's).
const MaxSpeechInput = 4096

// TranscriptionFormats are the response formats a transcription may ask for.
var TranscriptionFormats = []string{"json", "text", "srt", "verbose_json", "vtt"}

// SpeechFormats are the audio formats a speech request may ask for.
var SpeechFormats = []string{"mp3", "opus", "aac", "flac", "wav", "pcm"}

// TranscriptionRequest is OpenAI's transcription (or translation) request, decoded from its
// multipart form. The model is "provider/model", a bare name (whisper-1,
// gpt-4o-transcribe, whisper-large-v3, …) or a model group, whose members are tried in
// order.
type TranscriptionRequest struct {
	// Model names the speech-to-text model.
	Model string
	// Translate asks for an English translation (/v1/audio/translations).
	Translate bool
	// File is the audio; Filename its name and FileType its media type, as the client
	// sent them.
	File     []byte
	Filename string
	FileType string
	// Language, Prompt, ResponseFormat, Temperature and TimestampGranularities are
	// OpenAI's fields, passed on.
	Language               string
	Prompt                 string
	ResponseFormat         string
	Temperature            *float64
	TimestampGranularities []string
	// Stream is OpenAI's stream field: the request is answered by TranscribeStream
	// (Transcribe refuses it).
	Stream bool
	// Extra are OpenAI's other form fields the gateway passes as they came (include[],
	// chunking_strategy), in order.
	Extra [][2]string
	// Tags label the request for cost attribution (Request.Tags; the X-Switchyard-Tags
	// header over HTTP).
	Tags []string
}

// TranscriptionResult is a transcription as the model answered it: the body and its
// Content-Type are the upstream's, passed on unchanged (JSON, text, SRT or WebVTT).
type TranscriptionResult struct {
	Body        []byte
	ContentType string
	// Model is the "provider/model" that answered.
	Model string
	// Usage is what the answer reported; Costs prices it (PriceKnown false when it cannot
	// be priced: a text format says nothing of the audio's length).
	Usage providers.AudioUsage
	Costs Costs
	// UsageEstimated says the answer reported no usage and Usage.Seconds is the audio's
	// length as the gateway measured it (a WAV file's header, an srt or vtt answer's last
	// cue), billed all the same.
	UsageEstimated bool
	Attempts       []Attempt
}

// SpeechRequest is OpenAI's POST /v1/audio/speech body.
type SpeechRequest struct {
	// Model names the text-to-speech model ("tts-1", "openai/gpt-4o-mini-tts", a group).
	Model string `json:"model" jsonschema:"required,minLength=1"`
	// Input is the text to speak.
	Input string `json:"input" jsonschema:"required,minLength=1,maxLength=4096"`
	// Voice names the voice (alloy, ash, coral, echo, fable, nova, onyx, sage, shimmer, …).
	Voice string `json:"voice" jsonschema:"required,minLength=1"`
	// ResponseFormat is the audio's format (default mp3).
	ResponseFormat string `json:"response_format,omitempty" jsonschema:"enum=mp3,enum=opus,enum=aac,enum=flac,enum=wav,enum=pcm"`
	// Speed is the speech's speed.
	Speed *float64 `json:"speed,omitempty" jsonschema:"minimum=0.25,maximum=4"`
	// Instructions steer the voice (gpt-4o-mini-tts).
	Instructions string `json:"instructions,omitempty"`
	// StreamFormat is "audio" (the audio's bytes as they come, the default) or "sse"
	// (server-sent events: speech.audio.delta with base64 audio, then speech.audio.done
	// with the usage, which is then billed; not for tts-1 or tts-1-hd, as OpenAI's rule).
	StreamFormat string `json:"stream_format,omitempty" jsonschema:"enum=audio,enum=sse"`
	// Tags label the request for cost attribution, as on chat requests (Request.Tags).
	Tags []string `json:"tags,omitempty" jsonschema:"maxItems=16"`
}

// validate checks r and returns the provider request it stands for (model left empty).
func (r *TranscriptionRequest) validate() (*providers.TranscriptionRequest, error) {
	if r.Stream {
		return nil, invalid("stream", "Transcribe answers whole: a streamed transcription is TranscribeStream's")
	}
	if strings.TrimSpace(r.Model) == "" {
		return nil, invalid("model", "is required")
	}
	switch {
	case r.File == nil:
		return nil, invalid("file", "is required")
	case len(r.File) == 0:
		return nil, invalid("file", "must not be empty")
	case len(r.File) > MaxAudioFileBytes:
		return nil, invalid("file", "at most %d bytes, got %d", MaxAudioFileBytes, len(r.File))
	}
	if r.ResponseFormat != "" && !slices.Contains(TranscriptionFormats, r.ResponseFormat) {
		return nil, invalid("response_format", "must be one of %s, got %q", strings.Join(TranscriptionFormats, ", "), r.ResponseFormat)
	}
	if t := r.Temperature; t != nil && !(*t >= 0 && *t <= 1) {
		return nil, invalid("temperature", "must be between 0 and 1, got %v", *t)
	}
	for i, g := range r.TimestampGranularities {
		if g != "word" && g != "segment" {
			return nil, invalid(fmt.Sprintf("timestamp_granularities[%d]", i), "must be word or segment, got %q", g)
		}
	}
	return &providers.TranscriptionRequest{Translate: r.Translate, File: r.File, Filename: r.Filename, FileType: r.FileType, Extra: r.Extra,
		Language: r.Language, Prompt: r.Prompt, ResponseFormat: r.ResponseFormat, Temperature: r.Temperature,
		TimestampGranularities: r.TimestampGranularities}, nil
}

// validate checks r and returns the provider request it stands for (model left empty).
func (r *SpeechRequest) validate() (*providers.SpeechRequest, error) {
	if strings.TrimSpace(r.Model) == "" {
		return nil, invalid("model", "is required")
	}
	switch n := utf8.RuneCountInString(r.Input); {
	case n == 0:
		return nil, invalid("input", "is required")
	case n > MaxSpeechInput:
		return nil, invalid("input", "at most %d characters, got %d", MaxSpeechInput, n)
	}
	if strings.TrimSpace(r.Voice) == "" {
		return nil, invalid("voice", "is required")
	}
	if r.ResponseFormat != "" && !slices.Contains(SpeechFormats, r.ResponseFormat) {
		return nil, invalid("response_format", "must be one of %s, got %q", strings.Join(SpeechFormats, ", "), r.ResponseFormat)
	}
	if s := r.Speed; s != nil && !(*s >= 0.25 && *s <= 4) {
		return nil, invalid("speed", "must be between 0.25 and 4, got %v", *s)
	}
	switch r.StreamFormat {
	case "", "audio":
	case "sse":
		if m := r.Model[strings.LastIndex(r.Model, "/")+1:]; strings.HasPrefix(m, "tts-1") {
			return nil, invalid("stream_format", "sse is not supported for tts-1 or tts-1-hd (as on OpenAI): use audio, or gpt-4o-mini-tts")
		}
	default:
		return nil, invalid("stream_format", "must be audio or sse, got %q", r.StreamFormat)
	}
	format := r.StreamFormat
	if format == "audio" {
		format = "" // the default: sent as OpenAI's own default
	}
	return &providers.SpeechRequest{Input: r.Input, Voice: r.Voice, ResponseFormat: r.ResponseFormat, Speed: r.Speed,
		Instructions: r.Instructions, StreamFormat: format}, nil
}

// audioVendors maps audio model-name prefixes to the provider that serves the family, for
// bare names the catalogue does not list.
var audioVendors = []struct{ prefix, provider string }{
	{"whisper-1", "openai"}, {"gpt-4o-transcribe", "openai"}, {"gpt-4o-mini-transcribe", "openai"},
	{"tts-1", "openai"}, {"gpt-4o-mini-tts", "openai"},
	{"whisper-large-v3", "groq"}, {"distil-whisper", "groq"},
}

// hasAudio reports whether p serves audio requests of the kind (speech or transcription).
func hasAudio(p providers.Provider, speech bool) bool {
	if !providers.ServesChat(p) {
		return false // an embeddings-only provider (Voyage AI)
	}
	if speech {
		_, ok := p.(providers.Speaker)
		return ok
	}
	_, ok := p.(providers.Transcriber)
	return ok
}

// audioIndex builds, once, the catalogued audio models of the configured providers with an
// audio API: by full name, by name without a provider, and the providers listed.
func (g *Gateway) audioIndex() {
	g.audioOnce.Do(func() {
		g.audioListed, g.audioBare, g.audioCatalogued = map[string]bool{}, map[string][]string{}, map[string]bool{}
		cat, _ := g.prices().(interface {
			AudioModels(provider, mode string) []string
		})
		if cat == nil {
			return
		}
		audio := func(p providers.Provider) bool { return hasAudio(p, false) || hasAudio(p, true) }
		for _, name := range g.configuredProviders(audio) {
			for _, pm := range cat.AudioModels(name, "") {
				g.audioListed[pm], g.audioCatalogued[name] = true, true
				if _, m, err := providers.ParseModel(pm); err == nil && !strings.Contains(m, "/") {
					g.audioBare[m] = append(g.audioBare[m], pm)
				}
			}
		}
	})
}

// audioModel returns the "provider/model" a bare audio model name stands for (kindModel
// over the catalogued audio models and their makers).
func (g *Gateway) audioModel(field, name string) (string, error) {
	g.audioIndex()
	return g.kindModel(field, name, g.audioBare, audioVendors)
}

// audioTargets resolves an audio request's model: a model group's members in order, else
// the model itself.
func (g *Gateway) audioTargets(name string, speech bool) ([]target, error) {
	what := "transcription"
	if speech {
		what = "speech"
	}
	return g.groupTargets(name, g.audioModel, func(p providers.Provider) bool { return hasAudio(p, speech) },
		func(field, provider, model string) error {
			return invalid(field, "model %q has no audio API here (provider %q has no %s endpoint)", model, provider, what)
		})
}

// ResolveAudioModel returns the "provider/model" an audio request's model name stands
// for, and whether a configured provider with an audio API serves it: a catalogued audio
// model, or any model of a provider whose models the catalogue does not list (a custom
// OpenAI-compatible endpoint), as HasModel takes chat models.
func (g *Gateway) ResolveAudioModel(name string) (string, bool) {
	for _, speech := range []bool{false, true} {
		ts, err := g.audioTargets(name, speech)
		if err != nil || len(ts) != 1 || !providers.IsConfigured(ts[0].p) {
			continue
		}
		g.audioIndex()
		g.indexModels()
		if g.audioListed[ts[0].name] || !g.audioCatalogued[ts[0].provider] && !g.catalogued[ts[0].provider] {
			return ts[0].name, true
		}
	}
	return name, false
}

// audioCost prices an audio call of t, a target of request p (priceAt).
func (g *Gateway) audioCost(p *plan, t target, u providers.AudioUsage) Costs {
	return priceAt(g, p, t, u, audioPricer.AudioCost)
}

// audioPricer is what the gateway's Prices implements to price the audio operations.
type audioPricer interface {
	AudioCost(model string, u providers.AudioUsage) providers.Cost
}

// audioPlan validates what Transcribe and Speak share: the targets, the budget's model
// restrictions, the plan with its timing.
func (g *Gateway) audioPlan(scope Scope, model string, speech bool, tags []string) (*plan, error) {
	targets, err := g.audioTargets(model, speech)
	if err != nil {
		return nil, err
	}
	if err := CheckTags("tags", tags); err != nil {
		return nil, err
	}
	return g.opPlan(scope, model, tags, targets)
}

// enterOp is opPlan's plan with the request entered into the scope's budget (when it has
// one): the caller ends it (plan.ended) on every way out. fallbacks, when not nil, are
// the targets tried after the models asked (opFallbacks), given those.
func (g *Gateway) enterOp(ctx context.Context, scope Scope, asked string, tags []string, targets []target, fallbacks func(have []target) []target) (*plan, error) {
	p, err := g.opPlan(scope, asked, tags, targets)
	if err != nil {
		return nil, err
	}
	if fallbacks != nil {
		p.targets = append(slices.Clip(p.targets), fallbacks(p.targets)...)
	}
	if b := scope.Budget; b != nil {
		if _, err := g.enterBudget(ctx, p, b, false, &p.targets); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// opPlan is the plan of a request other than chat (embeddings, audio, rerank) for targets,
// which the model name asked resolved to: its start and timing, once the budget's model
// restrictions allow the targets.
func (g *Gateway) opPlan(scope Scope, asked string, tags []string, targets []target) (*plan, error) {
	targets, err := g.tagTargets(asked, scope.tagAsk(tags), targets)
	if err != nil {
		return nil, err
	}
	if b := scope.Budget; b != nil {
		if err := g.budgetAllows(b, []string{asked}, targets); err != nil {
			return nil, err
		}
	}
	p := &plan{rt: g.routes(), scope: scope, req: &Request{ephemeral: true, Tags: tags}, start: scope.Received, targets: targets, maxRetries: g.opts.DefaultMaxRetries, asked: asked}
	if scope.NumRetries != nil {
		p.maxRetries = *scope.NumRetries // a key's router_settings.num_retries, as for chat
	}
	if p.start.IsZero() {
		p.start = g.opts.Now()
	}
	p.timing = g.timingFor(p.start, scope, p.req)
	return p, nil
}

// Transcribe answers a transcription (or, with req.Translate, a translation) request: it
// validates req, checks the caller's budget and calls the model, retrying it (and, for a
// model group, its other members in order) as chat completions are retried, with the same
// circuit breakers; it falls back to another model only when the scope's or the model
// group's fallbacks name one (opFallbacks), as LiteLLM's router does. The answer is the
// upstream's body and Content-Type, unchanged (a text answer, asked of the upstream as
// JSON to learn its usage, is that JSON's text); its usage, priced from the catalogue, is
// billed to the scope's budget and recorded in the ledger and by the observer (operation
// "transcription" or "translation"). Errors: *ValidationError (ErrInvalid),
// ErrModelNotAllowed, ErrBudgetExceeded, *AllFailedError, or the context's error.
func (g *Gateway) Transcribe(ctx context.Context, scope Scope, req *TranscriptionRequest) (*TranscriptionResult, error) {
	if g.breakers == nil {
		return nil, ErrZeroGateway
	}
	if req == nil {
		return nil, errNilRequest()
	}
	preq, err := req.validate()
	if err != nil {
		return nil, err
	}
	if scope, err = g.withTagBudgets(ctx, scope, req.Tags); err != nil {
		return nil, err
	}
	op := OperationTranscription
	if req.Translate {
		op = OperationTranslation
	}
	p, err := g.audioPlan(scope, req.Model, false, req.Tags)
	if err != nil {
		return nil, err
	}
	p.targets = append(slices.Clip(p.targets), g.opFallbacks(ctx, scope, req.Model, providers.AudioTranscription, req.Tags, p.targets,
		func(m string) ([]target, error) { return g.audioTargets(m, false) }, nil)...)
	// A transcription is billed by the audio's length or its tokens, which only the JSON
	// answers report. A text answer is asked as JSON (verbose_json of the providers other
	// than OpenAI, whose plain json reports no length, except of the gpt-4o transcription
	// models, which refuse it and report their usage in json) and answered as its text; an srt or
	// vtt answer is measured by the uploaded WAV file's header or, as LiteLLM does, by its
	// last cue's end, whichever is later. A key with a USD bound has its json asked as verbose_json too.
	usdBound := scope.Budget != nil && scope.Budget.costBound()
	if b := scope.Budget; b != nil {
		if _, err := g.enterBudget(ctx, p, b, false, &p.targets); err != nil {
			return nil, err
		}
	}
	// Every way out ends the request: its budget's admission, and the slots in flight its
	// calls hold (MemberLimits), with a budget or without.
	defer p.ended()
	var out *providers.TranscriptionResponse
	used, begin, err := g.callAttempts(ctx, p, "no transcription", func(ctx, actx context.Context, t target, begin time.Time) error {
		r, answerAsAsked := upstreamTranscription(preq, t, usdBound)
		res, err := t.p.(providers.Transcriber).Transcribe(actx, &r)
		if err != nil {
			// An answer over the cap on its size, unread: the audio's length estimated
			// (estimatedAudio), priced by the second or, for a model priced by its tokens,
			// by the audio's input tokens — audio tokens, as the history shows them.
			g.chargeOversizedOp(ctx, p, t, err, begin, func(*providers.Error) (providers.Usage, Costs, bool) {
				au := estimatedAudio(preq.File)
				costs := g.audioCost(p, t, providers.AudioUsage{Seconds: au.Seconds})
				if !costs.PriceKnown {
					costs = g.audioCost(p, t, au)
					return providers.Usage{PromptTokens: au.InputTokens, PromptAudioTokens: au.InputAudioTokens}, costs, true
				}
				return providers.Usage{}, costs, true
			})
			return err
		}
		answerAsAsked(res)
		out = res
		return nil
	})
	if err != nil {
		g.observeOpFailure(ctx, p, op, false, err)
		return nil, err
	}
	now := g.opts.Now()
	estimated := false
	if out.Usage.Seconds == 0 && out.Usage.InputTokens+out.Usage.OutputTokens == 0 {
		// The answer said nothing of its audio (a text format; a json answer without
		// usage): its length as measured here, billed marked estimated.
		out.Usage.Seconds = audioSeconds(preq.File, preq.ResponseFormat, out.Body)
		estimated = out.Usage.Seconds > 0
	}
	costs := g.audioCost(p, used, out.Usage)
	u := providers.Usage{PromptTokens: out.Usage.InputTokens, CompletionTokens: out.Usage.OutputTokens, PromptAudioTokens: out.Usage.InputAudioTokens}
	g.account(ctx, p, used, u, costs, true, estimated, now.Sub(begin))
	res := &TranscriptionResult{Body: out.Body, ContentType: out.ContentType, Model: used.name, Usage: out.Usage, Costs: costs,
		UsageEstimated: estimated, Attempts: cloneAttempts(p.attempts)}
	g.observeOpAnswer(ctx, p, op, used, Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens,
		PromptAudioTokens: u.PromptAudioTokens, Costs: costs}, estimated, nil, now)
	return res, nil
}

// upstreamTranscription is the request a transcription asked as preq is sent to target t
// with, and answerAsAsked turns t's answer back into the form asked: a text answer is
// asked as JSON to learn its usage (verbose_json of the providers other than OpenAI, whose
// json reports no length, but of the gpt-4o transcription models, which refuse it and
// report their usage in json) and answered as its text; with usdBound (a key bounded in
// USD) a json answer that says no length is asked as verbose_json and answered as json.
func upstreamTranscription(preq *providers.TranscriptionRequest, t target, usdBound bool) (r providers.TranscriptionRequest, answerAsAsked func(*providers.TranscriptionResponse)) {
	r = *preq
	r.Model = t.model
	asked := r.ResponseFormat
	jsonSaysLength := t.provider == "openai" || transcribeModel(t.model)
	plain := usdBound && (asked == "" || asked == "json") && !jsonSaysLength
	switch {
	case plain, asked == "text" && !jsonSaysLength:
		r.ResponseFormat = "verbose_json"
	case asked == "text":
		r.ResponseFormat = "json"
	}
	return r, func(res *providers.TranscriptionResponse) {
		switch {
		case plain:
			res.Body = plainTranscription(res.Body)
		case asked == "text":
			if text, ok := textTranscription(res.Body); ok {
				res.Body, res.ContentType = text, "text/plain; charset=utf-8"
			}
		}
	}
}

// errNoAudio is the cause of a speech attempt's context ending because no audio came in
// time.
var errNoAudio = errors.New("no audio in time")

// Speak answers a speech request with its audio as it arrives: it validates req, checks
// the caller's budget and calls the model, retrying it (and a model group's other members
// in order) under the same rules and circuit breakers as chat — but only until the first
// audio byte: once audio has come, a failure ends the answer (Read returns it). The
// returned Speech must be read and closed; Close bills the call (the input's characters or
// tokens, priced from the catalogue) to the scope's budget and records it in the ledger and
// by the observer (operation "speech"). Errors: *ValidationError (ErrInvalid),
// ErrModelNotAllowed, ErrBudgetExceeded, *AllFailedError, or the context's error.
func (g *Gateway) Speak(ctx context.Context, scope Scope, req *SpeechRequest) (*Speech, error) {
	if g.breakers == nil {
		return nil, ErrZeroGateway
	}
	if req == nil {
		return nil, errNilRequest()
	}
	preq, err := req.validate()
	if err != nil {
		return nil, err
	}
	if scope, err = g.withTagBudgets(ctx, scope, req.Tags); err != nil {
		return nil, err
	}
	p, err := g.audioPlan(scope, req.Model, true, req.Tags)
	if err != nil {
		return nil, err
	}
	p.targets = append(slices.Clip(p.targets), g.opFallbacks(ctx, scope, req.Model, providers.AudioSpeech, req.Tags, p.targets,
		func(m string) ([]target, error) { return g.audioTargets(m, true) }, nil)...)
	if preq.StreamFormat == "sse" {
		// tts-1 and tts-1-hd answer no server-sent events (OpenAI refuses them): a group's
		// or a fallback's are passed over, as a model that cannot take a request is.
		p.targets = slices.DeleteFunc(p.targets, func(t target) bool { return strings.HasPrefix(t.model, "tts-1") })
		if len(p.targets) == 0 {
			return nil, invalid("stream_format", "sse is not supported by %s's models (tts-1 and tts-1-hd answer audio only): use audio, or gpt-4o-mini-tts", req.Model)
		}
	}
	if b := scope.Budget; b != nil {
		if _, err := g.enterBudget(ctx, p, b, false, &p.targets); err != nil {
			return nil, err
		}
	}
	s := &Speech{g: g, p: p, ctx: ctx}
	if preq.StreamFormat == "sse" {
		s.events = &speechUsageScanner{}
	}
	dctx, cancel := p.withDeadline(ctx)
	err = g.run(dctx, p, func(ctx context.Context, t target) error {
		s.begin = g.opts.Now()
		var res *providers.SpeechResponse
		var first []byte
		// Audio that came is streamed to the caller uncut, as a non-streamed call's bound
		// would cut it mid-answer: no model can be tried instead once it came.
		cancelAttempt, err := g.firstBounded(ctx, p, t, errNoAudio, "no audio", func(actx context.Context) (func(), error) {
			r := *preq
			r.Model = t.model
			var err error
			if res, err = t.p.(providers.Speaker).Speak(actx, &r); err != nil {
				return nil, err
			}
			if first, err = firstAudio(t, res.Body); err != nil {
				res.Body.Close()
				return nil, err
			}
			return func() { res.Body.Close() }, nil
		})
		if err != nil {
			return err
		}
		s.res, s.first, s.used, s.cancelAttempt = res, first, t, cancelAttempt
		s.firstAt = g.opts.Now()
		return nil
	})
	if err != nil {
		cancel()
		g.observeOpFailure(ctx, p, OperationSpeech, true, err)
		p.ended()
		return nil, err
	}
	s.cancel = cancel
	chars := utf8.RuneCountInString(req.Input)
	s.usage = providers.AudioUsage{Characters: chars, InputTokens: providers.CountTokens(s.used.model, req.Input), TokensEstimated: true}
	s.ContentType, s.Model = s.res.ContentType, s.used.name
	if s.ContentType == "" {
		s.ContentType = "application/octet-stream"
	}
	s.Costs = g.audioCost(p, s.used, s.usage)
	s.Attempts = cloneAttempts(p.attempts)
	return s, nil
}

// firstBounded runs open, an attempt of t reading its answer until the first piece of it
// (the first audio, the first event), under the wait for that piece: the attempt timeout,
// or t's own Timeout when shorter. The attempt's context outlives the wait — what comes
// after the first piece streams uncut — and the returned cancelAttempt ends it. open
// returns the release of its answer, which is called when the bound fired as the first
// piece came (the rest cannot come: a timeout, as if nothing had), or nil when its answer
// is already whole. cause is the bound's cause and what names the piece in the timeout.
func (g *Gateway) firstBounded(ctx context.Context, p *plan, t target, cause error, what string,
	open func(actx context.Context) (release func(), err error)) (cancelAttempt func(), err error) {
	actx, cancel := context.WithCancelCause(ctx)
	limit := g.attemptTimeout(p, t.name)
	timer := time.AfterFunc(limit, func() { cancel(cause) })
	release, err := open(actx)
	if !timer.Stop() && err == nil && release != nil {
		cancel(cause) // the timer's own may not have run yet
		release()
		err = cause
	}
	if err != nil {
		cancel(nil)
		if ctx.Err() == nil && errors.Is(context.Cause(actx), cause) {
			return nil, timeoutError(t, what, limit)
		}
		return nil, err
	}
	return func() { cancel(nil) }, nil
}

// firstAudio reads the first bytes of an answer's audio: an answer that ends before any
// is a failure.
func firstAudio(t target, r io.Reader) ([]byte, error) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			return buf[:n], nil
		}
		if errors.Is(err, io.EOF) {
			return nil, &providers.Error{Provider: t.provider, Model: t.model, Kind: providers.KindStreamBroken, Message: "the speech answer has no audio"}
		}
		if err != nil {
			return nil, err
		}
	}
}

// Speech is the audio of a speech request, read as the model sends it. Read it to its end
// and Close it: Close ends the request (billing and records).
type Speech struct {
	// ContentType is the upstream's ("audio/mpeg", …).
	ContentType string
	// Model is the "provider/model" that answers.
	Model string
	// Costs prices the call (PriceKnown false when part of it cannot be priced: the audio
	// out of a model priced by audio tokens, which the answer does not report).
	Costs    Costs
	Attempts []Attempt

	g             *Gateway
	p             *plan
	ctx           context.Context
	res           *providers.SpeechResponse
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
	// events reads the usage of an sse answer's speech.audio.done (nil: audio bytes).
	events *speechUsageScanner
}

// Read reads the audio; a failure after the first bytes is returned as it is (the gateway
// does not retry then).
func (s *Speech) Read(b []byte) (int, error) {
	if len(s.first) > 0 {
		n := copy(b, s.first)
		s.first = s.first[n:]
		if s.events != nil {
			s.events.feed(b[:n])
		}
		return n, nil
	}
	n, err := s.res.Body.Read(b)
	if s.events != nil {
		s.events.feed(b[:n])
	}
	switch {
	case errors.Is(err, io.EOF):
		s.eof = true
	case err != nil && s.err == nil:
		s.err = err
	}
	return n, err
}

// Close ends the request: the upstream call is released, the call billed to the scope's
// budget and recorded in the ledger, and the observer told how it ended (ok when the audio
// was read to its end). It is safe to call more than once.
func (s *Speech) Close() error {
	s.once.Do(func() {
		s.res.Body.Close()
		s.cancelAttempt()
		s.cancel()
		g, p := s.g, s.p
		now := g.opts.Now()
		if ev := s.events; ev != nil && ev.done {
			// The answer said what it used: its input tokens and the audio it made.
			s.usage.InputTokens, s.usage.OutputAudioTokens, s.usage.TokensEstimated = ev.input, ev.output, false
			s.Costs = g.audioCost(p, s.used, s.usage)
		}
		u := providers.Usage{PromptTokens: s.usage.InputTokens, CompletionTokens: s.usage.OutputAudioTokens, CompletionAudioTokens: s.usage.OutputAudioTokens}
		// The input was spoken (and is billed) however much of the audio was read.
		g.account(s.ctx, p, s.used, u, s.Costs, s.eof, s.usage.TokensEstimated, now.Sub(s.begin))
		p.ended()
		if g.opts.Observer == nil {
			return
		}
		r := RequestRecord{Owner: p.scope.Owner, Tag: p.scope.Tag, Operation: OperationSpeech, Stream: true, Outcome: RequestOK, Tags: p.req.Tags,
			Provider: s.used.provider, Model: s.used.name, Attempts: cloneAttempts(p.attempts),
			Usage: Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens,
				CompletionAudioTokens: u.CompletionAudioTokens, Costs: s.Costs}, UsageEstimated: s.usage.TokensEstimated,
			Start: p.start, Latency: now.Sub(p.start), TTFT: s.firstAt.Sub(p.start)}
		r.Outcome, r.Err = relayedOutcome(s.ctx, s.eof, s.err)
		g.observe(s.ctx, p, r)
	})
	return nil
}

// relayedOutcome is how an answer relayed as it came (speech audio, a streamed
// transcription) ended: read to its end (eof), left by the caller (its context over, or no
// failure), or failed with err.
func relayedOutcome(ctx context.Context, eof bool, err error) (string, error) {
	switch {
	case eof:
		return RequestOK, nil
	case ctx.Err() != nil || err == nil || errors.Is(err, context.Canceled):
		return RequestCancelled, context.Canceled // the caller stopped reading
	default:
		return RequestStreamFailed, err
	}
}

// plainTranscription is a verbose_json transcription as the json format answers it:
// {"text": …} (the body unchanged when it is not JSON with a text).
func plainTranscription(body []byte) []byte {
	var v struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(body, &v) != nil || v.Text == nil {
		return body
	}
	b, err := json.Marshal(map[string]string{"text": *v.Text})
	if err != nil {
		return body
	}
	return b
}

// transcribeModel reports whether model is one of OpenAI's gpt-4o transcription models
// (gpt-4o-transcribe, gpt-4o-mini-transcribe, by whichever provider: Azure, a deployment
// with a key of its own), which refuse verbose_json and say their usage in json.
func transcribeModel(model string) bool {
	return strings.HasPrefix(model, "gpt-4o") && strings.Contains(model, "-transcribe")
}
