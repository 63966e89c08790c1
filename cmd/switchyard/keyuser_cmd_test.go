package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestKeysCommandUser: keys issue --user makes the key a user's (shown, listed under the
// user); a user of no such id is refused naming user_id; keys update --user moves it and
// --user "" takes it from its user; --user is refused on other subcommands.
func TestKeysCommandUser(t *testing.T) {
	gatewayCLIServer(t)
	for _, id := range []string{"ann", "bob"} {
		if code, out, errOut := cli(t, "users", "create", "--id", id); code != 0 {
			t.Fatalf("user %s: %d %s %s", id, code, out, errOut)
		}
	}
	code, out, errOut := cli(t, "keys", "issue", "--name", "a", "--user", "ann")
	if code != 0 || !strings.Contains(out, "user:      ann") {
		t.Fatalf("issue --user: %d %s %s", code, out, errOut)
	}
	id := regexp.MustCompile(`vk_[0-9a-f]{16}`).FindString(out)
	if id == "" {
		t.Fatalf("no key id in %s", out)
	}
	if code, out, errOut := cli(t, "users", "show", "ann"); code != 0 || !strings.Contains(out, id) {
		t.Fatalf("ann's keys: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "keys", "issue", "--user", "nobody"); code == 0 || !strings.Contains(errOut, "404") || !strings.Contains(errOut, "user_id") {
		t.Fatalf("issue --user of no user: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "keys", "update", id, "--user", "bob"); code != 0 || !strings.Contains(out, "user:      bob") {
		t.Fatalf("update --user bob: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "keys", "update", id, "--user", ""); code != 0 || strings.Contains(out, "user:") {
		t.Fatalf(`update --user "": %d %s %s`, code, out, errOut)
	}
	if code, out, errOut := cli(t, "users", "show", "bob"); code != 0 || strings.Contains(out, id) {
		t.Fatalf("bob's keys after the key left: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "keys", "show", id, "--user", "ann"); code == 0 || !strings.Contains(errOut, "--user is for keys issue and keys update") {
		t.Fatalf("--user on show: %d %s", code, errOut)
	}
}
