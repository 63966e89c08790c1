package server

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/mcpgateway"
)

// GET /v1/mcp/server shows each server's health as LiteLLM's listing does: status
// (unknown, healthy, unhealthy), last_health_check and health_check_error; a dead server
// left out of the aggregated tool list is shown unhealthy with its failure.
func TestMCPServerListShowsHealth(t *testing.T) {
	m := newMCPTestServer(t, mcpgateway.Options{})
	type info struct {
		ServerID         string     `json:"server_id"`
		Status           string     `json:"status"`
		LastHealthCheck  *time.Time `json:"last_health_check"`
		HealthCheckError string     `json:"health_check_error"`
	}
	list := func() map[string]info {
		t.Helper()
		r := do(t, m.s, "GET", "/v1/mcp/server", testKey, "")
		if r.status != http.StatusOK {
			t.Fatalf("GET /v1/mcp/server: %d %s", r.status, r.raw)
		}
		var out []info
		if err := json.Unmarshal([]byte(r.raw), &out); err != nil {
			t.Fatal(err)
		}
		byID := map[string]info{}
		for _, i := range out {
			byID[i.ServerID] = i
		}
		return byID
	}
	if got := list(); got["web"].Status != "unknown" || got["web"].LastHealthCheck != nil {
		t.Fatalf("before any use: %+v, want status unknown", got["web"])
	}
	m.web.Stop()
	cs := mustConnect(t, m.hs, "/mcp", testKey)
	if got := listedNames(t, cs); len(got) != 2 {
		t.Fatalf("tools/list with web down = %v, want docs' two tools", got)
	}
	got := list()
	if w := got["web"]; w.Status != "unhealthy" || w.LastHealthCheck == nil || w.HealthCheckError == "" {
		t.Fatalf("web, dead and left out of the tool list: %+v, want unhealthy with its failure", w)
	}
	if d := got["docs"]; d.Status != "healthy" || d.HealthCheckError != "" {
		t.Fatalf("docs: %+v, want healthy", d)
	}
}
