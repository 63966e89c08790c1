package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// storedEndUserCount is owner's count record (-1: none stored).
func storedEndUserCount(t *testing.T, s *Server, owner string) int {
	t.Helper()
	c, err := store.GetJSON[endUserTally](context.Background(), s.cfg.Store, store.EndUserCounts, owner)
	if err != nil {
		return -1
	}
	return c.Count
}

// listedEndUsers is how many end user records owner has.
func listedEndUsers(t *testing.T, s *Server, owner string) int {
	t.Helper()
	es, err := s.cfg.Store.List(context.Background(), store.EndUsers, store.ListOptions{Prefix: owner + "/"})
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// TestNewEndUserReadsSameRecordsWhateverTheKeyHas: making a new end user (POST
// /api/v1/customers, /customer/block of an unknown id, the first chat completion naming
// it) reads as many store records with 500 end users as with 5,000 — the count record, not
// a listing of them — and only a handful. The first new end user after an upgrade counts
// the earlier build's end users once.
func TestNewEndUserReadsSameRecordsWhateverTheKeyHas(t *testing.T) {
	reads := func(n int) []int64 {
		d := &readCountingDriver{Driver: newTestDriver(t)}
		hs, s := keysServer(t, store.New(d), 0)
		if r := do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"first"}`); r.status != http.StatusCreated {
			t.Fatal(r.status, r.raw)
		}
		owner := seedEndUsers(t, s, n-1)
		d.reset()
		if r := do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"upgrade"}`); r.status != http.StatusCreated {
			t.Fatal(r.status, r.raw)
		}
		if d.entries.Load() < int64(n) {
			t.Fatalf("the first new end user after the upgrade listed %d records, want the key's %d counted", d.entries.Load(), n)
		}
		var out []int64
		steps := []func(){
			func() {
				if r := do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"created"}`); r.status != http.StatusCreated {
					t.Fatal(r.status, r.raw)
				}
			},
			func() {
				if r := do(t, s, "POST", "/customer/block", testKey, `{"user_ids":["blocked"]}`); r.status != http.StatusOK {
					t.Fatal(r.status, r.raw)
				}
			},
			func() {
				body := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}],"user":"chatted"}`
				if st, b := postWith(t, hs.URL+"/v1/chat/completions", testKey, body, nil); st != http.StatusOK {
					t.Fatal(st, b)
				}
			},
		}
		for _, step := range steps {
			d.reset()
			step()
			out = append(out, d.records())
		}
		if got := storedEndUserCount(t, s, owner); got != n+4 || listedEndUsers(t, s, owner) != n+4 {
			t.Fatalf("count %d, %d end users stored, want %d", got, listedEndUsers(t, s, owner), n+4)
		}
		return out
	}
	small, big := reads(500), reads(5000)
	for i, what := range []string{"POST /api/v1/customers", "/customer/block", "a chat completion naming it"} {
		if small[i] != big[i] || big[i] > 50 {
			t.Errorf("%s: a new end user read %d records with 500 end users, %d with 5,000; want the same handful", what, small[i], big[i])
		}
	}
}

// TestEndUserCountOfAnEarlierBuild: a key whose end users an earlier build stored (no
// count record; more than a listing page) is counted right: the bound refuses exactly at
// the limit, and the refusal says how many it has when the bound is below that.
func TestEndUserCountOfAnEarlierBuild(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		_, s := keysServer(t, store.New(d), 0)
		if r := do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"first"}`); r.status != http.StatusCreated {
			t.Fatal(r.status, r.raw)
		}
		if storedEndUserCount(t, s, endUsersOwner(t, s)) != 1 {
			t.Fatal("no count stored by a creation")
		}
		owner := seedEndUsers(t, s, 2*endUserCountPage+499) // 2,500 with first
		s.cfg.MaxEndUsersPerKey = 100
		wantStatusMessage(t, do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"over"}`), http.StatusBadRequest, "this key has 2500 end users")
		if storedEndUserCount(t, s, owner) != -1 {
			t.Fatal("a refused creation stored a count")
		}
		s.cfg.MaxEndUsersPerKey = 2501
		if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"last"}`); r.status != http.StatusOK {
			t.Fatalf("the last end user allowed: %d %s", r.status, r.raw)
		}
		if got := storedEndUserCount(t, s, owner); got != 2501 {
			t.Fatalf("count %d after the first new end user, want 2501", got)
		}
		wantStatusMessage(t, do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"one-more"}`), http.StatusBadRequest, "this key has 2501 end users")
		wantStatusMessage(t, do(t, s, "POST", "/customer/block", testKey, `{"user_ids":["one-more","one-more"]}`), http.StatusBadRequest, "this key has 2501 end users")
	})
}

