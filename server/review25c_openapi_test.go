package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestReview25cBudgetAnswersMatchOpenAPI: each budget route's 200 answer (and a customer's
// with a budget_id) validates against the schema the OpenAPI document gives it; a budget
// answers model_max_budget null, which the document must allow.
func TestReview25cBudgetAnswersMatchOpenAPI(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	doc := loadOpenAPI(t, s)
	for _, c := range []struct{ method, template, url, body string }{
		{"POST", "/budget/new", "/budget/new", `{"budget_id":"b1","max_budget":5,"budget_duration":"30d","tpm_limit":10}`},
		{"POST", "/budget/new", "/budget/new", `{"budget_id":"b2"}`},
		{"POST", "/budget/update", "/budget/update", `{"budget_id":"b1","soft_budget":1}`},
		{"POST", "/budget/info", "/budget/info", `{"budgets":["b1","b2"]}`},
		{"GET", "/budget/list", "/budget/list", ``},
		{"GET", "/budget/settings", "/budget/settings?budget_id=b1", ``},
		{"POST", "/customer/new", "/customer/new", `{"user_id":"c1","budget_id":"b1"}`},
		{"GET", "/customer/info", "/customer/info?end_user_id=c1", ``},
		{"POST", "/budget/delete", "/budget/delete", `{"id":"b2"}`},
	} {
		req, err := http.NewRequest(c.method, hs.URL+c.url, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+testKey)
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d %s", c.method, c.url, resp.StatusCode, body)
		}
		item := doc.Paths.Find(c.template)
		if item == nil || item.GetOperation(c.method) == nil {
			t.Fatalf("%s %s is not documented", c.method, c.template)
		}
		if err := validateAnswer(doc, req, c.template, resp.StatusCode, resp.Header, body); err != nil {
			t.Errorf("%s %s: the 200 answer does not match the document: %v\n%.400s", c.method, c.url, err, body)
		}
	}
}
