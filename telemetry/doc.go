// Package telemetry is Switchyard's observability: Prometheus metrics and OpenTelemetry
// traces.
//
// [Metrics] holds its own Prometheus registry (no global state) and is fed by small
// adapters, each wrapping one seam of the system: the gateway's completions.Observer
// ([Metrics.ObserveRequest]), the HTTP server's middleware ([Metrics.Middleware]), a
// store.Driver ([Metrics.Store]), a sandbox.Runner ([Metrics.Sandbox]), and collectors
// read at scrape time (circuit breakers, jobs). [Metrics.Handler] serves the Prometheus
// text format.
//
// Names follow the OpenTelemetry GenAI semantic conventions where they exist, converted
// to Prometheus names (dots to underscores, the unit as a suffix):
//
//	gen_ai.client.operation.duration  → gen_ai_client_operation_duration_seconds
//	gen_ai.client.token.usage         → gen_ai_client_token_usage (gen_ai_token_type input|output)
//	gen_ai.server.time_to_first_token → gen_ai_server_time_to_first_token_seconds
//
// with the attributes gen_ai_operation_name ("chat"), gen_ai_provider_name (Switchyard's
// provider name) and gen_ai_request_model (the model that answered, as it always was, so
// dashboards keep their meaning; the request, duration and cost series also have
// requested_model, what the caller asked for: a model group, an alias or the model named).
// Spans follow the conventions closer: there gen_ai.request.model is what was asked,
// gen_ai.response.model what answered and gen_ai.provider.name the conventions'
// well-known value. Switchyard's own series are prefixed switchyard_. Label values are
// bounded: models beyond MaxModelLabels distinct values are reported as "other", routes
// are mux patterns, and there are no per-key labels unless Options.OwnerLabel is set.
//
// [Tracing] sets up the OpenTelemetry SDK with the OTLP/HTTP exporter when
// OTEL_EXPORTER_OTLP_ENDPOINT is set (nothing otherwise): a span per HTTP request, a child
// span per upstream attempt with the GenAI attributes and, under it, the HTTP client span
// of its call ([Tracing.TraceAttempt], [Tracing.Transport]), the request id as an attribute, and
// (through [Tracing.Tracer], given to trainer.WithTracer and optimizer.WithTracer) a span
// per job stage.
package telemetry