// TestEndUserDeletesMakeRoom: deleting end users (POST /customer/delete, DELETE
// /api/v1/customers/{id}) takes them off the key's count, an id given twice once, so as
// many new ones can be made and no more; the count stays the number of end users stored.
// A block naming a new id twice makes it once and counts it once.
func TestEndUserDeletesMakeRoom(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		_, s := keysServer(t, store.New(d), 0)
		s.cfg.MaxEndUsersPerKey = 4
		for _, id := range []string{"a", "b", "c"} {
			if r := do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"`+id+`"}`); r.status != http.StatusCreated {
				t.Fatal(r.status, r.raw)
			}
		}
		if r := do(t, s, "POST", "/customer/block", testKey, `{"user_ids":["d","d"]}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		owner := endUsersOwner(t, s)
		wantCount := func(n int) {
			t.Helper()
			if got, listed := storedEndUserCount(t, s, owner), listedEndUsers(t, s, owner); got != n || listed != n {
				t.Fatalf("count %d, %d stored, want %d", got, listed, n)
			}
		}
		wantCount(4)
		wantStatusMessage(t, do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"e"}`), http.StatusBadRequest, "this key has 4 end users")
		if r := do(t, s, "POST", "/customer/delete", testKey, `{"user_ids":["a","b","a"]}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		wantCount(2)
		if r := do(t, s, "DELETE", "/api/v1/customers/c", testKey, ""); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		wantCount(1)
		if r := do(t, s, "POST", "/customer/delete", testKey, `{"user_ids":["d","nope"]}`); r.status != http.StatusNotFound {
			t.Fatalf("a delete naming a missing id: %d %s", r.status, r.raw)
		}
		wantCount(1)
		for _, id := range []string{"e", "f", "g"} {
			if r := do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"`+id+`"}`); r.status != http.StatusCreated {
				t.Fatalf("%s after the deletes: %d %s", id, r.status, r.raw)
			}
		}
		wantCount(4)
		wantStatusMessage(t, do(t, s, "POST", "/customer/new", testKey, `{"user_id":"h"}`), http.StatusBadRequest, "this key has 4 end users")
	})
}

// TestEndUserCapHoldsUnderConcurrentCreation: twenty creations at once of a key allowed
// five more end users make exactly five: the count is read and written in each
// creation's transaction. On every backend, through two servers taking the creations in
// turn (on PostgreSQL two replicas, each with its own connection pool); the count stays
// the number of end users stored.
func TestEndUserCapHoldsUnderConcurrentCreation(t *testing.T) {
	for _, b := range drivertest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			d := b.Open(t)
			st := store.New(d)
			_, s := keysServer(t, st, 0)
			_, s2 := keysServer(t, store.New(b.Replica(t, d)), 0) // a second replica (on PostgreSQL, its own pool)
			servers := []*Server{s, s2}
			for _, s := range servers {
				s.cfg.MaxEndUsersPerKey = 6
			}
			if r := do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"first"}`); r.status != http.StatusCreated {
				t.Fatal(r.status, r.raw)
			}
			owner := endUsersOwner(t, s)
			var wg sync.WaitGroup
			var mu sync.Mutex
			statuses := map[int]int{}
			var other []string
			for i := range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req := httptest.NewRequest("POST", "/api/v1/customers", strings.NewReader(fmt.Sprintf(`{"end_user_id":"c%d"}`, i)))
					req.Header.Set("Authorization", "Bearer "+testKey)
					rec := httptest.NewRecorder()
					servers[i%len(servers)].ServeHTTP(rec, req)
					mu.Lock()
					statuses[rec.Code]++
					if rec.Code != http.StatusCreated && rec.Code != http.StatusBadRequest {
						other = append(other, rec.Body.String())
					}
					mu.Unlock()
				}()
			}
			wg.Wait()
			if statuses[http.StatusCreated] != 5 || statuses[http.StatusBadRequest] != 15 {
				t.Fatalf("statuses %v, want 5 created and 15 refused; other answers: %v", statuses, other)
			}
			if got, listed := storedEndUserCount(t, s, owner), listedEndUsers(t, s, owner); got != 6 || listed != 6 {
				t.Fatalf("count %d, %d stored, want 6", got, listed)
			}
		})
	}
}
