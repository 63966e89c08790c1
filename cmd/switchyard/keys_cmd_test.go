package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestKeysCommand: issue a key with limits, see it listed with its spend, change it, show
// it as itself, revoke it.
func TestKeysCommand(t *testing.T) {
	url := gatewayCLIServer(t)

	if code, out, errOut := cli(t, "keys"); code != 0 || !strings.Contains(out, "no virtual keys") {
		t.Fatalf("empty: %d %s %s", code, out, errOut)
	}
	code, out, errOut := cli(t, "keys", "issue", "--name", "bot", "--models", "openai/gpt-4o-mini, openai/gpt-4o", "--max-budget-usd", "5", "--budget-duration", "30d", "--expires", "90d", "--tpm", "5000")
	m := regexp.MustCompile(`(?m)^id:\s+(vk_[0-9a-f]{16})$[\s\S]*shown once[^\n]*\n(sy-vk-\S+)`).FindStringSubmatch(out)
	if code != 0 || m == nil || !strings.Contains(out, "$5/30d") || !strings.Contains(out, "0 requests, 5000 tokens per minute") {
		t.Fatalf("issue: %d %s %s", code, out, errOut)
	}
	id, key := m[1], m[2]
	if code, out, errOut := cli(t, "keys"); code != 0 || !regexp.MustCompile(id+`\s+bot\s+openai/gpt-4o-mini,openai/gpt-4o\s+\$0\.0000\s+\$5/30d\s+0\s+20`).MatchString(out) {
		t.Fatalf("list: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "keys", "update", id, "--max-budget-usd", "50", "--no-expiry"); code != 0 || !strings.Contains(out, "$50/30d") || !strings.Contains(out, "expires:   never") || !strings.Contains(out, "name:      bot") {
		t.Fatalf("update: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "keys", "show", "self", "--key", key); code != 0 || !strings.Contains(out, id) {
		t.Fatalf("show self: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "keys", "update", id, "--blocked"); code != 0 || !strings.Contains(out, "blocked:   yes") {
		t.Fatalf("block: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "keys", "show", "self", "--key", key); code != 0 {
		t.Fatalf("a blocked key still reads itself: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "keys", "update", id, "--blocked=false"); code != 0 || strings.Contains(out, "blocked:") {
		t.Fatalf("unblock: %d %s %s", code, out, errOut)
	}
	// No guardrail is configured on this server: the name is checked there.
	if code, _, errOut := cli(t, "keys", "update", id, "--guardrails", "pii"); code == 0 || !strings.Contains(errOut, "guardrails[0]") {
		t.Fatalf("an unknown guardrail: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "keys", "update", id, "--guardrails", ""); code != 0 || strings.Contains(out, "guardrails:") {
		t.Fatalf("no guardrails: %d %s %s", code, out, errOut)
	}
	// A team, a soft budget and MCP servers (none configured here: the name is checked there).
	if code := postJSON(t, url+"/api/v1/teams", cliKey, `{"team_id":"eng"}`, nil); code != 200 && code != 201 {
		t.Fatalf("create a team: %d", code)
	}
	if code, out, errOut := cli(t, "keys", "update", id, "--team", "eng", "--soft-budget-usd", "2.5"); code != 0 || !strings.Contains(out, "team:      eng") || !strings.Contains(out, "soft budget: $2.5") {
		t.Fatalf("team and soft budget: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "keys", "update", id, "--team", ""); code != 0 || strings.Contains(out, "team:") || !strings.Contains(out, "soft budget: $2.5") {
		t.Fatalf("out of the team: %d %s %s", code, out, errOut)
	}
	// An organization (a key without a team): --org puts the key in it, "" takes it out.
	if code := postJSON(t, url+"/organization/new", cliKey, `{"organization_id":"acme","organization_alias":"Acme"}`, nil); code != 200 {
		t.Fatalf("create an organization: %d", code)
	}
	if code, out, errOut := cli(t, "keys", "update", id, "--org", "acme"); code != 0 || !strings.Contains(out, "organization: acme") {
		t.Fatalf("into the organization: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "keys", "update", id, "--org", "nope"); code == 0 || !strings.Contains(errOut, "organization_id") {
		t.Fatalf("an unknown organization: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "keys", "update", id, "--org", ""); code != 0 || strings.Contains(out, "organization:") {
		t.Fatalf("out of the organization: %d %s %s", code, out, errOut)
	}
	// Key tags: on issue, kept as metadata tags and shown; update replaces them alone.
	if code, out, errOut := cli(t, "keys", "issue", "--name", "tagged", "--tags", "team:search,env:prod"); code != 0 || !strings.Contains(out, "tags:      team:search,env:prod") {
		t.Fatalf("a key with tags: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "keys", "update", id, "--tags", "x,y"); code != 0 || !strings.Contains(out, "tags:      x,y") {
		t.Fatalf("--tags on update: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "keys", "update", id, "--tags", ""); code != 0 || strings.Contains(out, "tags:") {
		t.Fatalf("--tags \"\" on update: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "keys", "issue", "--tags", "has space"); code == 0 || !strings.Contains(errOut, "tags") {
		t.Fatalf("a bad key tag: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "keys", "update", id, "--mcp-servers", "docs"); code == 0 || !strings.Contains(errOut, "mcp_servers[0]") {
		t.Fatalf("an MCP server the server lacks: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "keys", "show", id, "--max-tokens", "5"); code == 0 || !strings.Contains(errOut, "--max-tokens is for keys issue and keys update") {
		t.Fatalf("a limit flag on show: %d %s", code, errOut)
	}
	code, out, errOut = cli(t, "keys", "rotate", id)
	rm := regexp.MustCompile(`(?m)old one no longer works\):\n(sy-vk-\S+)`).FindStringSubmatch(out)
	if code != 0 || rm == nil || rm[1] == key || !strings.Contains(out, id) {
		t.Fatalf("rotate: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "keys", "show", "self", "--key", key); code == 0 || !strings.Contains(errOut, "401") {
		t.Fatalf("the key rotated away: %d %s", code, errOut)
	}
	key = rm[1]
	if code, out, errOut := cli(t, "keys", "show", "self", "--key", key); code != 0 || !strings.Contains(out, id) {
		t.Fatalf("show self with the new key: %d %s %s", code, out, errOut)
	}
	// Conditional rotation and update: the etag keys show prints, a stale one refused.
	code, out, errOut = cli(t, "keys", "show", id)
	em := regexp.MustCompile(`(?m)^etag:\s+(\S+)$`).FindStringSubmatch(out)
	if code != 0 || em == nil {
		t.Fatalf("show prints no etag: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "keys", "rotate", id, "--if-match", `"stale"`); code == 0 || !strings.Contains(errOut, "412") || !strings.Contains(errOut, "If-Match") {
		t.Fatalf("rotate with a stale etag: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "keys", "update", id, "--max-tokens", "9", "--if-match", `"stale"`); code == 0 || !strings.Contains(errOut, "412") {
		t.Fatalf("update with a stale etag: %d %s %s", code, out, errOut)
	}
	code, out, errOut = cli(t, "keys", "rotate", id, "--if-match", em[1])
	rm = regexp.MustCompile(`(?m)old one no longer works\):\n(sy-vk-\S+)`).FindStringSubmatch(out)
	if code != 0 || rm == nil || rm[1] == key {
		t.Fatalf("rotate with the current etag: %d %s %s", code, out, errOut)
	}
	key = rm[1]
	if code, out, errOut := cli(t, "keys", "rotate", id, "--if-match", em[1]); code == 0 || !strings.Contains(errOut, "412") {
		t.Fatalf("a second rotation with the same etag: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "keys", "show", id, "--if-match", em[1]); code == 0 || !strings.Contains(errOut, "--if-match is for keys rotate and keys update") {
		t.Fatalf("--if-match on show: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "keys", "revoke", id); code != 0 || !strings.Contains(out, id) {
		t.Fatalf("revoke: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "keys", "show", "self", "--key", key); code == 0 || !strings.Contains(errOut, "401") {
		t.Fatalf("revoked key: %d %s", code, errOut)
	}
}

// TestKeysCommandBudgetID: keys issue --budget-id takes a LiteLLM budget's limits and shows
// its id; a budget of no such id and --max-budget-usd beside --budget-id are refused naming
// the field; update --budget-id "" leaves the budget keeping its values.
func TestKeysCommandBudgetID(t *testing.T) {
	url := gatewayCLIServer(t)
	newBudget(t, url, cliKey, `{"budget_id":"gold","max_budget":7,"budget_duration":"30d"}`)
	code, out, errOut := cli(t, "keys", "issue", "--name", "tier", "--budget-id", "gold", "--json")
	var vk struct {
		ID           string  `json:"id"`
		BudgetID     string  `json:"budget_id"`
		MaxBudgetUSD float64 `json:"max_budget_usd"`
	}
	if code != 0 || json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &vk) != nil || vk.BudgetID != "gold" || vk.MaxBudgetUSD != 7 {
		t.Fatalf("issue --budget-id: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "keys", "show", vk.ID); code != 0 || !strings.Contains(out, "budget id: gold") {
		t.Fatalf("show of a key with a budget: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "keys", "issue", "--budget-id", "nope"); code == 0 || !strings.Contains(errOut, "404") || !strings.Contains(errOut, "budget_id") {
		t.Fatalf("issue --budget-id of no budget: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "keys", "issue", "--budget-id", "gold", "--max-budget-usd", "5"); code == 0 || !strings.Contains(errOut, "422") || !strings.Contains(errOut, "max_budget_usd") {
		t.Fatalf("issue --max-budget-usd beside --budget-id: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "keys", "update", vk.ID, "--budget-id", ""); code != 0 || strings.Contains(out, "budget id:") || !strings.Contains(out, "$7") {
		t.Fatalf("update --budget-id \"\": %d %s %s", code, out, errOut)
	}
}
