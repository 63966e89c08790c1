package server

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// endUserReadsDriver counts the Gets of end users' records (store.EndUsers) outside
// transactions: the reads of a request's end user rate.
type endUserReadsDriver struct {
	store.Driver
	gets atomic.Int64
}

func (d *endUserReadsDriver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	if c == store.EndUsers {
		d.gets.Add(1)
	}
	return d.Driver.Get(ctx, c, key)
}

// TestEndUserRateReadOnceAndForgottenOnChange: the requests naming an end user read its
// record (for its requests_per_minute) once, not once each, and a change of the end user
// — /customer/update, /budget/update of the budget it names, a delete and a new one of
// the same id — is in force at the very next request.
func TestEndUserRateReadOnceAndForgottenOnChange(t *testing.T) {
	d := &endUserReadsDriver{Driver: newTestDriver(t)}
	_, s := keysServerWith(t, store.New(d), &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey}})
	chat := func(user string) int {
		t.Helper()
		return do(t, s, "POST", "/v1/chat/completions", testKey, `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}],"user":"`+user+`"}`).status
	}
	if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"dan","rpm_limit":1000}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	before := d.gets.Load()
	for i := range 5 {
		if st := chat("dan"); st != http.StatusOK {
			t.Fatalf("dan's request %d: %d", i+1, st)
		}
	}
	// The account's read is another collection's; the end user's record, read once.
	if n := d.gets.Load() - before; n != 1 {
		t.Fatalf("5 requests naming dan read his record %d times; want 1", n)
	}

	// /customer/update: the rate applies at once (the bucket holds one request of 1).
	if r := do(t, s, "POST", "/customer/update", testKey, `{"user_id":"dan","rpm_limit":1}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if st := chat("dan"); st != http.StatusOK {
		t.Fatalf("dan's first request at rpm_limit 1: %d", st)
	}
	if st := chat("dan"); st != http.StatusTooManyRequests {
		t.Fatalf("dan's second request at rpm_limit 1, right after /customer/update: %d, want 429", st)
	}

	// /budget/update of the budget an end user names rewrites its rpm_limit.
	if r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"b1","rpm_limit":1000}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"eve","budget_id":"b1"}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if st := chat("eve"); st != http.StatusOK {
		t.Fatalf("eve's request: %d", st)
	}
	if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"b1","rpm_limit":1}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if st1, st2 := chat("eve"), chat("eve"); st1 != http.StatusOK || st2 != http.StatusTooManyRequests {
		t.Fatalf("eve's requests right after /budget/update to rpm_limit 1: %d, %d; want 200, 429", st1, st2)
	}

	// A first request makes fay with no bound; made again after a delete, with one.
	if st := chat("fay"); st != http.StatusOK {
		t.Fatalf("fay's first request: %d", st)
	}
	if r := do(t, s, "POST", "/customer/delete", testKey, `{"user_ids":["fay"]}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"fay","rpm_limit":1}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if st1, st2 := chat("fay"), chat("fay"); st1 != http.StatusOK || st2 != http.StatusTooManyRequests {
		t.Fatalf("fay's requests once made again with rpm_limit 1: %d, %d; want 200, 429", st1, st2)
	}
}

// TestEndUserRateChangeReachesReplicas: an end user's requests_per_minute changed on one
// replica is in force on another that read it before as soon as both Sync their shared
// counters (as their counts of each other's requests are), not only once its TTL passes.
func TestEndUserRateChangeReachesReplicas(t *testing.T) {
	st := newTestStore(t)
	ctx := context.Background()
	ca, cb := store.NewCounters(st, "limits"), store.NewCounters(st, "limits")
	_, a := keysServerWith(t, st, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey}, SharedLimits: ca})
	_, b := keysServerWith(t, st, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey}, SharedLimits: cb})
	sync := func() {
		t.Helper()
		for _, c := range []*store.Counters{ca, cb} {
			if err := c.Sync(ctx, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	sync() // each learns where the other stands
	chat := func(s *Server) reply {
		t.Helper()
		return do(t, s, "POST", "/v1/chat/completions", testKey, `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}],"user":"dora"}`)
	}
	if r := do(t, a, "POST", "/customer/new", testKey, `{"user_id":"dora","rpm_limit":1000}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if r := chat(b); r.status != http.StatusOK { // b reads dora's 1000
		t.Fatalf("dora on b: %d %s", r.status, r.raw)
	}
	if r := do(t, a, "POST", "/customer/update", testKey, `{"user_id":"dora","rpm_limit":1}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	sync()
	r1, r2 := chat(b), chat(b)
	if r1.status != http.StatusOK || r2.status != http.StatusTooManyRequests || !strings.Contains(r2.raw, "Current limit: 1,") {
		t.Fatalf("dora's requests on b after the update on a and a Sync: %d, %d %s; want 200, then a 429 at the limit of 1", r1.status, r2.status, r2.raw)
	}
}
