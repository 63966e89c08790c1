package main

import (
	"strings"
	"testing"
)

// TestTeamMembersUnknownSubcommand: a word that is no subcommand of teams members is a
// team only alone (teams members TEAM, the documented shorthand of list); before more
// words it is a usage error naming the valid subcommands, and alone naming no team the
// 404 names them too.
func TestTeamMembersUnknownSubcommand(t *testing.T) {
	gatewayCLIServer(t)
	if code, out, errOut := cli(t, "teams", "create", "--id", "eng"); code != 0 {
		t.Fatalf("team: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "users", "create", "--id", "ann"); code != 0 {
		t.Fatalf("user: %d %s %s", code, out, errOut)
	}
	for _, args := range [][]string{{"ad", "eng", "ann"}, {"remvoe", "eng", "ann"}, {"lsit", "eng"}} {
		code, _, errOut := cli(t, append([]string{"teams", "members"}, args...)...)
		if code != 2 || !strings.Contains(errOut, `unknown subcommand "`+args[0]+`"`) || !strings.Contains(errOut, "list, add, update, remove") {
			t.Errorf("teams members %s: %d %s", strings.Join(args, " "), code, errOut)
		}
	}
	if code, out, errOut := cli(t, "teams", "members", "eng"); code != 0 || !strings.Contains(out, "no members") {
		t.Fatalf("teams members TEAM: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "teams", "members", "lst"); code != 1 || !strings.Contains(errOut, "404") ||
		!strings.Contains(errOut, `"lst" is not a subcommand either (want list, add, update, remove)`) {
		t.Fatalf("teams members with a typo of list alone: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "teams", "members", "list", "ops"); code != 1 || !strings.Contains(errOut, "404") || strings.Contains(errOut, "subcommand") {
		t.Fatalf("teams members list of no such team: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "teams", "members", "add", "eng", "ann"); code != 0 {
		t.Fatalf("add: %d %s %s", code, out, errOut)
	}
}
