package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/telemetry"
)

// A collector that is down makes the exporter fail every few seconds: the process log gets
// one structured warning per interval, not one line per export.
func TestExportErrorsAreRateLimited(t *testing.T) {
	var buf bytes.Buffer
	h := exportErrors(slog.New(slog.NewJSONHandler(&buf, nil)), time.Hour)
	for range 5 {
		h(errors.New("traces export: connection refused"))
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"level":"WARN"`) || !strings.Contains(lines[0], "connection refused") {
		t.Fatalf("logged %d lines: %s", len(lines), buf.String())
	}
}

// TestTraceContentLegacyFlag: --trace-content-legacy (env SWITCHYARD_TRACE_CONTENT_LEGACY)
// reaches the tracer, which then also writes the older content shape; without content
// capture it does nothing, and serve says so.
func TestTraceContentLegacyFlag(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
	t.Setenv(telemetry.ContentCaptureEnv, "")
	for _, tc := range []struct {
		env     map[string]string
		legacy  bool
		warning bool
	}{
		{map[string]string{"SWITCHYARD_TRACE_CONTENT": "true", "SWITCHYARD_TRACE_CONTENT_LEGACY": "true"}, true, false},
		{map[string]string{"SWITCHYARD_TRACE_CONTENT": "true"}, false, false},
		{map[string]string{"SWITCHYARD_TRACE_CONTENT_LEGACY": "true"}, false, true},
	} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		var f telemetryFlags
		f.register(fs)
		if err := parseFlags(fs, nil, func(k string) string { return tc.env[k] }); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		o, err := newObservability(context.Background(), f, slog.New(slog.NewTextHandler(&logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		if got := o.tracing.CapturesLegacyContent(); got != tc.legacy {
			t.Errorf("%v: legacy content %v, want %v", tc.env, got, tc.legacy)
		}
		if got := strings.Contains(logs.String(), "--trace-content-legacy does nothing"); got != tc.warning {
			t.Errorf("%v: warning %v, want %v: %s", tc.env, got, tc.warning, logs.String())
		}
		_ = o.tracing.Shutdown(context.Background())
	}
}

// TestTracingStartLogHidesEndpointSecrets: the "tracing on" line names the OTLP endpoint's
// host and path but not a password or a query-string token in it.
func TestTracingStartLogHidesEndpointSecrets(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://team:pw-secret-1@otlp.example.com/v1/traces?api-key=qs-secret-2")
	var logs bytes.Buffer
	o, err := newObservability(context.Background(), telemetryFlags{TraceContentMaxBytes: telemetry.DefaultMaxContentBytes}, slog.New(slog.NewJSONHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer o.tracing.Shutdown(context.Background())
	out := logs.String()
	if !strings.Contains(out, `"endpoint":"https://otlp.example.com/v1/traces?…"`) || strings.Contains(out, "secret") {
		t.Errorf("start-up log: %s", out)
	}
}

// TestExportErrorsHideEndpointSecrets: the exporter's failure quotes the collector's URL; the
// warning keeps its host and path but not the user:password or the query-string token, and
// an endpoint that does not parse stops serve with an error that does not show them either.
func TestExportErrorsHideEndpointSecrets(t *testing.T) {
	var buf bytes.Buffer
	h := exportErrors(slog.New(slog.NewJSONHandler(&buf, nil)), time.Hour)
	h(fmt.Errorf("traces export: %w", &url.Error{Op: "Post", URL: "https://team:pw-secret-1@otlp.example.com/v1/traces?api-key=qs-secret-2",
		Err: errors.New("dial tcp 10.0.0.1:443: connect: connection refused")}))
	out := buf.String()
	if !strings.Contains(out, `traces export: Post \"https://otlp.example.com/v1/traces?…\": dial tcp 10.0.0.1:443`) || strings.Contains(out, "secret") {
		t.Errorf("export warning: %s", out)
	}

	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "https://team:pw-secret-1@otlp.example.com:bad-port/v1?api-key=qs-secret-2")
	buf.Reset()
	o, err := newObservability(context.Background(), telemetryFlags{TraceContentMaxBytes: telemetry.DefaultMaxContentBytes}, slog.New(slog.NewJSONHandler(&buf, nil)))
	if err == nil {
		_ = o.tracing.Shutdown(context.Background())
	} else if strings.Contains(err.Error(), "secret") {
		t.Errorf("start-up error: %v", err)
	}
	// OpenTelemetry logs that it could not parse the endpoint: through serve's log, redacted.
	if out := buf.String(); !strings.Contains(out, "parse url") || strings.Contains(out, "secret") {
		t.Errorf("start-up log: %s", out)
	}

	// Headers OpenTelemetry cannot read ("key: value" for "key=value", a value it cannot
	// unescape) are logged without their text: they carry the collector's credentials.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:19018")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "api-key: hdr-secret-3,x-token=hdr%zzsecret-4")
	buf.Reset()
	o, err = newObservability(context.Background(), telemetryFlags{TraceContentMaxBytes: telemetry.DefaultMaxContentBytes}, slog.New(slog.NewJSONHandler(&buf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	_ = o.tracing.Shutdown(context.Background())
	if out := buf.String(); !strings.Contains(out, "parse headers") || !strings.Contains(out, "escape header value") || strings.Contains(out, "secret") {
		t.Errorf("start-up log of unreadable headers: %s", out)
	}
}
