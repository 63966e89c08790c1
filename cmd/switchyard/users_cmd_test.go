package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// TestUsersCommand: create a user in a team, see it listed, update and show it, and
// delete it with the key made for it.
func TestUsersCommand(t *testing.T) {
	url := gatewayCLIServer(t)

	if code, out, errOut := cli(t, "users"); code != 0 || !strings.Contains(out, "no users") {
		t.Fatalf("empty: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "teams", "create", "--id", "eng"); code != 0 {
		t.Fatalf("team: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "users", "create", "--id", "ann", "--email", "ann@example.com", "--max-budget-usd", "5", "--budget-duration", "30d", "--teams", "eng"); code != 0 ||
		!strings.Contains(out, "id:        ann") || !strings.Contains(out, "email:     ann@example.com") || !strings.Contains(out, "$5/30d") || !strings.Contains(out, "teams:     1 eng") {
		t.Fatalf("create: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "users", "create", "--id", "bob", "--role", "wizard"); code == 0 || !strings.Contains(errOut, "role") {
		t.Fatalf("a bad role: %d %s", code, errOut)
	}
	c, err := client.New(client.WithBaseURL(url), client.WithAPIKey(cliKey), client.WithoutRetry())
	if err != nil {
		t.Fatal(err)
	}
	vk, err := c.IssueKey(context.Background(), &client.KeyRequest{Metadata: map[string]any{"user_id": "ann"}})
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := cli(t, "users"); code != 0 || !regexp.MustCompile(`ann\s+ann@example.com\s+internal_user\s+all\s+\$0\.0000\s+\$5/30d\s+eng\s+1\s+false`).MatchString(out) {
		t.Fatalf("list: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "users", "update", "ann", "--blocked", "--alias", "Ann"); code != 0 || !strings.Contains(out, "blocked:   yes") || !strings.Contains(out, "alias:     Ann") {
		t.Fatalf("block: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "users", "show", "ann"); code != 0 || !strings.Contains(out, "keys:      1 "+vk.ID) {
		t.Fatalf("show: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "users", "show", "ann", "--tpm", "5"); code == 0 || !strings.Contains(errOut, "--tpm is for users create and users update") {
		t.Fatalf("a setting on show: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "users", "delete", "ann"); code != 0 || !strings.Contains(out, "deleted user ann (revoked 1 virtual key(s): "+vk.ID+")") {
		t.Fatalf("delete: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "users", "show", "ann"); code == 0 || !strings.Contains(errOut, "404") {
		t.Fatalf("a deleted user: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "keys", "show", vk.ID); code == 0 || !strings.Contains(errOut, "404") {
		t.Fatalf("the deleted user's key: %d %s", code, errOut)
	}
}
