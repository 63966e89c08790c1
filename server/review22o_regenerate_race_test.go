package server

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// gatedUpdateDriver holds, while armed, its first n transactions until all n have begun:
// n concurrent requests have then all made every read they make before their transaction,
// the interleaving in which a check made outside the transaction is stale.
type gatedUpdateDriver struct {
	store.Driver
	armed   atomic.Bool
	n       int32
	arrived atomic.Int32
	open    chan struct{}
}

func (d *gatedUpdateDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	if d.armed.Load() {
		switch k := d.arrived.Add(1); {
		case k == d.n:
			close(d.open)
		case k < d.n:
			select {
			case <-d.open:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return d.Driver.Update(ctx, fn)
}

// TestReview22oConcurrentRegenerateOneWins: LiteLLM's regenerate matched the old key (its
// value or hash) outside the transaction that wrote the new key, so concurrent
// regenerations naming one old key all succeeded, each retiring the key the one before
// had just made: callers were handed keys that no longer worked. The rotation now checks,
// in its transaction, that the key named is still the current one: exactly one request
// gets a new key, which works, and every other one gets what regenerating a key already
// rotated away gets (404), on both routes, with or without fields to change.
func TestReview22oConcurrentRegenerateOneWins(t *testing.T) {
	const n = 12
	d := &gatedUpdateDriver{Driver: newTestDriver(t), n: n, open: make(chan struct{})}
	hs, s := keysServer(t, store.New(d), 0)
	g := litellmGenerate(t, s, `{"key_alias":"bot","max_budget":25}`)
	reqs := [...]struct{ path, body string }{
		{"/key/regenerate", `{"key":"` + g.Key + `"}`},
		{"/key/" + g.Key + "/regenerate", ``},
		{"/key/" + g.Key + "/regenerate", `{"max_budget":30}`},
		{"/key/" + g.Token + "/regenerate", `{"key":"` + g.Key + `"}`}, // the token in the path, the key in the body
	}
	d.armed.Store(true)
	replies := atOnce(n, func(i int) reply {
		req := reqs[i%len(reqs)]
		return do(t, s, "POST", req.path, testKey, req.body)
	})
	d.armed.Store(false)

	// What each request is answered once the key it names was rotated away: a 404, or
	// with the token in the path, the 400 of a body naming another key (TestReview22jRegeneratePathWithKeyInBody).
	var refusals [len(reqs)]reply
	for i, req := range reqs {
		refusals[i] = do(t, s, "POST", req.path, testKey, req.body)
		if want := map[bool]int{true: http.StatusBadRequest, false: http.StatusNotFound}[i == 3]; refusals[i].status != want {
			t.Fatalf("%s %s afterwards: %d %s, want %d", req.path, req.body, refusals[i].status, refusals[i].raw, want)
		}
	}
	var newKeys []string
	for i, r := range replies {
		req, refusal := reqs[i%len(reqs)], refusals[i%len(reqs)]
		switch {
		case r.status == http.StatusOK:
			k, _ := r.body["key"].(string)
			newKeys = append(newKeys, k)
		case r.status != refusal.status || r.raw != refusal.raw:
			t.Errorf("request %d (%s %s): %d %s, want what it gets once the key was rotated away (%d %s)", i, req.path, req.body, r.status, r.raw, refusal.status, refusal.raw)
		}
	}
	if len(newKeys) != 1 {
		t.Fatalf("%d of %d concurrent regenerations of one key succeeded, want exactly 1", len(newKeys), n)
	}
	if st, b := chatStatus(t, hs.URL, newKeys[0], "openai/ok"); st != http.StatusOK {
		t.Errorf("the one new key: %d %s", st, b)
	}
	if st, _ := chatStatus(t, hs.URL, g.Key, "openai/ok"); st != http.StatusUnauthorized {
		t.Errorf("the old key: %d", st)
	}
	if info := keyInfoViaLiteLLM(t, s, testKey, newKeys[0]); info.Token != g.Token {
		t.Errorf("the new key's info: %+v", info)
	}
}

// atOnce runs call(i) for i in [0, n) in n goroutines released together, so that their
// requests race, and returns the replies in i's order.
func atOnce(n int, call func(i int) reply) []reply {
	replies := make([]reply, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			replies[i] = call(i)
		}()
	}
	start.Done()
	done.Wait()
	return replies
}
