package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// Tracing is the OpenTelemetry tracer of one process: spans per HTTP request and per
// upstream attempt, exported by the SpanExporter it was made with. A nil *Tracing does
// nothing (tracing off). No global OpenTelemetry state is set.
type Tracing struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	opts   TracingOptions
	// providerName is gen_ai.provider.name of a Switchyard provider name (NameProviders);
	// nil: providers.GenAIName without the adapter.
	providerName atomic.Pointer[func(string) string]
}

// NameProviders sets how the spans' gen_ai.provider.name is found from a provider's name
// (serve passes its registry's providers.Registry.GenAIName, which knows a custom entry's
// format and base URL). Without it a preset has its well-known value and any other name is
// kept as it is.
func (t *Tracing) NameProviders(name func(provider string) string) {
	if t != nil && name != nil {
		t.providerName.Store(&name)
	}
}

// genAIProvider is the gen_ai.provider.name of Switchyard's provider called name.
func (t *Tracing) genAIProvider(name string) string {
	if f := t.providerName.Load(); f != nil {
		return (*f)(name)
	}
	return providers.GenAIName(name, nil)
}

// TracingOptions configure what the chat spans carry beyond the GenAI attributes that are
// always there (model, provider, tokens, sampling parameters, finish reasons, ids).
type TracingOptions struct {
	// CaptureContent puts the prompts and answers on the "chat <model>" spans, as the
	// OpenTelemetry GenAI semantic conventions have them: gen_ai.system_instructions,
	// gen_ai.input.messages, gen_ai.output.messages (a streamed answer whole, once it ended;
	// what a stream that broke or was left delivered, with finish reason "error" or
	// "cancelled") and gen_ai.tool.definitions, each a JSON document. Images and documents are replaced
	// by a placeholder. Content may be personal data: off by default.
	CaptureContent bool
	// MaxContentBytes bounds each content attribute (texts are cut with a
	// "…[truncated N bytes]" marker); 0 for DefaultMaxContentBytes, at least 256.
	MaxContentBytes int
	// LegacyContent also puts the captured content in the older shape readers that
	// predate gen_ai.input.messages read (Langfuse before its 2025-09 releases, Arize
	// Phoenix before 15.10, OpenLLMetry-based tools): span events gen_ai.content.prompt
	// and gen_ai.content.completion with JSON attributes gen_ai.prompt and
	// gen_ai.completion, and flattened gen_ai.prompt.{i}.role/.content and
	// gen_ai.completion.0.* attributes; bounded the same way. It does nothing without
	// CaptureContent.
	LegacyContent bool
}

// ContentCaptureEnv is the OpenTelemetry GenAI instrumentations' switch for content
// capture; "true" turns TracingOptions.CaptureContent on in TracingFromEnv.
const ContentCaptureEnv = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

// contentCaptureFromEnv reads ContentCaptureEnv's value v: a boolean (the GenAI
// instrumentations' default mode), or the enum of their gen_ai_latest_experimental mode,
// whose SPAN_ONLY and SPAN_AND_EVENT put content on spans (EVENT_ONLY and NO_CONTENT do
// not). The variable is shared with other processes' instrumentations: any other value
// leaves capture off rather than stopping the server from starting.
func contentCaptureFromEnv(v string) bool {
	v = strings.TrimSpace(v)
	if on, err := strconv.ParseBool(v); err == nil {
		return on
	}
	switch strings.ToUpper(v) {
	case "SPAN_ONLY", "SPAN_AND_EVENT":
		return true
	}
	return false
}

// TracingFromEnv returns the tracer configured by the standard OpenTelemetry environment
// variables when OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set:
// spans are batched to that OTLP/HTTP endpoint (OTEL_EXPORTER_OTLP_HEADERS,
// OTEL_SERVICE_NAME and the other variables apply). Unset, it returns nil: no tracing.
// Content is captured when opts say so or ContentCaptureEnv asks for it on spans (true,
// SPAN_ONLY or SPAN_AND_EVENT; see contentCaptureFromEnv).
func TracingFromEnv(ctx context.Context, version string, opts TracingOptions) (*Tracing, error) {
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return nil, nil
	}
	opts.CaptureContent = opts.CaptureContent || contentCaptureFromEnv(os.Getenv(ContentCaptureEnv))
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP trace exporter: %w", err)
	}
	return NewTracing(exp, version, false, opts), nil
}

