package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/pgstore"
	"github.com/switchyard-ai/switchyard/store/storetest"
)

// TestCommitCutMidCommitIsResolvedOnce: a charge (an increment of a budget record) whose
// connection a real TCP proxy cuts mid-commit, the server's side left open as a network
// partition leaves it. When the COMMIT reached the server, CommitStatus says it committed
// and the charge is not applied again. When it did not, the server held the session open,
// idle in the transaction (and, under UpdateLocked, the record's advisory lock, so every
// other writer of the account waited too), and txid_status said "in progress" until the
// server's TCP keepalive gave up on the client, two hours by default: the charge waited
// that long to be told. The driver now ends that session (pg_terminate_backend of the
// process read with the transaction's id, while still idle in that transaction), so
// CommitStatus tells "rolled back" at once and the charge is applied again; and it ends it
// by itself soon after the loss, so another writer of the record (waiting for the lock
// the session held) goes on though no one asked. Either way the record counts the charge
// once, never twice.
func TestCommitCutMidCommitIsResolvedOnce(t *testing.T) {
	addr := dsn(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	proxy, proxied := storetest.NewFakeCutProxy(t, addr)
	schema := freshSchema()
	st, err := pgstore.Open(ctx, proxied, pgstore.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	direct, err := pgstore.Open(ctx, addr, pgstore.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()

	for _, c := range []struct {
		name          string
		mode          storetest.CutMode
		locked        bool
		wantCommitted bool
	}{
		{"COMMIT reached the server, Update", storetest.ForwardCommitAndCut, false, true},
		{"COMMIT reached the server, UpdateLocked", storetest.ForwardCommitAndCut, true, true},
		{"COMMIT lost on the way, Update", storetest.SwallowCommitAndCut, false, false},
		{"COMMIT lost on the way, UpdateLocked", storetest.SwallowCommitAndCut, true, false},
		{"COMMIT lost on the way, UpdateLocked, another writer waits", storetest.SwallowCommitAndCut, true, false},
	} {
		key := strings.ReplaceAll(c.name, " ", "_")
		charge := func() error {
			fn := func(tx store.Tx) error { return increment(ctx, tx, store.Budgets, key) }
			if c.locked {
				return st.UpdateLocked(ctx, []store.Ref{{Collection: store.Budgets, Key: key}}, fn)
			}
			return st.Update(ctx, fn)
		}
		cutsBefore := proxy.Cuts()
		proxy.Arm(c.mode)
		err := charge()
		proxy.Arm(storetest.PassCommit)
		if proxy.Cuts() != cutsBefore+1 {
			t.Fatalf("%s: the proxy cut no connection at the COMMIT (charge: %v)", c.name, err)
		}
		var cu *store.CommitUnknownError
		if !errors.As(err, &cu) {
			t.Fatalf("%s: the charge's error %v, want a *store.CommitUnknownError", c.name, err)
		}
		if strings.HasSuffix(c.name, "another writer waits") {
			// Another replica's writer of the record, before anyone asks about the lost
			// transaction: it waited for the record's lock, which the lost session held
			// until the server's keepalive; the driver ends that session by itself.
			wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
			err := direct.UpdateLocked(wctx, []store.Ref{{Collection: store.Budgets, Key: key}}, func(tx store.Tx) error {
				_, err := tx.Get(wctx, store.Budgets, key)
				if errors.Is(err, store.ErrNotFound) {
					return nil
				}
				return err
			})
			wcancel()
			if err != nil {
				t.Fatalf("%s: another writer of the record, before anyone asked: %v (the lost session still holds its lock)", c.name, err)
			}
		}
		// Resolve it as the gateway's pending charges do: ask until told (backing off),
		// apply it again only when it did not commit.
		var committed bool
		asked := 0
		for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
			asked++
			committed, err = st.CommitStatus(ctx, cu.Token)
			if ctx.Err() != nil {
				t.Fatalf("%s: CommitStatus still cannot tell after %d questions: %v (the server holds the lost session until its keepalive)", c.name, asked, err)
			}
			if !errors.Is(err, store.ErrCommitUnknown) {
				break
			}
			time.Sleep(wait)
		}
		if err != nil {
			t.Fatalf("%s: CommitStatus: %v", c.name, err)
		}
		if committed != c.wantCommitted {
			t.Errorf("%s: CommitStatus says committed %v, want %v", c.name, committed, c.wantCommitted)
		}
		if !committed {
			if err := charge(); err != nil {
				t.Fatalf("%s: applying the rolled-back charge again: %v", c.name, err)
			}
		}
		// Asked again, the answer stands.
		if again, err := st.CommitStatus(ctx, cu.Token); err != nil || again != committed {
			t.Errorf("%s: CommitStatus asked again: %v %v, want %v", c.name, again, err, committed)
		}
		if got := readCount(t, direct, store.Budgets, key); got != 1 {
			t.Errorf("%s: the account counts the charge %d times, want once", c.name, got)
		}
	}
}
