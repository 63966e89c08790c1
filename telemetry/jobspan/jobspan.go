// Package jobspan records the stages of background jobs (training, optimization) as
// OpenTelemetry spans. It depends only on the OpenTelemetry API, so the job services can
// use it without the metrics and exporters of package telemetry.
package jobspan

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Start starts the span of a stage with t (nil: no span is recorded) and returns the
// stage's context and end, which records err (nil: ok) and ends the span.
func Start(ctx context.Context, t trace.Tracer, name string, attrs ...attribute.KeyValue) (context.Context, func(err error)) {
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