// NewTracing returns a tracer exporting to exp: in batches, or each span as it ends with
// sync (for tests, with the SDK's tracetest.InMemoryExporter).
func NewTracing(exp sdktrace.SpanExporter, version string, sync bool, opts TracingOptions) *Tracing {
	if opts.MaxContentBytes == 0 {
		opts.MaxContentBytes = DefaultMaxContentBytes
	}
	opts.MaxContentBytes = max(opts.MaxContentBytes, minContentBytes)
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", serviceName()), attribute.String("service.version", version)))
	if err != nil {
		res = resource.Default()
	}
	opt := sdktrace.WithBatcher(exp)
	if sync {
		opt = sdktrace.WithSyncer(exp)
	}
	// spanIDs: an attempt's span, recorded when its request ended, takes the id its HTTP
	// call's span was started under (TraceAttempt).
	tp := sdktrace.NewTracerProvider(opt, sdktrace.WithResource(res), sdktrace.WithIDGenerator(spanIDs{}))
	return &Tracing{tp: tp, tracer: tp.Tracer("github.com/switchyard-ai/switchyard"), opts: opts,
		prop: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}
}

func serviceName() string {
	if n := os.Getenv("OTEL_SERVICE_NAME"); n != "" {
		return n
	}
	return "switchyard"
}

// CapturesContent reports whether the chat spans carry prompts and answers.
func (t *Tracing) CapturesContent() bool { return t != nil && t.opts.CaptureContent }

// CapturesLegacyContent reports whether the chat spans also carry prompts and answers in
// the older shape (TracingOptions.LegacyContent, with content capture on).
func (t *Tracing) CapturesLegacyContent() bool {
	return t.CapturesContent() && t.opts.LegacyContent
}

// Shutdown flushes the spans not exported yet and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// Middleware starts a server span per HTTP request (continuing a W3C traceparent the
// caller sent), named by its route once dispatched, with the method, route, status code
// and the request id (requestID reads it from the context) as attributes. logPath, when
// not nil, turns the request path into the url.path attribute (server.LogPath redacts the
// credential in artifact URLs).
func (t *Tracing) Middleware(route RouteFunc, requestID func(context.Context) string, logPath func(string) string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if t == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			path := r.URL.Path
			if logPath != nil {
				path = logPath(path)
			}
			ctx := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
			ctx, span := t.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("url.path", path)))
			defer span.End()
			if id := requestID(ctx); id != "" {
				span.SetAttributes(attribute.String("switchyard.request_id", id))
				ctx = WithRequestID(ctx, id)
			}
			rec := &codeRecorder{ResponseWriter: w}
			next.ServeHTTP(rec, r.WithContext(ctx))
			code := rec.code
			if code == 0 {
				code = http.StatusOK
			}
			if p := route(r); p != "" {
				span.SetName(p)
				span.SetAttributes(attribute.String("http.route", p))
			}
			span.SetAttributes(attribute.Int("http.response.status_code", code))
			if code >= 500 {
				span.SetStatus(codes.Error, http.StatusText(code))
			}
		})
	}
}

