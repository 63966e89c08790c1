package client_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// TestCustomersAgainstServer: an end user is created, charged by a request naming it
// (OpenAI's user), blocked through UpdateCustomer (its requests then refused), listed and
// deleted.
func TestCustomersAgainstServer(t *testing.T) {
	c, base := realServerURL(t, completionsOptions(t))
	ctx := context.Background()
	cu, err := c.CreateCustomer(ctx, &client.CustomerRequest{EndUserID: "alice", Alias: "Alice", MaxBudgetUSD: 5, BudgetDuration: "30d"})
	if err != nil || cu.EndUserID != "alice" || cu.MaxBudgetUSD != 5 || cu.Alias != "Alice" {
		t.Fatalf("create %+v %v", cu, err)
	}
	chat := func() int {
		req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"user":"alice"}`))
		req.Header.Set("Authorization", "Bearer "+testKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := chat(); code != http.StatusOK {
		t.Fatalf("chat naming alice: %d", code)
	}
	if cu, err = c.Customer(ctx, "alice"); err != nil || cu.Spend.Requests != 1 || cu.Spend.PeriodStart == nil {
		t.Fatalf("after a request: %+v %v", cu, err)
	}
	blocked := true
	if cu, err = c.UpdateCustomer(ctx, "alice", &client.CustomerUpdate{Blocked: &blocked}); err != nil || !cu.Blocked || cu.MaxBudgetUSD != 5 {
		t.Fatalf("block %+v %v", cu, err)
	}
	if code := chat(); code != http.StatusBadRequest {
		t.Fatalf("chat naming blocked alice: %d", code)
	}
	if all, err := c.Customers(ctx); err != nil || len(all) != 1 {
		t.Fatalf("list %+v %v", all, err)
	}
	if err := c.DeleteCustomer(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	var apiErr *client.Error
	if _, err := c.Customer(ctx, "alice"); !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Fatalf("after delete: %v", err)
	}
}

// TestListCustomersPages: ListCustomers answers a page with a cursor to the next, and
// Customers follows the cursors to every end user.
func TestListCustomersPages(t *testing.T) {
	c, _ := realServerURL(t, completionsOptions(t))
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c"} {
		if _, err := c.CreateCustomer(ctx, &client.CustomerRequest{EndUserID: id}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := c.ListCustomers(ctx, &client.ListOptions{Limit: 2})
	if err != nil || len(p.Data) != 2 || p.Data[0].EndUserID != "a" || p.NextCursor == "" {
		t.Fatalf("first page %+v %v", p, err)
	}
	p, err = c.ListCustomers(ctx, &client.ListOptions{Limit: 2, Cursor: p.NextCursor})
	if err != nil || len(p.Data) != 1 || p.Data[0].EndUserID != "c" || p.NextCursor != "" {
		t.Fatalf("last page %+v %v", p, err)
	}
	if all, err := c.Customers(ctx); err != nil || len(all) != 3 {
		t.Fatalf("every end user %+v %v", all, err)
	}
}

// TestCustomerBudgetIDAndTokensPerMinute: an end user created with a LiteLLM budget's id
// takes the budget's limits and names it; tokens_per_minute is set on create and replaced
// on update; BudgetID "" on update leaves the budget keeping its values; a budget_id of no
// budget is a 404 and a budget field beside one a 422, each naming the field.
func TestCustomerBudgetIDAndTokensPerMinute(t *testing.T) {
	c, base := realServerURL(t, completionsOptions(t))
	ctx := context.Background()
	newBudget(t, base, testKey, `{"budget_id":"gold","max_budget":7,"budget_duration":"30d","tpm_limit":1000}`)

	cu, err := c.CreateCustomer(ctx, &client.CustomerRequest{EndUserID: "alice", BudgetID: "gold"})
	if err != nil || cu.BudgetID != "gold" || cu.MaxBudgetUSD != 7 || cu.BudgetDuration != "30d" || cu.TokensPerMinute != 1000 {
		t.Fatalf("create with budget_id: %+v %v", cu, err)
	}
	if cu, err = c.Customer(ctx, "alice"); err != nil || cu.BudgetID != "gold" || cu.TokensPerMinute != 1000 {
		t.Fatalf("read back: %+v %v", cu, err)
	}
	var apiErr *client.Error
	if _, err := c.CreateCustomer(ctx, &client.CustomerRequest{EndUserID: "bob", BudgetID: "nope"}); !errors.As(err, &apiErr) ||
		apiErr.Status != http.StatusNotFound || !strings.Contains(apiErr.Message, "budget_id") {
		t.Fatalf("a budget_id of no budget: %v", err)
	}
	if _, err := c.CreateCustomer(ctx, &client.CustomerRequest{EndUserID: "bob", BudgetID: "gold", TokensPerMinute: 5}); !errors.As(err, &apiErr) ||
		apiErr.Status != http.StatusUnprocessableEntity || !strings.Contains(apiErr.Message, "tokens_per_minute") {
		t.Fatalf("tokens_per_minute beside budget_id: %v", err)
	}

	cu, err = c.CreateCustomer(ctx, &client.CustomerRequest{EndUserID: "bob", TokensPerMinute: 500})
	if err != nil || cu.TokensPerMinute != 500 || cu.BudgetID != "" {
		t.Fatalf("create with tokens_per_minute: %+v %v", cu, err)
	}
	tpm := int64(800)
	if cu, err = c.UpdateCustomer(ctx, "bob", &client.CustomerUpdate{TokensPerMinute: &tpm}); err != nil || cu.TokensPerMinute != 800 {
		t.Fatalf("update tokens_per_minute: %+v %v", cu, err)
	}
	gold := "gold"
	if cu, err = c.UpdateCustomer(ctx, "bob", &client.CustomerUpdate{BudgetID: &gold}); err != nil || cu.BudgetID != "gold" || cu.TokensPerMinute != 1000 || cu.MaxBudgetUSD != 7 {
		t.Fatalf("update to budget_id: %+v %v", cu, err)
	}
	none := ""
	if cu, err = c.UpdateCustomer(ctx, "alice", &client.CustomerUpdate{BudgetID: &none}); err != nil || cu.BudgetID != "" || cu.TokensPerMinute != 1000 || cu.MaxBudgetUSD != 7 {
		t.Fatalf("leave the budget: %+v %v", cu, err)
	}
	zero := int64(0)
	if cu, err = c.UpdateCustomer(ctx, "alice", &client.CustomerUpdate{TokensPerMinute: &zero}); err != nil || cu.TokensPerMinute != 0 || cu.MaxBudgetUSD != 7 {
		t.Fatalf("tokens_per_minute back to 0: %+v %v", cu, err)
	}
}

// TestCustomerRequestsPerMinute: an end user's requests_per_minute is set on create,
// read back, replaced on update and taken from a budget's rpm_limit.
func TestCustomerRequestsPerMinute(t *testing.T) {
	c, base := realServerURL(t, completionsOptions(t))
	ctx := context.Background()
	cu, err := c.CreateCustomer(ctx, &client.CustomerRequest{EndUserID: "carol", RequestsPerMinute: 3})
	if err != nil || cu.RequestsPerMinute != 3 {
		t.Fatalf("create with requests_per_minute: %+v %v", cu, err)
	}
	if cu, err = c.Customer(ctx, "carol"); err != nil || cu.RequestsPerMinute != 3 {
		t.Fatalf("read back: %+v %v", cu, err)
	}
	rpm := 9
	if cu, err = c.UpdateCustomer(ctx, "carol", &client.CustomerUpdate{RequestsPerMinute: &rpm}); err != nil || cu.RequestsPerMinute != 9 {
		t.Fatalf("update requests_per_minute: %+v %v", cu, err)
	}
	newBudget(t, base, testKey, `{"budget_id":"paced","rpm_limit":4}`)
	if cu, err = c.CreateCustomer(ctx, &client.CustomerRequest{EndUserID: "dan", BudgetID: "paced"}); err != nil || cu.RequestsPerMinute != 4 || cu.BudgetID != "paced" {
		t.Fatalf("create with a budget of rpm_limit 4: %+v %v", cu, err)
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
