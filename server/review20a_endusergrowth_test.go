package server

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// countStored is how many records collection c holds.
func countStored(t *testing.T, s *Server, c store.Collection) int {
	t.Helper()
	es, err := s.cfg.Store.List(context.Background(), c, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// TestReview20aRefusedRequestsMakeNoEndUsers: an end user is made by a request the gateway
// takes on, not by one it refuses. A blocked virtual key, a spent one and one naming a
// model it may not call (or no model there is) are refused before any model is called and
// cost nothing; were their requests to make the end users they name, a low-privilege key
// (one that may not even manage end users) could fill the store with end users at no
// cost, one per request with a fresh user string. Answered requests still make theirs.
func TestReview20aRefusedRequestsMakeNoEndUsers(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	blocked := litellmGenerate(t, s, `{"blocked":true}`)
	spent := litellmGenerate(t, s, `{"max_budget":0.001}`)
	limited := litellmGenerate(t, s, `{"models":["openai/ok"]}`)
	if st, b := chatStatus(t, hs.URL, spent.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("spending the key's budget: %d %s", st, b)
	}
	before := countStored(t, s, store.EndUsers)
	budgets := countStored(t, s, store.Budgets)
	for i, c := range []struct {
		key, model string
		want       int
	}{
		{blocked.Key, "openai/ok", http.StatusUnauthorized},
		{spent.Key, "openai/ok", http.StatusTooManyRequests},
		{limited.Key, "openai/other", http.StatusUnauthorized},
		{limited.Key, "nope/none", http.StatusBadRequest},
	} {
		for j := range 3 {
			body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hi"}],"user":"u-%d-%d"}`, c.model, i, j)
			if st, b := postWith(t, hs.URL+"/v1/chat/completions", c.key, body, nil); st/100 == 2 || (c.want != 0 && st != c.want) {
				t.Fatalf("refused request %d: %d %s, want %d", i, st, b, c.want)
			}
			st, b := postWith(t, hs.URL+"/v1/embeddings", c.key, fmt.Sprintf(`{"model":%q,"input":"hi"}`, c.model), map[string]string{"X-Litellm-End-User-Id": fmt.Sprintf("h-%d-%d", i, j)})
			if st/100 == 2 {
				t.Fatalf("refused embeddings %d: %d %s", i, st, b)
			}
		}
	}
	if n := countStored(t, s, store.EndUsers); n != before {
		t.Errorf("refused requests made %d end users", n-before)
	}
	if n := countStored(t, s, store.Budgets); n != budgets {
		t.Errorf("refused requests made %d accounts", n-budgets)
	}
	// An answered request still makes its end user, with its spend.
	body := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}],"user":"paid"}`
	if st, b := postWith(t, hs.URL+"/v1/chat/completions", limited.Key, body, nil); st != http.StatusOK {
		t.Fatalf("answered request: %d %s", st, b)
	}
	if c := customerInfo(t, s, "paid"); c.Spend <= 0 {
		t.Fatalf("the answered request's end user: %+v", c)
	}
	r := do(t, s, "GET", "/api/v1/customers/paid", testKey, "")
	if r.status != http.StatusOK || r.body["created_by_request"] != true {
		t.Fatalf("GET /api/v1/customers/paid: %d %s", r.status, r.raw)
	}
}
