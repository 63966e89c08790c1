package telemetry

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Transport returns base wrapped so that every upstream call (a provider's chat,
// embeddings, token fetch) gets an HTTP client span under the span of the request that
// made it, and carries that span's W3C traceparent to the upstream: a provider or a
// self-hosted model server that traces (vLLM, an OpenTelemetry Collector in front of it)
// continues the caller's trace. Only the trace context is sent, never the caller's
// baggage, and the span names no URL (a Gemini key may be in its query) nor any header:
// its attributes are the method, server.address, server.port and the response's status
// code. With a nil *Tracing (tracing off) base is returned as it is.
func (t *Tracing) Transport(base http.RoundTripper) http.RoundTripper {
	if t == nil {
		return base
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return &tracingTransport{base: base, t: t, prop: propagation.TraceContext{}}
}

type tracingTransport struct {
	base http.RoundTripper
	t    *Tracing
	prop propagation.TextMapPropagator
}

// RoundTrip implements http.RoundTripper: the span ends when the response's body is
// closed or read to its end (a stream lasts as long), or when the call failed.
func (tt *tracingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	host, port := req.URL.Hostname(), req.URL.Port()
	if port == "" {
		port = "80"
		if req.URL.Scheme == "https" {
			port = "443"
		}
	}
	attrs := []attribute.KeyValue{attribute.String("http.request.method", req.Method), attribute.String("server.address", host)}
	if p, err := strconv.Atoi(port); err == nil {
		attrs = append(attrs, attribute.Int("server.port", p))
	}
	ctx, span := tt.t.tracer.Start(ctx, req.Method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	// RoundTrip must not change the caller's request: headers go on a copy.
	r2 := req.Clone(ctx)
	tt.prop.Inject(ctx, propagation.HeaderCarrier(r2.Header))
	resp, err := tt.base.RoundTrip(r2)
	if err != nil {
		span.SetStatus(codes.Error, "transport")
		span.SetAttributes(attribute.String("error.type", transportErrorType(err)))
		span.End()
		return resp, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 400 {
		span.SetStatus(codes.Error, strconv.Itoa(resp.StatusCode))
		span.SetAttributes(attribute.String("error.type", strconv.Itoa(resp.StatusCode)))
	}
	if resp.Body == nil || resp.Body == http.NoBody {
		span.End()
		return resp, nil
	}
	resp.Body = &spanBody{ReadCloser: resp.Body, span: span}
	return resp, nil
}

// transportErrorType is error.type of a call that got no response.
func transportErrorType(err error) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return "transport"
}

// spanBody ends its span at the body's end or close, whichever comes first.
type spanBody struct {
	io.ReadCloser
	span trace.Span
	once sync.Once
}

func (b *spanBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.end()
	}
	return n, err
}

func (b *spanBody) Close() error {
	err := b.ReadCloser.Close()
	b.end()
	return err
}

func (b *spanBody) end() { b.once.Do(func() { b.span.End() }) }
