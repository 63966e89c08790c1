package telemetry

import (
	"context"
	"testing"
)

// TestContentCaptureEnvValues: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is shared
// with the OpenTelemetry GenAI instrumentations, whose latest experimental mode takes
// NO_CONTENT, SPAN_ONLY, EVENT_ONLY or SPAN_AND_EVENT instead of a boolean. A process
// environment set for them must not stop tracing from starting (the variable was ignored
// before content capture existed), and the span modes turn capture on.
func TestContentCaptureEnvValues(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	for value, want := range map[string]bool{
		"true": true, "TRUE": true, "1": true, "false": false, "0": false,
		"SPAN_ONLY": true, "span_and_event": true, "SPAN_AND_EVENT": true,
		"EVENT_ONLY": false, "NO_CONTENT": false,
		"something-else": false, " true ": true,
	} {
		t.Setenv(ContentCaptureEnv, value)
		tr, err := TracingFromEnv(context.Background(), "test", TracingOptions{})
		if err != nil {
			t.Errorf("%s=%q: tracing does not start: %v", ContentCaptureEnv, value, err)
			continue
		}
		if got := tr.CapturesContent(); got != want {
			t.Errorf("%s=%q: captures content %v, want %v", ContentCaptureEnv, value, got, want)
		}
		if err := tr.Shutdown(context.Background()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}
	// The flag wins over a variable that says no.
	t.Setenv(ContentCaptureEnv, "NO_CONTENT")
	tr, err := TracingFromEnv(context.Background(), "test", TracingOptions{CaptureContent: true})
	if err != nil || !tr.CapturesContent() {
		t.Errorf("--trace-content with %s=NO_CONTENT: captures %v, err %v", ContentCaptureEnv, tr.CapturesContent(), err)
	}
	_ = tr.Shutdown(context.Background())
}
