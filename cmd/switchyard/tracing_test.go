package main

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
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
