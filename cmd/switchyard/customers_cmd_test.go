package main

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestCustomersCommand: an end user made by a request is listed with its spend; one made
// with a budget is shown with it; block refuses its requests and unblock lets them through;
// delete removes it; settings on other subcommands are refused by name.
func TestCustomersCommand(t *testing.T) {
	url := gatewayCLIServer(t)
	chat := func(user string) int {
		t.Helper()
		req, _ := http.NewRequest("POST", url+"/v1/chat/completions",
			strings.NewReader(`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"user":"`+user+`"}`))
		req.Header.Set("Authorization", "Bearer "+cliKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	if code, out, errOut := cli(t, "customers"); code != 0 || !strings.Contains(out, "no end users") {
		t.Fatalf("empty: %d %s %s", code, out, errOut)
	}
	if st := chat("alice"); st != http.StatusOK {
		t.Fatalf("a request naming alice: %d", st)
	}
	if code, out, errOut := cli(t, "customers", "list"); code != 0 || !regexp.MustCompile(`alice\s+all\s+\$0\.\d+\s+-\s+1\s+false`).MatchString(out) {
		t.Fatalf("list after a request: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "customers", "create", "bob", "--alias", "Bob", "--max-budget-usd", "5", "--budget-duration", "30d"); code != 0 ||
		!strings.Contains(out, "id:        bob") || !strings.Contains(out, "alias:     Bob") || !strings.Contains(out, "$5/30d") {
		t.Fatalf("create: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "customers", "block", "bob"); code != 0 || !strings.Contains(out, "blocked end user bob") {
		t.Fatalf("block: %d %s %s", code, out, errOut)
	}
	if st := chat("bob"); st != http.StatusBadRequest {
		t.Fatalf("a request naming blocked bob: %d, want 400", st)
	}
	if code, out, errOut := cli(t, "customers", "show", "bob"); code != 0 || !strings.Contains(out, "blocked:   yes") {
		t.Fatalf("show blocked: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "customers", "unblock", "bob"); code != 0 || !strings.Contains(out, "unblocked end user bob") {
		t.Fatalf("unblock: %d %s %s", code, out, errOut)
	}
	if st := chat("bob"); st != http.StatusOK {
		t.Fatalf("a request naming unblocked bob: %d", st)
	}
	if code, out, errOut := cli(t, "customers", "update", "bob", "--models", "openai/gpt-4o"); code != 0 || !strings.Contains(out, "models:    openai/gpt-4o") || strings.Contains(out, "blocked:") {
		t.Fatalf("update: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "customers", "show", "bob", "--alias", "x"); code == 0 || !strings.Contains(errOut, "--alias is for customers create and customers update") {
		t.Fatalf("a setting on show: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "customers", "delete", "alice", "bob"); code != 0 || !strings.Contains(out, "deleted end user alice") || !strings.Contains(out, "deleted end user bob") {
		t.Fatalf("delete: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "customers", "show", "bob"); code == 0 || !strings.Contains(errOut, "404") {
		t.Fatalf("a deleted end user: %d %s", code, errOut)
	}
}
