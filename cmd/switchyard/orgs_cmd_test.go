package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestOrgsCommand: create an organization, put a team in it (bounded by its models), add,
// list, update and remove members, change its limits (0 removing the budget), and delete it
// with its team and the team's key.
func TestOrgsCommand(t *testing.T) {
	gatewayCLIServer(t)

	if code, out, errOut := cli(t, "orgs"); code != 0 || !strings.Contains(out, "no organizations") {
		t.Fatalf("empty: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "orgs", "create", "--id", "acme", "--name", "Acme", "--models", "openai/gpt-4o-mini", "--max-budget-usd", "50", "--budget-duration", "30d", "--rpm", "60"); code != 0 ||
		!strings.Contains(out, "id:        acme") || !strings.Contains(out, "$50/30d") || !strings.Contains(out, "60 requests") || !strings.Contains(out, "models:    openai/gpt-4o-mini") {
		t.Fatalf("create: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "orgs", "create", "--id", "nameless"); code == 0 || !strings.Contains(errOut, "400") || !strings.Contains(errOut, "organization_alias") {
		t.Fatalf("no name: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "teams", "create", "--id", "wide", "--organization", "acme", "--models", "openai/gpt-4o"); code == 0 || !strings.Contains(errOut, "models") || !strings.Contains(errOut, "acme") {
		t.Fatalf("a team outside the organization's models: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "teams", "create", "--id", "eng", "--organization", "acme", "--models", "openai/gpt-4o-mini"); code != 0 || !strings.Contains(out, "org:       acme") {
		t.Fatalf("a team in the organization: %d %s %s", code, out, errOut)
	}
	code, out, errOut := cli(t, "keys", "issue", "--name", "bot", "--team", "eng")
	m := regexp.MustCompile(`(?m)^id:\s+(vk_[0-9a-f]{16})$`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("a key of the team: %d %s %s", code, out, errOut)
	}

	if code, out, errOut := cli(t, "orgs", "members", "add", "acme", "ann", "bob@example.com", "--role", "org_admin"); code != 0 ||
		!strings.Contains(out, "added user ann to organization acme as org_admin") || !strings.Contains(out, "to organization acme as org_admin") || strings.Count(out, "added user") != 2 {
		t.Fatalf("members add: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "orgs", "members", "add", "acme", "cy"); code != 0 || !strings.Contains(out, "added user cy to organization acme as internal_user") {
		t.Fatalf("members add with the default role: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "orgs", "members", "add", "acme", "dee", "--role", "owner"); code == 0 || !strings.Contains(errOut, "400") || !strings.Contains(errOut, "role") {
		t.Fatalf("a bad role: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "orgs", "members", "update", "acme", "bob@example.com", "--role", "internal_user_viewer"); code != 0 || !strings.Contains(out, "is now internal_user_viewer") {
		t.Fatalf("members update: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "orgs", "members", "acme"); code != 0 || !regexp.MustCompile(`ann\s+org_admin\s+-`).MatchString(out) ||
		!regexp.MustCompile(`internal_user_viewer\s+bob@example\.com`).MatchString(out) || !regexp.MustCompile(`cy\s+internal_user\s+-`).MatchString(out) {
		t.Fatalf("members list: %d %s %s", code, out, errOut)
	}
	// A member's bound and spend show in the list.
	if code, out, errOut := cli(t, "orgs", "members", "add", "acme", "dee", "--max-budget-usd", "5"); code != 0 || !strings.Contains(out, "added user dee") {
		t.Fatalf("members add with a budget: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "orgs", "members", "acme"); code != 0 || !regexp.MustCompile(`(?m)^USER\s+ROLE\s+EMAIL\s+SPEND\s+BUDGET$`).MatchString(out) ||
		!regexp.MustCompile(`dee\s+internal_user\s+-\s+\$0\.0000\s+\$5\n`).MatchString(out) || !regexp.MustCompile(`cy\s+internal_user\s+-\s+\$0\.0000\s+-\n`).MatchString(out) {
		t.Fatalf("members list with spend and budget: %d %s %s", code, out, errOut)
	}
	// members update changes the bound (and the role, or not), and shows it.
	if code, out, errOut := cli(t, "orgs", "members", "update", "acme", "dee", "--max-budget-usd", "1.5"); code != 0 ||
		!strings.Contains(out, "user dee of organization acme is now internal_user, its keys of the organization bounded to $1.5") {
		t.Fatalf("a budget on members update: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "orgs", "members", "update", "acme", "cy", "--role", "org_admin", "--max-budget-usd", "0"); code != 0 ||
		!strings.Contains(out, "user cy of organization acme is now org_admin, its keys of the organization bounded to $0") {
		t.Fatalf("role and budget on members update: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "orgs", "members", "acme"); code != 0 || !regexp.MustCompile(`dee\s+internal_user\s+-\s+\$0\.0000\s+\$1\.5\n`).MatchString(out) ||
		!regexp.MustCompile(`cy\s+org_admin\s+-\s+\$0\.0000\s+\$0\n`).MatchString(out) {
		t.Fatalf("members list after the updates: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "orgs", "members", "update", "acme", "dee"); code == 0 || !strings.Contains(errOut, "what changes") {
		t.Fatalf("members update without a change: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "orgs", "members", "remove", "acme", "dee", "--max-budget-usd", "1"); code == 0 || !strings.Contains(errOut, "--max-budget-usd is for orgs members add and orgs members update") {
		t.Fatalf("a budget on members remove: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "orgs", "members", "remove", "acme", "dee"); code != 0 || !strings.Contains(out, "removed user dee") {
		t.Fatalf("members remove dee: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "orgs", "members", "remove", "acme", "cy"); code != 0 || !strings.Contains(out, "removed user cy from organization acme") {
		t.Fatalf("members remove: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "orgs", "members", "remove", "acme", "cy"); code == 0 || !strings.Contains(errOut, "404") {
		t.Fatalf("a member removed twice: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "orgs", "members", "list", "acme", "--role", "org_admin"); code == 0 || !strings.Contains(errOut, "--role is for orgs members add and orgs members update") {
		t.Fatalf("a setting on members list: %d %s", code, errOut)
	}

	if code, out, errOut := cli(t, "orgs"); code != 0 || !regexp.MustCompile(`acme\s+Acme\s+openai/gpt-4o-mini\s+\$0\.0000\s+\$50/30d\s+1\s+2\s+false`).MatchString(out) {
		t.Fatalf("list: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "orgs", "--name", "acm"); code != 0 || !strings.Contains(out, "acme") {
		t.Fatalf("list --name acm: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "orgs", "list", "--id", "nope"); code != 0 || strings.Contains(out, "acme") || !strings.Contains(out, "no organization matches") {
		t.Fatalf("list --id nope: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "orgs", "list", "--rpm", "5"); code == 0 || !strings.Contains(errOut, "--rpm is for orgs create and orgs update") {
		t.Fatalf("list --rpm: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "orgs", "update", "acme", "--blocked", "--max-budget-usd", "0", "--rpm", "0"); code != 0 ||
		!strings.Contains(out, "blocked:   yes") || !strings.Contains(out, "budget:    -") || strings.Contains(out, "rate:") {
		t.Fatalf("update: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "orgs", "update", "acme", "--blocked=false"); code != 0 || strings.Contains(out, "blocked:") || !strings.Contains(out, "teams:     1 eng") {
		t.Fatalf("unblock: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "orgs", "show", "acme", "--rpm", "5"); code == 0 || !strings.Contains(errOut, "--rpm is for orgs create and orgs update") {
		t.Fatalf("a setting on show: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "orgs", "delete", "acme", "nope"); code == 0 || !strings.Contains(errOut, "404") {
		t.Fatalf("delete with an unknown id: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "orgs", "delete", "acme"); code != 0 || !strings.Contains(out, "deleted organization acme (1 team(s): eng, revoked 1 virtual key(s): "+m[1]+")") {
		t.Fatalf("delete: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "teams", "show", "eng"); code == 0 || !strings.Contains(errOut, "404") {
		t.Fatalf("the deleted organization's team: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "keys", "show", m[1]); code == 0 || !strings.Contains(errOut, "404") {
		t.Fatalf("the deleted organization's team's key: %d %s", code, errOut)
	}
}
