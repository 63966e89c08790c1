package mcpgateway_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/mcpgateway/mcpgatewaytest"
)

// CheckHealth asks the server now: a server never used is healthy once probed; one that
// went down after its tools were cached (a listing from the cache says nothing) is
// unhealthy with the failure; back up, healthy again. Listing and Servers show the same.
func TestGatewayCheckHealthProbesNow(t *testing.T) {
	up := mcpgatewaytest.StartFakeHTTP(t, "fake")
	g := newGateway(t, []mcpgateway.ServerConfig{{Name: "web", URL: up.URL}}, mcpgateway.Options{})
	si, err := g.CheckHealth(t.Context(), "web")
	if err != nil || si.Status != mcpgateway.StatusHealthy || si.LastChecked == nil || si.Name != "web" {
		t.Fatalf("probe of a server never used: %+v %v, want healthy", si, err)
	}
	if _, err := g.ListTools(t.Context(), "web"); err != nil {
		t.Fatal(err)
	}
	up.Stop()
	si, err = g.CheckHealth(t.Context(), "web")
	if err != nil || si.Status != mcpgateway.StatusUnhealthy || !strings.Contains(si.LastError, "web") {
		t.Fatalf("probe with the server down: %+v %v, want unhealthy with the failure", si, err)
	}
	if got := healthOf(t, g, "web"); got.Status != mcpgateway.StatusUnhealthy {
		t.Fatalf("Servers after the probe: %+v", got)
	}
	up.Restart("fake")
	if si, err = g.CheckHealth(t.Context(), "web"); err != nil || si.Status != mcpgateway.StatusHealthy || si.LastError != "" {
		t.Fatalf("probe with the server back: %+v %v, want healthy", si, err)
	}
	if _, err := g.CheckHealth(t.Context(), "nope"); !errors.Is(err, mcpgateway.ErrUnknownServer) {
		t.Fatalf("probe of an unknown server: %v", err)
	}
}

// A server that does not answer is unhealthy once the health check's own deadline
// (HealthCheckTimeout) passes, a timeout saying so; a caller that goes away first gets
// its context's error and nothing is recorded.
func TestGatewayCheckHealthDeadlines(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(release) })
	g := newGateway(t, []mcpgateway.ServerConfig{{Name: "slow", URL: hang.URL}}, mcpgateway.Options{HealthCheckTimeout: 50 * time.Millisecond})

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := g.CheckHealth(ctx, "slow"); !errors.Is(err, context.Canceled) {
		t.Fatalf("probe for a caller gone: %v, want context.Canceled", err)
	}
	if si := healthOf(t, g, "slow"); si.Status != mcpgateway.StatusUnknown {
		t.Fatalf("a probe whose caller went away recorded %+v", si)
	}
	si, err := g.CheckHealth(t.Context(), "slow")
	if err != nil || si.Status != mcpgateway.StatusUnhealthy || !strings.Contains(si.LastError, "no answer to the health check within 50ms") {
		t.Fatalf("probe of a server that does not answer: %+v %v", si, err)
	}
}
