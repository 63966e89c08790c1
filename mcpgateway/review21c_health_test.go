package mcpgateway_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/mcpgateway/mcpgatewaytest"
)

// A caller's own deadline ending before a slow tool answers is the caller going away, as
// its cancellation is: the server stays healthy. It used to be shown unhealthy, with an
// error saying it did not answer within --mcp-call-timeout, which it was never given.
func TestReview21cCallersOwnDeadlineLeavesTheServerHealthy(t *testing.T) {
	up := mcpgatewaytest.StartFakeHTTP(t, "fake")
	g := newGateway(t, []mcpgateway.ServerConfig{{Name: "web", URL: up.URL}}, mcpgateway.Options{CallTimeout: time.Minute})
	if _, err := g.ListTools(t.Context(), "web"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := g.CallTool(ctx, "web", "slow", nil); err == nil {
		t.Fatal("the slow tool answered")
	}
	if si := healthOf(t, g, "web"); si.Status != mcpgateway.StatusHealthy || si.LastError != "" {
		t.Fatalf("after the caller's own deadline: %+v, want healthy", si)
	}

	// The gateway's own timeout still makes it unhealthy, for a listing too.
	short := newGateway(t, []mcpgateway.ServerConfig{{Name: "web", URL: up.URL}}, mcpgateway.Options{CallTimeout: 200 * time.Millisecond})
	if _, err := short.CallTool(t.Context(), "web", "slow", nil); !errors.Is(err, mcpgateway.ErrTimeout) {
		t.Fatalf("a call past --mcp-call-timeout: %v", err)
	}
	if si := healthOf(t, short, "web"); si.Status != mcpgateway.StatusUnhealthy {
		t.Fatalf("after the gateway's timeout: %+v, want unhealthy", si)
	}
}
