package telemetry

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-ai/switchyard/completions"
)

// ObserveRequest implements completions.Observer: request counts, durations, time to first
// token, tokens, cost, and per-attempt counts with retries, fallbacks and continuations.
func (m *Metrics) ObserveRequest(_ context.Context, r completions.RequestRecord) {
	provider, model := r.Provider, r.Model
	switch {
	case model != "":
	case len(r.Attempts) > 0:
		model = r.Attempts[0].Model
	default:
		model = r.Requested
	}
	if provider == "" {
		provider, _, _ = strings.Cut(model, "/")
	}
	ok := r.Outcome == completions.RequestOK
	model = m.modelLabel(model, ok)
	stream := strconv.FormatBool(r.Stream)
	op := operationName(r)
	requested := m.requestedLabel(&r, ok)
	gw := []string{op, provider, model, outcomeLabel(&r), stream, requested}
	cost := []string{provider, model, requested}
	if m.opts.OwnerLabel {
		o := m.owners.value(r.Owner, nil)
		gw = append(gw, o)
		cost = append(cost, o)
	}
	if l := m.litellm.Load(); l != nil {
		l.observe(m, r)
	}
	if r.Cache != "" {
		m.cacheLookups.WithLabelValues(r.Cache).Inc()
		m.cacheSaved.Add(r.SavedUSD)
	}
	if r.Cache == completions.CacheHit {
		return // no model was called: its requests, latency and tokens are the model's own
	}
	var reqLabels [8]string
	reqLabels[0] = m.errorType(&r)
	m.requests.WithLabelValues(append(reqLabels[:1], gw...)...).Inc()
	m.duration.WithLabelValues(gw...).Observe(r.Latency.Seconds())
	if r.TTFT > 0 {
		m.ttft.WithLabelValues(op, provider, model, stream).Observe(r.TTFT.Seconds())
	}
	if r.Outcome == completions.RequestOK {
		m.tokens.WithLabelValues(op, provider, model, "input").Observe(float64(r.Usage.PromptTokens))
		if op == "chat" {
			m.tokens.WithLabelValues(op, provider, model, "output").Observe(float64(r.Usage.CompletionTokens))
		}
	}
	if c := r.Usage.Costs.Spent(); c > 0 {
		m.cost.WithLabelValues(cost...).Add(c)
	}
	prev := ""
	for i, a := range r.Attempts {
		am := m.modelLabel(a.Model, a.Outcome == completions.OutcomeOK)
		ap, _, _ := strings.Cut(a.Model, "/")
		m.attempts.With(prometheus.Labels{"gen_ai_provider_name": ap, "gen_ai_request_model": am, "outcome": a.Outcome, "error_type": a.Kind}).Inc()
		switch {
		case a.ContinuedFrom != nil:
			m.continuations.WithLabelValues(am).Inc()
		case i > 0 && a.Model == prev:
			m.retries.WithLabelValues(am).Inc()
		case i > 0:
			m.fallbacks.WithLabelValues(am).Inc()
		}
		prev = a.Model
	}
}

// outcomeCut is the outcome label of a request the server itself cut (RequestRecord.CutBy:
// its graceful shutdown), which the gateway records cancelled: its client was answered a
// 503 (or a stream's error event) asking to retry, a failure, unlike one that left. The
// usage history says the same (usagelog.OutcomeCut).
const outcomeCut = "cut"

// outcomeLabel is r's outcome label: its Outcome, cut for a request the server cut.
func outcomeLabel(r *completions.RequestRecord) string {
	if r.Outcome == completions.RequestCancelled && r.CutBy != nil {
		return outcomeCut
	}
	return r.Outcome
}

// requestedLabel is r's requested_model label: the model group, alias or "provider/model"
// the caller asked for (RequestRecord.ModelGroup; of a request naming several models, the
// first it was tried with), bounded as the model labels are (its value is one of theirs: a
// configured group's or a model's name, else "other"). ok says the request was answered.
//
// An answer vouches for the name asked only when it is the answering model's own (with its
// provider or without, as a bare "gpt-4o"): other names answered — any a wildcard matches
// ("my-*" calling one model), which a client makes up at will — take a value only when
// AdmitModels' function knows them, so they cannot use up the values real models need.
func (m *Metrics) requestedLabel(r *completions.RequestRecord, ok bool) string {
	requested := r.ModelGroup
	if requested == "" {
		requested = r.Requested
	}
	if requested == "" {
		return ""
	}
	_, bare, _ := strings.Cut(r.Model, "/")
	return m.modelLabel(requested, ok && (requested == r.Model || requested == bare))
}

// errorType is the error_type label of r (OpenTelemetry's error.type): empty for an
// answer; the kind of its stream's error or of its last attempt (overloaded, rate_limit,
// timeout, …: providers' and the gateway's bounded set); for a request refused before any
// model was called budget_exceeded, rate_limited (a 429 of the server's limits), or the
// HTTP status it was answered with ("400", "413"); else its outcome.
func (m *Metrics) errorType(r *completions.RequestRecord) string {
	if r.Outcome == completions.RequestOK {
		return ""
	}
	var se *completions.StreamError
	if errors.As(r.Err, &se) && se.Kind != "" {
		return se.Kind
	}
	if n := len(r.Attempts); n > 0 && r.Attempts[n-1].Kind != "" {
		return r.Attempts[n-1].Kind
	}
	if r.Err == nil || r.Outcome != completions.RequestFailed {
		return outcomeLabel(r)
	}
	if errors.Is(r.Err, completions.ErrBudgetExceeded) {
		return "budget_exceeded"
	}
	if m.opts.StatusOf == nil {
		return "refused"
	}
	switch s := m.opts.StatusOf(r.Err); {
	case s == http.StatusTooManyRequests:
		return "rate_limited"
	case s >= 400 && s < 600:
		return statusText[s-400]
	}
	return "refused"
}

// statusText are the error_type values of the HTTP statuses from 400 to 599, made once.
var statusText = func() (t [200]string) {
	for i := range t {
		t[i] = strconv.Itoa(400 + i)
	}
	return t
}()

// operationName is the GenAI operation of a request: "chat" for every chat surface,
// "embeddings" for /v1/embeddings, "transcription", "translation" and "speech" for
// /v1/audio, "rerank" for /v1/rerank, "moderation" for /v1/moderations,
// "image_generation" for /v1/images/generations, "image_edit" for /v1/images/edits.
func operationName(r completions.RequestRecord) string {
	if r.Operation != "" {
		return r.Operation
	}
	return "chat"
}
