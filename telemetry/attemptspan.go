package telemetry

import (
	"context"
	"encoding/binary"
	"math/rand/v2"

	"go.opentelemetry.io/otel/trace"
)

// TraceAttempt is completions.Options.TraceAttempt: it reserves the span id of an upstream
// attempt's span, which ObserveRequest records after the request ended, and returns ctx
// with that span as the current one, so the HTTP client span of the call made in it
// (Transport) is the attempt span's child: a trace reads request → chat → attempt → POST.
// Without a span in ctx (or tracing off) it returns ctx and no id.
func (t *Tracing) TraceAttempt(ctx context.Context) (context.Context, [8]byte) {
	parent := trace.SpanContextFromContext(ctx)
	if t == nil || !parent.IsValid() {
		return ctx, [8]byte{}
	}
	id := randomSpanID()
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: parent.TraceID(), SpanID: id,
		TraceFlags: parent.TraceFlags(), TraceState: parent.TraceState()})
	return trace.ContextWithSpanContext(ctx, sc), id
}

// reservedSpanKey carries, in the context a span is started with, the id TraceAttempt
// reserved for it.
type reservedSpanKey struct{}

// spanIDs is the tracer's IDGenerator: random ids, except the reserved id a context
// carries (reservedSpanKey).
type spanIDs struct{}

func (spanIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	var tid trace.TraceID
	for !tid.IsValid() {
		binary.NativeEndian.PutUint64(tid[:8], rand.Uint64())
		binary.NativeEndian.PutUint64(tid[8:], rand.Uint64())
	}
	return tid, spanIDs{}.NewSpanID(ctx, tid)
}

func (spanIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if id, ok := ctx.Value(reservedSpanKey{}).(trace.SpanID); ok && id.IsValid() {
		return id
	}
	return randomSpanID()
}

func randomSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		binary.NativeEndian.PutUint64(sid[:], rand.Uint64())
	}
	return sid
}
