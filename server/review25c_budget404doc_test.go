package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestReview25cUnknownBudgetIDIsDocumented: a budget_id naming no budget is a 404 on the
// customer and key routes that take one, and the OpenAPI document lists that 404 on each
// of them.
func TestReview25cUnknownBudgetIDIsDocumented(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"c"}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	vk := issue(t, s, `{"name":"k"}`)
	doc := loadOpenAPI(t, s)
	for _, c := range []struct{ method, template, url, body string }{
		{"POST", "/customer/new", "/customer/new", `{"user_id":"d","budget_id":"none"}`},
		{"POST", "/end_user/new", "/end_user/new", `{"user_id":"d","budget_id":"none"}`},
		{"POST", "/customer/update", "/customer/update", `{"user_id":"c","budget_id":"none"}`},
		{"POST", "/api/v1/customers", "/api/v1/customers", `{"end_user_id":"d","budget_id":"none"}`},
		{"PATCH", "/api/v1/customers/{end_user_id}", "/api/v1/customers/c", `{"budget_id":"none"}`},
		{"POST", "/key/generate", "/key/generate", `{"budget_id":"none"}`},
		{"POST", "/key/update", "/key/update", `{"key":"` + vk.ID + `","budget_id":"none"}`},
		{"POST", "/key/regenerate", "/key/regenerate", `{"key":"` + vk.ID + `","budget_id":"none"}`},
		{"POST", "/api/v1/keys", "/api/v1/keys", `{"budget_id":"none"}`},
		{"PATCH", "/api/v1/keys/{key_id}", "/api/v1/keys/" + vk.ID, `{"budget_id":"none"}`},
	} {
		if r := do(t, s, c.method, c.url, testKey, c.body); r.status != http.StatusNotFound {
			t.Fatalf("%s %s: %d %s", c.method, c.url, r.status, r.raw)
		}
		op := doc.Paths.Find(c.template).GetOperation(c.method)
		resp := op.Responses.Value("404")
		if resp == nil || resp.Value == nil || resp.Value.Description == nil || !strings.Contains(*resp.Value.Description, "budget_id") {
			t.Errorf("%s %s: the document lists no 404 for a budget_id naming no budget", c.method, c.template)
		}
	}
}
