package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// TestGatewayProxyLogsThroughSlog: a proxy failure is one structured line (not the standard
// library's plain-text "http: proxy error"), and a request the sandbox abandoned is logged at
// debug level, not as a warning.
func TestGatewayProxyLogsThroughSlog(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/v1"
	ln.Close() // nothing listens there any more
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p, err := NewGatewayProxy(sandbox.Gateway{BaseURL: dead}, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader("{}")))
	if rec.Code != http.StatusBadGateway {
		t.Errorf("status %d, want 502", rec.Code)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader("{}")).WithContext(ctx))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("log:\n%s", buf.String())
	}
	for i, want := range []string{"WARN", "DEBUG"} {
		var rec map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &rec); err != nil {
			t.Fatalf("line %d is not JSON: %s", i, lines[i])
		}
		if rec["level"] != want || !strings.Contains(rec["msg"].(string), "gateway proxy") {
			t.Errorf("line %d = %v, want level %s", i, rec, want)
		}
	}
}
