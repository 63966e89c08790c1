package mcpgateway_test

import (
	"testing"

	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/mcpgateway/mcpgatewaytest"
)

// A listing answered from the cached tool list does not contact the server, so it says
// nothing of its health: the status and the time it was last checked stay as they were.
func TestGatewayCachedListingLeavesHealthAlone(t *testing.T) {
	up := mcpgatewaytest.StartFakeHTTP(t, "fake")
	g := newGateway(t, []mcpgateway.ServerConfig{{Name: "web", URL: up.URL}}, mcpgateway.Options{})
	if _, err := g.ListTools(t.Context(), "web"); err != nil {
		t.Fatal(err)
	}
	first := healthOf(t, g, "web")
	if first.Status != mcpgateway.StatusHealthy || first.LastChecked == nil {
		t.Fatalf("after a listing: %+v", first)
	}
	up.Stop()
	if _, err := g.ListTools(t.Context(), "web"); err != nil {
		t.Fatalf("the cached listing failed: %v", err)
	}
	if si := healthOf(t, g, "web"); si.LastChecked == nil || !si.LastChecked.Equal(*first.LastChecked) {
		t.Fatalf("a cached listing moved last_health_check from %v to %v with the server down", first.LastChecked, si.LastChecked)
	}
}
