package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/pgstore"
	"github.com/switchyard-ai/switchyard/store/storetest"
)

// TestLostSessionEndedWhileThePoolWaitsForIt: a charge under UpdateLocked whose COMMIT is
// lost on the way leaves its session holding the record's lock; the replica's next writers
// of that record (a budget account every request charges) then hold every connection of
// its pool, each waiting for that lock. The driver's own ending of the lost session must
// not need one of those connections (it would wait for a writer that waits for it, until
// its tries run out, and the writers until the server's keepalive): it ends the session on
// a connection of its own, and the writers go on.
func TestLostSessionEndedWhileThePoolWaitsForIt(t *testing.T) {
	addr := dsn(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	proxy, proxied := storetest.NewFakeCutProxy(t, addr)
	st, err := pgstore.Open(ctx, proxied, pgstore.Options{Schema: freshSchema(), MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const key = "hot-account"
	ref := []store.Ref{{Collection: store.Budgets, Key: key}}
	charge := func(ctx context.Context) error {
		return st.UpdateLocked(ctx, ref, func(tx store.Tx) error { return increment(ctx, tx, store.Budgets, key) })
	}
	proxy.Arm(storetest.SwallowCommitAndCut)
	err = charge(ctx)
	proxy.Arm(storetest.PassCommit)
	if cu := (*store.CommitUnknownError)(nil); !errors.As(err, &cu) {
		t.Fatalf("the cut charge's error %v, want a *store.CommitUnknownError", err)
	}
	// The pool's one connection now waits for the lock the lost session holds.
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if err := charge(wctx); err != nil {
		t.Fatalf("the next charge, the pool's only connection waiting for the lost session's lock: %v (the lost session was never ended)", err)
	}
	if got := readCount(t, st, store.Budgets, key); got != 1 {
		t.Errorf("the account counts %d charges, want 1 (the lost one rolled back)", got)
	}
}
