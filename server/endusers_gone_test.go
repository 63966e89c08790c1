package server

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// afterGetDriver runs a function once, right after the next Get outside a transaction
// whose collection and key match: another writer between a request's first read of a
// record and the transaction that acts on it.
type afterGetDriver struct {
	store.Driver
	mu    sync.Mutex
	match func(c store.Collection, key string) bool
	then  func()
}

// arm makes then run after the next Get that match accepts.
func (d *afterGetDriver) arm(match func(c store.Collection, key string) bool, then func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.match, d.then = match, then
}

// Get implements store.Driver.
func (d *afterGetDriver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	v, err := d.Driver.Get(ctx, c, key)
	d.mu.Lock()
	var then func()
	if d.match != nil && d.match(c, key) {
		then = d.then
		d.match, d.then = nil, nil
	}
	d.mu.Unlock()
	if then != nil {
		then()
	}
	return v, err
}

// TestEndUserDeletedInFlight: an end user deleted after a request naming it loaded its
// account and before the request's call was reserved is answered as an end user that does
// not exist (404, LiteLLM's words), not as a revoked key; through a virtual key (whose
// account is on the same store) and through the operator's own key alike.
func TestEndUserDeletedInFlight(t *testing.T) {
	d := &afterGetDriver{Driver: memstore.NewDriver()}
	hs, s := keysServer(t, store.New(d), 0)
	k := litellmGenerate(t, s, `{}`)
	for _, key := range []string{k.Key, testKey} {
		if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"alice"}`); r.status != http.StatusOK {
			t.Fatalf("/customer/new: %d %s", r.status, r.raw)
		}
		d.arm(func(c store.Collection, id string) bool {
			return c == store.Budgets && strings.HasPrefix(id, "enduser/") && strings.HasSuffix(id, "/alice")
		}, func() {
			if r := do(t, s, "POST", "/customer/delete", testKey, `{"user_ids":["alice"]}`); r.status != http.StatusOK {
				t.Errorf("/customer/delete: %d %s", r.status, r.raw)
			}
		})
		st, b := postWith(t, hs.URL+"/v1/chat/completions", key, `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}],"user":"alice"}`, nil)
		if st != http.StatusNotFound || !strings.Contains(b, "End User Id=alice does not exist in db") || strings.Contains(b, "revoked") {
			t.Fatalf("alice deleted in flight: %d %s", st, b)
		}
	}
	// The key itself still works.
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
		t.Fatal(st, b)
	}
}
