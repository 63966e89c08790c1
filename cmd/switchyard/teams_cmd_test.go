package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestTeamsCommand: create a team, see it listed, put a key in it, block and unblock it,
// and delete it with its key.
func TestTeamsCommand(t *testing.T) {
	gatewayCLIServer(t)

	if code, out, errOut := cli(t, "teams"); code != 0 || !strings.Contains(out, "no teams") {
		t.Fatalf("empty: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "teams", "create", "--id", "eng", "--name", "Engineering", "--max-budget-usd", "5", "--budget-duration", "30d", "--rpm", "60"); code != 0 ||
		!strings.Contains(out, "id:        eng") || !strings.Contains(out, "$5/30d") || !strings.Contains(out, "60 requests") {
		t.Fatalf("create: %d %s %s", code, out, errOut)
	}
	code, out, errOut := cli(t, "keys", "issue", "--name", "bot", "--team", "eng")
	m := regexp.MustCompile(`(?m)^id:\s+(vk_[0-9a-f]{16})$`).FindStringSubmatch(out)
	if code != 0 || m == nil || !strings.Contains(out, "team:      eng") {
		t.Fatalf("a key of the team: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "teams"); code != 0 || !regexp.MustCompile(`eng\s+Engineering\s+all\s+\$0\.0000\s+\$5/30d\s+1\s+false`).MatchString(out) {
		t.Fatalf("list: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "teams", "update", "eng", "--blocked", "--models", "openai/gpt-4o-mini"); code != 0 || !strings.Contains(out, "blocked:   yes") || !strings.Contains(out, "models:    openai/gpt-4o-mini") {
		t.Fatalf("block: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "teams", "update", "eng", "--blocked=false"); code != 0 || strings.Contains(out, "blocked:") || !strings.Contains(out, m[1]) {
		t.Fatalf("unblock: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "teams", "show", "eng", "--rpm", "5"); code == 0 || !strings.Contains(errOut, "--rpm is for teams create and teams update") {
		t.Fatalf("a setting on show: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "teams", "delete", "eng"); code != 0 || !strings.Contains(out, "deleted team eng (revoked 1 virtual key(s): "+m[1]+")") {
		t.Fatalf("delete: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "teams", "show", "eng"); code == 0 || !strings.Contains(errOut, "404") {
		t.Fatalf("a deleted team: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "keys", "show", m[1]); code == 0 || !strings.Contains(errOut, "404") {
		t.Fatalf("the deleted team's key: %d %s", code, errOut)
	}
}

// TestTeamsCommandTags: a team's tags are set on create, shown, replaced and removed on
// update (its other settings kept), and refused on show.
func TestTeamsCommandTags(t *testing.T) {
	gatewayCLIServer(t)

	if code, out, errOut := cli(t, "teams", "create", "--id", "tagged", "--tags", "env:prod, team:eng", "--rpm", "60"); code != 0 || !strings.Contains(out, "tags:      env:prod,team:eng") {
		t.Fatalf("create: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "teams", "show", "tagged", "--json"); code != 0 || !strings.Contains(strings.Join(strings.Fields(out), ""), `"tags":["env:prod","team:eng"]`) {
		t.Fatalf("show: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "teams", "update", "tagged", "--tags", "env:dev"); code != 0 || !strings.Contains(out, "tags:      env:dev\n") || !strings.Contains(out, "60 requests") {
		t.Fatalf("update: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "teams", "update", "tagged", "--name", "T"); code != 0 || !strings.Contains(out, "tags:      env:dev\n") {
		t.Fatalf("update without --tags: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "teams", "update", "tagged", "--tags", ""); code != 0 || strings.Contains(out, "tags:") {
		t.Fatalf("remove: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "teams", "create", "--id", "bad", "--tags", "x,batch:1"); code == 0 || !strings.Contains(errOut, "tags") {
		t.Fatalf("a bad tag: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "teams", "show", "tagged", "--tags", "x"); code == 0 || !strings.Contains(errOut, "--tags is for teams create and teams update") {
		t.Fatalf("--tags on show: %d %s", code, errOut)
	}
}
