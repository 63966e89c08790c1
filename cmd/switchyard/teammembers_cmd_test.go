package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestTeamMembersCommand: teams members add puts a user in a team with a role and budget,
// list shows it, update changes only the settings given (--role "" back to user), remove
// takes it out (the user stays); unknown teams and users, a bad role and settings on list
// are refused naming what is wrong.
func TestTeamMembersCommand(t *testing.T) {
	gatewayCLIServer(t)
	if code, out, errOut := cli(t, "teams", "create", "--id", "eng"); code != 0 {
		t.Fatalf("team: %d %s %s", code, out, errOut)
	}
	for _, id := range []string{"ann", "bob"} {
		if code, out, errOut := cli(t, "users", "create", "--id", id); code != 0 {
			t.Fatalf("user %s: %d %s %s", id, code, out, errOut)
		}
	}
	if code, out, errOut := cli(t, "teams", "members", "list", "eng"); code != 0 || !strings.Contains(out, "no members") {
		t.Fatalf("empty: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "teams", "members", "add", "eng", "ann", "--role", "admin", "--max-budget-usd", "3"); code != 0 ||
		!strings.Contains(out, "user:      ann") || !strings.Contains(out, "role:      admin") || !strings.Contains(out, "budget:    $3") {
		t.Fatalf("add: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "teams", "members", "add", "eng", "bob"); code != 0 || !strings.Contains(out, "role:      user") {
		t.Fatalf("add with the default role: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "teams", "members", "eng"); code != 0 ||
		!regexp.MustCompile(`ann\s+admin\s+\$0\.0000\s+\$3\s+0\s+false`).MatchString(out) || !regexp.MustCompile(`bob\s+user\s+\$0\.0000\s+-\s+0\s+false`).MatchString(out) {
		t.Fatalf("list: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "users", "show", "ann"); code != 0 || !strings.Contains(out, "teams:     1 eng") {
		t.Fatalf("ann's teams: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "teams", "members", "update", "eng", "ann", "--blocked"); code != 0 ||
		!strings.Contains(out, "blocked:   yes") || !strings.Contains(out, "role:      admin") || !strings.Contains(out, "budget:    $3") {
		t.Fatalf("update --blocked: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "teams", "members", "update", "eng", "ann", "--role", "", "--blocked=false"); code != 0 ||
		!strings.Contains(out, "role:      user") || strings.Contains(out, "blocked:") {
		t.Fatalf(`update --role "": %d %s %s`, code, out, errOut)
	}
	if code, _, errOut := cli(t, "teams", "members", "update", "eng", "ann", "--role", "wizard"); code == 0 || !strings.Contains(errOut, "422") || !strings.Contains(errOut, "role") {
		t.Fatalf("a bad role: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "teams", "members", "add", "eng", "nobody"); code == 0 || !strings.Contains(errOut, "404") || !strings.Contains(errOut, "user_id") {
		t.Fatalf("a user of no such id: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "teams", "members", "list", "ops"); code == 0 || !strings.Contains(errOut, "404") || !strings.Contains(errOut, "team") {
		t.Fatalf("a team of no such id: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "teams", "members", "list", "eng", "--role", "admin"); code == 0 || !strings.Contains(errOut, "--role is for teams members add and teams members update") {
		t.Fatalf("a setting on list: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "teams", "members", "remove", "eng", "ann", "bob"); code != 0 ||
		!strings.Contains(out, "removed user ann from team eng") || !strings.Contains(out, "removed user bob from team eng") {
		t.Fatalf("remove: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "teams", "members", "list", "eng", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("after remove: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "users", "show", "ann"); code != 0 || !strings.Contains(out, "teams:     0") {
		t.Fatalf("ann after leaving: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "teams", "members", "remove", "eng", "ann"); code == 0 || !strings.Contains(errOut, "404") {
		t.Fatalf("remove a user not in the team: %d %s", code, errOut)
	}
}
