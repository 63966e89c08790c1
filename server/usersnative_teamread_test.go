package server

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// errTeamRead is the store failure failTeamReadDriver injects.
var errTeamRead = errors.New("injected: the store failed reading a team")

// failTeamReadDriver fails, while armed, every read of a team inside a transaction.
type failTeamReadDriver struct {
	store.Driver
	armed atomic.Bool
}

func (d *failTeamReadDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return d.Driver.Update(ctx, func(tx store.Tx) error { return fn(failTeamReadTx{tx, d}) })
}

type failTeamReadTx struct {
	store.Tx
	d *failTeamReadDriver
}

func (tx failTeamReadTx) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	if c == store.Teams && tx.d.armed.Load() {
		return nil, errTeamRead
	}
	return tx.Tx.Get(ctx, c, key)
}

// TestNativeUserCreateTeamReadFailure: POST /api/v1/users with teams answers 404 naming
// teams only for a team the key does not have; a store failure reading the team is a 500
// (not a 404 telling the caller its team does not exist), and no user is made.
func TestNativeUserCreateTeamReadFailure(t *testing.T) {
	d := &failTeamReadDriver{Driver: newTestDriver(t)}
	_, s := keysServer(t, store.New(d), 0)
	nativeUserDo(t, s, "POST", "/api/v1/teams", `{"team_id":"eng"}`, http.StatusCreated, nil)
	wantFieldError(t, do(t, s, "POST", "/api/v1/users", testKey, `{"user_id":"ann","teams":["nope"]}`), http.StatusNotFound, "teams")
	d.armed.Store(true)
	if r := do(t, s, "POST", "/api/v1/users", testKey, `{"user_id":"ann","teams":["eng"]}`); r.status != http.StatusInternalServerError {
		t.Fatalf("a store failure reading the team: %d %s", r.status, r.raw)
	}
	d.armed.Store(false)
	nativeUserDo(t, s, "GET", "/api/v1/users/ann", "", http.StatusNotFound, nil)
	var u nativeUser
	nativeUserDo(t, s, "POST", "/api/v1/users", `{"user_id":"ann","teams":["eng"]}`, http.StatusCreated, &u)
	if len(u.Teams) != 1 || u.Teams[0] != "eng" {
		t.Fatalf("once the store works: %+v", u)
	}
}
