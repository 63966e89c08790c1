package server

import (
	"context"
	"net/http"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// WRONG: POST /key/delete promises "all or none are found" but resolves the keys first and
// then revokes them one transaction each. When one of them is revoked by someone else in
// between (a concurrent /key/delete or DELETE /api/v1/keys/{id}), the first revocation has
// already happened and the request answers 404 — the caller is told the delete failed
// while a key it named is gone (and retries a delete for keys that no longer exist, 404
// again). Fix: revoke all ids in one store transaction (all or nothing), or treat a key
// revoked meanwhile as deleted (it is: the goal is reached) and answer 200.
func TestReview17bDeletePartialFailure(t *testing.T) {
	d := &updateHookDriver{Driver: newTestDriver(t)}
	st := store.New(d)
	_, s := keysServer(t, st, 0)
	a := litellmGenerate(t, s, `{"key_alias":"a"}`)
	b := litellmGenerate(t, s, `{"key_alias":"b"}`)
	first, second := a, b
	if b.Token < a.Token {
		first, second = b, a
	}
	owner := "key_" + hashPrefix(testKey)
	d.mu.Lock()
	d.before = func() { // just before the first revocation: someone else deletes the second
		if err := s.revokeKey(context.Background(), owner, second.Token); err != nil {
			t.Error(err)
		}
	}
	d.mu.Unlock()
	r := do(t, s, "POST", "/key/delete", testKey, `{"keys":["`+first.Token+`","`+second.Token+`"]}`)
	gone := do(t, s, "GET", "/key/info?key="+first.Token, testKey, "").status == http.StatusNotFound
	if r.status != http.StatusOK && gone {
		t.Fatalf("/key/delete answered %d %s, yet %s was deleted", r.status, r.raw, first.Token)
	}
}
