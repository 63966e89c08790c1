package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/mcpgateway"
)

// GET /v1/mcp/server/health checks the servers now (LiteLLM's route): servers never used
// are healthy once checked, a dead one unhealthy with its failure, and GET /v1/mcp/server
// shows the same afterwards; server_ids (repeated or comma-separated) picks servers, a
// virtual key sees and may name only its own, and an unknown name is a 404.
func TestMCPServerHealthCheck(t *testing.T) {
	m := newMCPTestServer(t, mcpgateway.Options{})
	check := func(key, query string) []mcpServerHealth {
		t.Helper()
		r := do(t, m.s, "GET", "/v1/mcp/server/health"+query, key, "")
		if r.status != http.StatusOK {
			t.Fatalf("GET /v1/mcp/server/health%s: %d %s", query, r.status, r.raw)
		}
		var out []mcpServerHealth
		if err := json.Unmarshal([]byte(r.raw), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := check(testKey, "")
	if len(got) != 2 || got[0].ServerID != "web" || got[0].Status != "healthy" || got[0].LastHealthCheck == nil || got[1].Status != "healthy" {
		t.Fatalf("servers never used, checked: %+v, want both healthy", got)
	}
	m.web.Stop()
	got = check(testKey, "?server_ids=web")
	if len(got) != 1 || got[0].Status != "unhealthy" || !strings.Contains(got[0].HealthCheckError, "web") {
		t.Fatalf("web down: %+v, want unhealthy with its failure", got)
	}
	if r := do(t, m.s, "GET", "/v1/mcp/server", testKey, ""); !strings.Contains(r.raw, `"server_id":"web"`) || !strings.Contains(r.raw, `"status":"unhealthy"`) {
		t.Fatalf("GET /v1/mcp/server after the check: %s", r.raw)
	}
	if got = check(testKey, "?server_ids=docs&server_ids=web"); len(got) != 2 || got[0].ServerID != "docs" || got[1].ServerID != "web" {
		t.Fatalf("repeated server_ids: %+v", got)
	}
	if got = check(testKey, "?server_ids=docs,web"); len(got) != 2 || got[0].Status != "healthy" || got[1].Status != "unhealthy" {
		t.Fatalf("comma-separated server_ids: %+v", got)
	}

	vk := issue(t, m.s, `{"name": "docs only", "mcp_servers": ["docs"]}`)
	if got = check(vk.Key, ""); len(got) != 1 || got[0].ServerID != "docs" {
		t.Fatalf("a docs-only key checked %+v, want docs only", got)
	}
	r := do(t, m.s, "GET", "/v1/mcp/server/health?server_ids=web", vk.Key, "")
	if r.status != http.StatusNotFound || !strings.Contains(r.raw, `MCP server \"web\"`) { // as an unknown server
		t.Fatalf("a docs-only key checking web: %d %s", r.status, r.raw)
	}
	r = do(t, m.s, "GET", "/v1/mcp/server/health?server_ids=nope", testKey, "")
	if r.status != http.StatusNotFound || !strings.Contains(r.raw, "nope") {
		t.Fatalf("an unknown server: %d %s", r.status, r.raw)
	}
}
