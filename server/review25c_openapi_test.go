package server

import (
	"testing"
)

// TestReview25cBudgetAnswersMatchOpenAPI: each budget route's 200 answer (and a customer's
// with a budget_id) validates against the schema the OpenAPI document gives it; a budget
// answers model_max_budget null, which the document must allow.
func TestReview25cBudgetAnswersMatchOpenAPI(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	doc := loadOpenAPI(t, s)
	checkContract(t, hs, doc, []contractCase{
		{"POST", "/budget/new", "/budget/new", `{"budget_id":"b1","max_budget":5,"budget_duration":"30d","tpm_limit":10}`, 200},
		{"POST", "/budget/new", "/budget/new", `{"budget_id":"b2"}`, 200},
		{"POST", "/budget/update", "/budget/update", `{"budget_id":"b1","soft_budget":1}`, 200},
		{"POST", "/budget/info", "/budget/info", `{"budgets":["b1","b2"]}`, 200},
		{"GET", "/budget/list", "/budget/list", ``, 200},
		{"GET", "/budget/settings", "/budget/settings?budget_id=b1", ``, 200},
		{"POST", "/customer/new", "/customer/new", `{"user_id":"c1","budget_id":"b1"}`, 200},
		{"GET", "/customer/info", "/customer/info?end_user_id=c1", ``, 200},
		{"POST", "/budget/delete", "/budget/delete", `{"id":"b2"}`, 200},
	})
}