// ObserveRequest implements completions.Observer: under the request's span (from ctx) it
// records a "chat <model>" (or "embeddings <model>") span for the completion and one child
// span per upstream attempt, with the GenAI attributes as the OpenTelemetry GenAI
// semantic conventions define them: gen_ai.operation.name; gen_ai.request.model, on the
// request's span the model (or model group, or alias) the caller asked for and on an
// attempt's the model that attempt asked its provider; gen_ai.response.model, the model
// that answered (without its provider prefix); gen_ai.provider.name, the conventions'
// well-known value of the provider (openai, anthropic, gcp.gemini, aws.bedrock, …; see
// NameProviders), Switchyard's own provider name being switchyard.provider;
// gen_ai.usage.input_tokens and output_tokens, error.type; for chat the gen_ai.request.*
// sampling parameters, on the attempts' spans too (each attempt's own max_tokens,
// completions.Attempt.MaxTokens); gen_ai.response.id and finish_reasons,
// gen_ai.conversation.id, user.id; and the prompt and answer with
// TracingOptions.CaptureContent: of a stream that broke or was left after it started,
// what it delivered, with finish reason "error" or "cancelled").
func (t *Tracing) ObserveRequest(ctx context.Context, r completions.RequestRecord) {
	if t == nil {
		return
	}
	asked := askedModel(&r)
	op := operationName(r)
	ctx, span := t.tracer.Start(ctx, op+" "+asked, trace.WithTimestamp(r.Start), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.String("gen_ai.operation.name", op),
			attribute.String("gen_ai.request.model", asked),
			attribute.String("switchyard.outcome", outcomeLabel(&r)),
			attribute.Bool("switchyard.stream", r.Stream),
			attribute.Int("switchyard.attempts", len(r.Attempts)),
		))
	if id := RequestIDFromContext(ctx); id != "" {
		span.SetAttributes(attribute.String("switchyard.request_id", id))
	}
	provider := r.Provider
	if provider == "" {
		// None answered: the provider of the model tried last (else of the one asked), as
		// the conventions require gen_ai.provider.name on a failed operation's span too.
		model := r.Requested
		if n := len(r.Attempts); n > 0 {
			model = r.Attempts[n-1].Model
		}
		provider, _, _ = cutModel(model)
	}
	if provider != "" {
		span.SetAttributes(attribute.String("gen_ai.provider.name", t.genAIProvider(provider)),
			attribute.String("switchyard.provider", provider))
	}
	t.setChatAttributes(span, &r)
	if r.Outcome == completions.RequestOK {
		span.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", r.Usage.PromptTokens),
			attribute.Int("gen_ai.usage.output_tokens", r.Usage.CompletionTokens),
			attribute.Float64("switchyard.cost_usd", r.Usage.Costs.Spent()))
		if r.TTFT > 0 {
			span.SetAttributes(attribute.Float64("gen_ai.server.time_to_first_token", r.TTFT.Seconds()))
		}
	} else {
		span.SetStatus(codes.Error, outcomeLabel(&r))
		if r.Err != nil {
			span.SetAttributes(attribute.String("error.type", errorType(r)))
		}
		if r.Usage.PromptTokens > 0 || r.Usage.CompletionTokens > 0 || r.Usage.Costs.Spent() > 0 {
			// Billed without an answer (a stream cut midway, its client gone): what it cost.
			span.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", r.Usage.PromptTokens),
				attribute.Int("gen_ai.usage.output_tokens", r.Usage.CompletionTokens),
				attribute.Float64("switchyard.cost_usd", r.Usage.Costs.Spent()))
		}
	}
	// Each attempt's span says what that attempt asked: its own provider and model, and
	// the sampling parameters sent to it, its max_tokens its own (Attempt.MaxTokens: the
	// request's may have been lowered to the model's output limit or filled in).
	var sent providers.Request
	if r.Prompt != nil {
		sent = *r.Prompt
	}
	for i, a := range r.Attempts {
		if a.Started.IsZero() {
			continue // skipped without a call (circuit open, out of time)
		}
		provider, name, _ := cutModel(a.Model)
		actx := ctx
		if a.SpanID != ([8]byte{}) {
			actx = context.WithValue(ctx, reservedSpanKey{}, trace.SpanID(a.SpanID))
		}
		_, as := t.tracer.Start(actx, "attempt "+a.Model, trace.WithTimestamp(a.Started), trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(
				attribute.String("gen_ai.operation.name", op),
				attribute.String("gen_ai.provider.name", t.genAIProvider(provider)),
				attribute.String("switchyard.provider", provider),
				attribute.String("gen_ai.request.model", name),
				attribute.Int("switchyard.attempt", i+1),
				attribute.String("switchyard.outcome", a.Outcome),
			))
		if r.Prompt != nil {
			sent.MaxTokens = a.MaxTokens
			if reqAttrs := appendRequestAttributes(nil, &sent); len(reqAttrs) > 0 {
				as.SetAttributes(reqAttrs...)
			}
		}
		if a.ContinuedFrom != nil {
			as.SetAttributes(attribute.Int("switchyard.continued_from", *a.ContinuedFrom))
		}
		if a.Outcome != completions.OutcomeOK {
			as.SetStatus(codes.Error, a.Kind)
			as.SetAttributes(attribute.String("error.type", a.Kind))
		}
		end := a.Started.Add(time.Duration(a.LatencyMS) * time.Millisecond)
		if a.LatencyMS == 0 && i == len(r.Attempts)-1 {
			end = r.Start.Add(r.Latency) // a continuation's latency is the rest of the stream
		}
		as.End(trace.WithTimestamp(end))
	}
	span.End(trace.WithTimestamp(r.Start.Add(r.Latency)))
}

// askedModel is the model the caller asked for (gen_ai.request.model of the request's
// span): the model group, alias or "provider/model" it named; of a request naming several
// models, the first it was tried with; else the model that answered.
func askedModel(r *completions.RequestRecord) string {
	switch {
	case r.ModelGroup != "":
		return r.ModelGroup
	case r.Requested != "":
		return r.Requested
	case len(r.Attempts) > 0:
		return r.Attempts[0].Model
	}
	return r.Model
}

func errorType(r completions.RequestRecord) string {
	var se *completions.StreamError
	if errors.As(r.Err, &se) && se.Kind != "" {
		return se.Kind
	}
	if n := len(r.Attempts); n > 0 && r.Attempts[n-1].Kind != "" {
		return r.Attempts[n-1].Kind
	}
	return outcomeLabel(&r)
}

func cutModel(m string) (provider, model string, ok bool) {
	for i := 0; i < len(m); i++ {
		if m[i] == '/' {
			return m[:i], m[i+1:], true
		}
	}
	return "", m, false
}

// requestIDKey carries the request id for spans started outside the server's context.
type requestIDKey struct{}

// WithRequestID returns ctx carrying id for RequestIDFromContext.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFromContext returns the id WithRequestID stored, "" when none.
func RequestIDFromContext(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// Tracer returns the tracer for the job services' stage spans (trainer.WithTracer,
// optimizer.WithTracer); nil when tracing is off.
func (t *Tracing) Tracer() trace.Tracer {
	if t == nil {
		return nil
	}
	return t.tracer
}
