package trainer

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// WithTracer makes the service record a span per job stage: the job, fetching and parsing
// each file, the held-out fit, its evaluation, and the final fit (OpenTelemetry; package
// telemetry provides a tracer). Default: no spans.
func WithTracer(t trace.Tracer) Option { return func(s *Service) { s.tracer = t } }

// stage starts a span; end records err (nil: ok) and ends it.
func (s *Service) stage(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, func(err error)) {
	t := s.tracer
	if t == nil {
		t = noop.NewTracerProvider().Tracer("")
	}
	ctx, span := t.Start(ctx, name, trace.WithAttributes(attrs...))
	return ctx, func(err error) {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}
