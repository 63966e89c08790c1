package trainer

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchyard-ai/switchyard/telemetry/jobspan"
)

// WithTracer makes the service record a span per job stage: the job, fetching and parsing
// each file, the held-out fit, its evaluation, and the final fit (OpenTelemetry; package
// telemetry provides a tracer). Default: no spans.
func WithTracer(t trace.Tracer) Option { return func(s *Service) { s.tracer = t } }

// stage starts the span of a job stage (see WithTracer); end records err and ends it.
func (s *Service) stage(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, func(err error)) {
	return jobspan.Start(ctx, s.tracer, name, attrs...)
}
