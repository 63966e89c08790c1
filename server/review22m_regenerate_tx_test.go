package server

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// errRotationWrite is the store failure failRotationDriver injects.
var errRotationWrite = errors.New("injected: the store refused the rotation's write")

// failRotationDriver fails, while armed, every deletion of a shared-key record: the write
// by which a rotation retires the old key (an update alone never deletes one).
type failRotationDriver struct {
	store.Driver
	armed atomic.Bool
}

func (d *failRotationDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return d.Driver.Update(ctx, func(tx store.Tx) error { return fn(failRotationTx{tx, d}) })
}

type failRotationTx struct {
	store.Tx
	d *failRotationDriver
}

func (tx failRotationTx) Delete(ctx context.Context, c store.Collection, key string) error {
	if c == store.ScopedKeys && tx.d.armed.Load() {
		return errRotationWrite
	}
	return tx.Tx.Delete(ctx, c, key)
}

// TestReview22mRegenerateAllOrNothing: LiteLLM's regenerate with fields in its body changed
// the key in one transaction and rotated it in another, so a rotation that failed after the
// change (a store error, the key deleted in between) left the fields changed with no new
// key. Both are now one transaction: when the rotation's write fails, the key keeps its
// fields and its key, on both routes.
func TestReview22mRegenerateAllOrNothing(t *testing.T) {
	d := &failRotationDriver{Driver: newTestDriver(t)}
	hs, s := keysServer(t, store.New(d), 0)
	g := litellmGenerate(t, s, `{"key_alias":"bot","max_budget":25,"rpm_limit":5}`)
	d.armed.Store(true)
	for _, req := range []struct{ path, body string }{
		{"/key/" + g.Token + "/regenerate", `{"key_alias":"bot-2","max_budget":30,"rpm_limit":7}`},
		{"/key/regenerate", `{"key":"` + g.Token + `","key_alias":"bot-2","max_budget":30,"rpm_limit":7}`},
	} {
		r := do(t, s, "POST", req.path, testKey, req.body)
		if r.status != http.StatusInternalServerError {
			t.Errorf("POST %s with the rotation failing: %d %s", req.path, r.status, r.raw)
		}
		info := keyInfoViaLiteLLM(t, s, testKey, g.Token)
		if info.KeyAlias != "bot" || info.MaxBudget == nil || *info.MaxBudget != 25 || info.RPMLimit == nil || *info.RPMLimit != 5 {
			t.Errorf("after POST %s failed: the fields changed without a new key: %+v", req.path, info)
		}
		if st, b := chatStatus(t, hs.URL, g.Key, "openai/ok"); st != http.StatusOK {
			t.Errorf("after POST %s failed, the old key: %d %s", req.path, st, b)
		}
	}
	d.armed.Store(false)
	r := do(t, s, "POST", "/key/"+g.Token+"/regenerate", testKey, `{"key_alias":"bot-2","max_budget":30}`)
	if r.status != http.StatusOK || r.body["key_alias"] != "bot-2" || r.body["max_budget"] != 30.0 || r.body["key"] == g.Key {
		t.Fatalf("regenerate once the store works: %d %s", r.status, r.raw)
	}
	if st, _ := chatStatus(t, hs.URL, g.Key, "openai/ok"); st != http.StatusUnauthorized {
		t.Errorf("the old key after the regenerate: %d", st)
	}
	if st, b := chatStatus(t, hs.URL, r.body["key"].(string), "openai/ok"); st != http.StatusOK {
		t.Errorf("the new key: %d %s", st, b)
	}
}
