package mcpgateway_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/mcpgateway/mcpgatewaytest"
)

// lockedBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), s)
}

func healthOf(t *testing.T, g *mcpgateway.Gateway, name string) mcpgateway.ServerInfo {
	t.Helper()
	for _, si := range g.Servers() {
		if si.Name == name {
			return si
		}
	}
	t.Fatalf("no server %s in %+v", name, g.Servers())
	return mcpgateway.ServerInfo{}
}

// A server's status is unknown until it is used, unhealthy (with the failure and when it
// was seen) while listing or calling it fails, and healthy again once it answers; each
// change is logged once, not each failure.
func TestGatewayServerHealthFollowsListingAndCalls(t *testing.T) {
	up := mcpgatewaytest.StartFakeHTTP(t, "fake")
	logs := &lockedBuffer{}
	g := newGateway(t, []mcpgateway.ServerConfig{{Name: "web", URL: up.URL}},
		mcpgateway.Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if si := healthOf(t, g, "web"); si.Status != mcpgateway.StatusUnknown || si.LastChecked != nil || si.LastError != "" {
		t.Fatalf("before any use: %+v, want status unknown", si)
	}
	if _, err := g.ListTools(t.Context(), "web"); err != nil {
		t.Fatal(err)
	}
	si := healthOf(t, g, "web")
	if si.Status != mcpgateway.StatusHealthy || si.LastChecked == nil || si.LastError != "" {
		t.Fatalf("after a listing: %+v, want healthy", si)
	}
	up.Stop()
	for range 3 {
		if _, err := g.CallTool(t.Context(), "web", "add", json.RawMessage(`{"a":1,"b":2}`)); err == nil {
			t.Fatal("a call with the upstream down succeeded")
		}
	}
	si = healthOf(t, g, "web")
	if si.Status != mcpgateway.StatusUnhealthy || si.LastChecked == nil || !strings.Contains(si.LastError, "web") {
		t.Fatalf("with the upstream down: %+v, want unhealthy with the failure", si)
	}
	if n := logs.count("mcp server unhealthy"); n != 1 {
		t.Fatalf("logged %d unhealthy lines for 3 failures, want 1 (once per change):\n%s", n, logs.buf.String())
	}
	up.Restart("fake")
	if _, err := g.CallTool(t.Context(), "web", "add", json.RawMessage(`{"a":1,"b":2}`)); err != nil {
		t.Fatal(err)
	}
	if si = healthOf(t, g, "web"); si.Status != mcpgateway.StatusHealthy || si.LastError != "" {
		t.Fatalf("with the upstream back: %+v, want healthy", si)
	}
	if n := logs.count("mcp server healthy again"); n != 1 {
		t.Fatalf("logged %d recovery lines, want 1", n)
	}
	// A failure of the caller's own (bad arguments) says nothing of the server.
	if _, err := g.CallTool(t.Context(), "web", "add", json.RawMessage(`[1]`)); err == nil {
		t.Fatal("bad arguments were taken")
	}
	if si = healthOf(t, g, "web"); si.Status != mcpgateway.StatusHealthy {
		t.Fatalf("after the caller's own failure: %+v, want healthy", si)
	}
}
