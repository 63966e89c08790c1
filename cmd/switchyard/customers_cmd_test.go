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

// TestCustomersCommandBudgetIDAndTPM: customers create --budget-id takes a LiteLLM budget's
// limits and shows its id; --tpm sets and update --tpm replaces the end user's tokens per
// minute; update --budget-id "" leaves the budget; a budget of no such id and --tpm beside
// --budget-id are refused naming the field; both flags are refused on show.
func TestCustomersCommandBudgetIDAndTPM(t *testing.T) {
	url := gatewayCLIServer(t)
	newBudget(t, url, cliKey, `{"budget_id":"gold","max_budget":7,"budget_duration":"30d","tpm_limit":1000}`)

	if code, out, errOut := cli(t, "customers", "create", "alice", "--budget-id", "gold"); code != 0 ||
		!strings.Contains(out, "budget id: gold") || !strings.Contains(out, "$7/30d") || !strings.Contains(out, "tpm:       1000 tokens per minute") {
		t.Fatalf("create --budget-id: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "customers", "create", "bob", "--budget-id", "nope"); code == 0 || !strings.Contains(errOut, "404") || !strings.Contains(errOut, "budget_id") {
		t.Fatalf("create --budget-id of no budget: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "customers", "create", "bob", "--budget-id", "gold", "--tpm", "5"); code == 0 || !strings.Contains(errOut, "422") || !strings.Contains(errOut, "tokens_per_minute") {
		t.Fatalf("create --tpm beside --budget-id: %d %s", code, errOut)
	}
	if code, out, errOut := cli(t, "customers", "create", "bob", "--tpm", "500", "--json"); code != 0 || !strings.Contains(out, `"tokens_per_minute": 500`) || strings.Contains(out, "budget_id") {
		t.Fatalf("create --tpm: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "customers", "update", "bob", "--tpm", "800"); code != 0 || !strings.Contains(out, "tpm:       800 tokens per minute") {
		t.Fatalf("update --tpm: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "customers", "update", "alice", "--budget-id", ""); code != 0 || strings.Contains(out, "budget id:") || !strings.Contains(out, "tpm:       1000 tokens per minute") {
		t.Fatalf("update --budget-id \"\": %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "customers", "show", "bob", "--tpm", "3"); code == 0 || !strings.Contains(errOut, "--tpm is for customers create and customers update") {
		t.Fatalf("--tpm on show: %d %s", code, errOut)
	}
}

// newBudget makes a LiteLLM budget of body (POST /budget/new) on the server at base with
// key, failing the test unless it is answered 200.
func newBudget(t *testing.T, base, key, body string) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/budget/new", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/budget/new: %d", resp.StatusCode)
	}
}

// TestCustomersCommandRPMAndModelMaxBudget: customers create --rpm sets and update --rpm
// replaces the end user's requests per minute; --model-max-budget sets its per-model
// budgets (MODEL=USD[/PERIOD]), shown with what each spent, update replaces them and ""
// removes them; a bad value is refused before any request and both flags are refused on
// show.
func TestCustomersCommandRPMAndModelMaxBudget(t *testing.T) {
	gatewayCLIServer(t)
	code, out, errOut := cli(t, "customers", "create", "carol", "--rpm", "30", "--model-max-budget", "openai/gpt-4o-mini=2.5/30d,openai/gpt-4o=1")
	if code != 0 || !strings.Contains(out, "rpm:       30 requests per minute") ||
		!strings.Contains(out, "model:     openai/gpt-4o budget $1, spent $0.0000") || !strings.Contains(out, "model:     openai/gpt-4o-mini budget $2.5/30d, spent $0.0000") {
		t.Fatalf("create --rpm --model-max-budget: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "customers", "update", "carol", "--rpm", "5", "--model-max-budget", "openai/gpt-4o-mini=3", "--json"); code != 0 ||
		!strings.Contains(out, `"requests_per_minute": 5`) || !strings.Contains(out, `"max_budget_usd": 3`) || strings.Contains(out, `"openai/gpt-4o":`) {
		t.Fatalf("update --rpm --model-max-budget: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "customers", "update", "carol", "--model-max-budget", ""); code != 0 || strings.Contains(out, "model:") || !strings.Contains(out, "rpm:       5 requests per minute") {
		t.Fatalf("update --model-max-budget \"\": %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "customers", "update", "carol", "--rpm", "0", "--json"); code != 0 || strings.Contains(out, "requests_per_minute") {
		t.Fatalf("update --rpm 0: %d %s %s", code, out, errOut)
	}
	for _, bad := range []string{"openai/gpt-4o", "openai/gpt-4o=ten", "openai/gpt-4o=-1", "=1"} {
		if code, _, errOut := cli(t, "customers", "create", "dave", "--model-max-budget", bad); code == 0 || !strings.Contains(errOut, "--model-max-budget") {
			t.Fatalf("create --model-max-budget %q: %d %s", bad, code, errOut)
		}
	}
	if code, _, errOut := cli(t, "customers", "create", "dave", "--model-max-budget", "nope/none=1"); code == 0 || !strings.Contains(errOut, "422") || !strings.Contains(errOut, "model_max_budget") {
		t.Fatalf("create --model-max-budget of a model not served: %d %s", code, errOut)
	}
	for _, flag := range []string{"--rpm", "--model-max-budget"} {
		if code, _, errOut := cli(t, "customers", "show", "carol", flag, "3"); code == 0 || !strings.Contains(errOut, flag+" is for customers create and customers update") {
			t.Fatalf("%s on show: %d %s", flag, code, errOut)
		}
	}
}
