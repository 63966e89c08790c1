package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// TestEndUserListPages: GET /api/v1/customers pages with limit and cursor (oldest first,
// next_cursor until the last page); /customer/list answers LiteLLM's array without paging
// parameters and a page of customers with page and page_size.
func TestEndUserListPages(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		_, s := keysServer(t, store.New(d), 0)
		for i := range 5 {
			if r := do(t, s, "POST", "/api/v1/customers", testKey, fmt.Sprintf(`{"end_user_id":"u%d"}`, i)); r.status != http.StatusCreated {
				t.Fatal(r.status, r.raw)
			}
		}
		var seen []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 5 {
				t.Fatalf("no last page after %v", seen)
			}
			r := do(t, s, "GET", "/api/v1/customers?limit=2&cursor="+url.QueryEscape(cursor), testKey, "")
			var page endUserList
			if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &page) != nil || len(page.Data) > 2 {
				t.Fatalf("page %d: %d %s", pages, r.status, r.raw)
			}
			for _, e := range page.Data {
				seen = append(seen, e.EndUserID)
			}
			if page.NextCursor == "" {
				break
			}
			cursor = page.NextCursor
		}
		if fmt.Sprint(seen) != "[u0 u1 u2 u3 u4]" {
			t.Fatalf("paged through %v", seen)
		}
		wantError(t, do(t, s, "GET", "/api/v1/customers?limit=0", testKey, ""), http.StatusUnprocessableEntity, KindValidation, "limit")
		wantError(t, do(t, s, "GET", "/api/v1/customers?cursor=nope", testKey, ""), http.StatusUnprocessableEntity, KindValidation, "cursor")

		r := do(t, s, "GET", "/customer/list", testKey, "")
		var all []litellmCustomer
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &all) != nil || len(all) != 5 {
			t.Fatalf("/customer/list: %d %s", r.status, r.raw)
		}
		r = do(t, s, "GET", "/customer/list?page=2&page_size=2", testKey, "")
		var paged litellmCustomerList
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &paged) != nil || len(paged.Customers) != 2 ||
			paged.Customers[0].UserID != "u2" || paged.TotalCount != 5 || paged.TotalPages != 3 || paged.CurrentPage != 2 {
			t.Fatalf("/customer/list?page=2&page_size=2: %d %s", r.status, r.raw)
		}
		wantStatusMessage(t, do(t, s, "GET", "/customer/list?page_size=0", testKey, ""), http.StatusBadRequest, "page_size")
	})
}

// TestEndUserCapPerKey: past Config.MaxEndUsersPerKey a key makes no more end users, by
// POST /api/v1/customers, /customer/new, /customer/block or a request naming a new one;
// the refusal names the field and stores nothing, and the end users it has keep working.
func TestEndUserCapPerKey(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		hs, s := keysServer(t, store.New(d), 0)
		s.cfg.MaxEndUsersPerKey = 2
		for _, id := range []string{"a", "b"} {
			if r := do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"`+id+`"}`); r.status != http.StatusCreated {
				t.Fatal(r.status, r.raw)
			}
		}
		before := countStored(t, s, store.EndUsers)
		budgets := countStored(t, s, store.Budgets)
		wantStatusMessage(t, do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"c"}`), http.StatusBadRequest, "end_user_id: this key has 2 end users")
		wantStatusMessage(t, do(t, s, "POST", "/customer/new", testKey, `{"user_id":"c"}`), http.StatusBadRequest, "user_id: this key has 2 end users")
		wantStatusMessage(t, do(t, s, "POST", "/customer/block", testKey, `{"user_ids":["a","c"]}`), http.StatusBadRequest, "user_ids: this key has 2 end users")
		body := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}],"user":"c"}`
		if st, b := postWith(t, hs.URL+"/v1/chat/completions", testKey, body, nil); st != http.StatusBadRequest || !strings.Contains(b, "user: this key has 2 end users") {
			t.Fatalf("a request naming a third end user: %d %s", st, b)
		}
		if st, b := postWith(t, hs.URL+"/v1/chat/completions", testKey, body, map[string]string{"X-Litellm-End-User-Id": "d"}); st != http.StatusBadRequest {
			t.Fatalf("a header naming a third end user: %d %s", st, b)
		}
		if n, m := countStored(t, s, store.EndUsers), countStored(t, s, store.Budgets); n != before || m != budgets {
			t.Fatalf("refusals stored %d end users and %d accounts", n-before, m-budgets)
		}
		if customerInfo(t, s, "a").Blocked {
			t.Fatal("the refused block blocked a")
		}
		body = `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}],"user":"a"}`
		if st, b := postWith(t, hs.URL+"/v1/chat/completions", testKey, body, nil); st != http.StatusOK {
			t.Fatalf("an end user the key has: %d %s", st, b)
		}
		if r := do(t, s, "POST", "/customer/delete", testKey, `{"user_ids":["b"]}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"c"}`); r.status != http.StatusOK {
			t.Fatalf("after a delete: %d %s", r.status, r.raw)
		}
	})
}
