package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/switchyard-ai/switchyard/store"
)

// wrappedDriver is a driver wrapping another, as telemetry's timing one does.
type wrappedDriver struct{ store.Driver }

func (w wrappedDriver) Unwrap() store.Driver { return w.Driver }

// TestCommitStatus: a first charge whose commit got no answer (store.ErrCommitUnknown)
// could not be applied again, its outcome unknown for ever. A transaction's first Put now
// reads its id in the same round trip, the unanswered commit's error carries it
// (*store.CommitUnknownError), and CommitStatus tells, once the database answers, whether
// it committed: a committed transaction, a rolled-back one, and one still running (not
// yet known), through a Store and a wrapping driver too.
func TestCommitStatus(t *testing.T) {
	dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("SWITCHYARD_TEST_POSTGRES is not set: scripts/pg-test-cluster.sh start prints it")
	}
	ctx := context.Background()
	d, err := OpenDriver(ctx, dsn, Options{Schema: fmt.Sprintf("commitstatus_%d", os.Getpid())})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st := store.New(wrappedDriver{d})
	// begin's transactions are rolled back by the caller's defer (a no-op once committed or
	// rolled back), and by begin itself when it fails: a t.Fatal leaving one open made the
	// deferred d.Close wait for ever for its connection.
	begin := func() (pgx.Tx, *pgTx) {
		tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
		if err != nil {
			t.Fatal(err)
		}
		pt := &pgTx{tx: tx}
		for i := range 2 {
			if err := pt.Put(ctx, store.Budgets, fmt.Sprint("k", i), []byte("1")); err != nil {
				tx.Rollback(ctx)
				t.Fatal(err)
			}
		}
		if pt.xid == 0 {
			tx.Rollback(ctx)
			t.Fatal("a transaction's first Put read no transaction id")
		}
		return tx, pt
	}
	token := func(pt *pgTx) string {
		var cu *store.CommitUnknownError
		if err := commitError(io.ErrUnexpectedEOF, pt.xid); !errors.As(err, &cu) || !errors.Is(err, store.ErrCommitUnknown) {
			t.Fatalf("an unanswered commit's error %v: want a *store.CommitUnknownError matching store.ErrCommitUnknown", err)
		}
		return cu.Token
	}

	tx, pt := begin()
	defer tx.Rollback(ctx)
	running := token(pt)
	if _, err := st.CommitStatus(ctx, running); !errors.Is(err, store.ErrCommitUnknown) {
		t.Errorf("a transaction still running: %v, want an error matching store.ErrCommitUnknown", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if committed, err := st.CommitStatus(ctx, running); err != nil || !committed {
		t.Errorf("a committed transaction: %v %v, want true", committed, err)
	}

	tx, pt = begin()
	defer tx.Rollback(ctx)
	rolledBack := token(pt)
	tx.Rollback(ctx)
	if committed, err := st.CommitStatus(ctx, rolledBack); err != nil || committed {
		t.Errorf("a rolled-back transaction: %v %v, want false", committed, err)
	}
	if _, err := st.CommitStatus(ctx, "x"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a token naming no transaction: %v, want ErrInvalid", err)
	}
	// An id the database has not reached (a failover to a standby that never saw the
	// transaction) was an error the gateway asked about again, until the database's ids
	// passed it and it named another transaction: the database will never tell it.
	future := strconv.FormatInt(pt.xid+1_000_000, 10)
	if _, err := st.CommitStatus(ctx, future); !errors.Is(err, store.ErrInvalid) || errors.Is(err, store.ErrCommitUnknown) {
		t.Errorf("a transaction id in the future: %v, want ErrInvalid (never told), not ErrCommitUnknown", err)
	}
	// txid_status answers NULL for an id too old to tell (here epoch 1's xid 0, which no
	// transaction has): that was ErrCommitUnknown, so the pending charge waited the
	// three-hour bound for an answer that is gone for good.
	if _, err := st.CommitStatus(ctx, strconv.FormatInt(1<<32, 10)); !errors.Is(err, store.ErrInvalid) || errors.Is(err, store.ErrCommitUnknown) {
		t.Errorf("a transaction id too old to tell: %v, want ErrInvalid (never told), not ErrCommitUnknown", err)
	}

	// A transaction that only deletes: its commit's outcome was unknown without a token,
	// its first Delete reading no id. One that deletes a row reads it; one that deletes
	// nothing writes nothing, and reads none.
	dtx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
	if err != nil {
		t.Fatal(err)
	}
	defer dtx.Rollback(ctx) // a failure below must not leave it holding a connection Close waits for
	dt := &pgTx{tx: dtx}
	if err := dt.Delete(ctx, store.Budgets, "missing"); err != nil || dt.xid != 0 {
		t.Fatalf("a Delete of no row: %v, xid %d, want none read", err, dt.xid)
	}
	if err := dt.Delete(ctx, store.Budgets, "k0"); err != nil || dt.xid == 0 {
		t.Fatalf("a transaction's first Delete of a row: %v, read no transaction id", err)
	}
	deleted := token(dt)
	if err := dtx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if committed, err := st.CommitStatus(ctx, deleted); err != nil || !committed {
		t.Errorf("a committed transaction that only deleted: %v %v, want true", committed, err)
	}

	// A commit the server answered is no unknown one; one of a transaction that wrote
	// nothing is unknown without a token.
	if err := commitError(&pgconn.PgError{Code: "40001"}, 7); errors.Is(err, store.ErrCommitUnknown) {
		t.Errorf("a serialization failure at commit: %v, want no ErrCommitUnknown", err)
	}
	var cu *store.CommitUnknownError
	if err := commitError(io.ErrUnexpectedEOF, 0); !errors.Is(err, store.ErrCommitUnknown) || errors.As(err, &cu) {
		t.Errorf("an unanswered commit of no write: %v, want ErrCommitUnknown without a token", err)
	}
}

// TestEndLostSessionOnlyItsOwn: CommitStatus ends a session only when it is the lost
// transaction's own, still in it and idle: a transaction id and a server process that do
// not go together (the process since reused by another session, or an id some other
// session runs) end nothing, and a transaction the driver did not lose is never ended.
func TestEndLostSessionOnlyItsOwn(t *testing.T) {
	dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("SWITCHYARD_TEST_POSTGRES is not set: scripts/pg-test-cluster.sh start prints it")
	}
	ctx := context.Background()
	d, err := OpenDriver(ctx, dsn, Options{Schema: fmt.Sprintf("endlost_%d", os.Getpid())})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var pts [2]*pgTx
	for i := range pts {
		tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		pts[i] = &pgTx{tx: tx}
		if err := pts[i].Put(ctx, store.Budgets, fmt.Sprint("own", i), []byte("1")); err != nil {
			t.Fatal(err)
		}
		if pts[i].xid == 0 || pts[i].pid == 0 {
			t.Fatalf("a transaction's first Put read id %d, process %d: want both", pts[i].xid, pts[i].pid)
		}
	}
	a, b := pts[0], pts[1]
	for _, mismatch := range [][2]int64{{a.xid, int64(b.pid)}, {b.xid, int64(a.pid)}} {
		if ended, err := d.endLostSession(ctx, mismatch[0], int32(mismatch[1])); err != nil || ended {
			t.Errorf("transaction %d with another session's process %d: ended %v, %v; want nothing ended", mismatch[0], mismatch[1], ended, err)
		}
	}
	// Not lost: asked about, it is still running, and not ended.
	if _, err := d.CommitStatus(ctx, strconv.FormatInt(a.xid, 10)); !errors.Is(err, store.ErrCommitUnknown) {
		t.Errorf("a running transaction the driver did not lose: %v, want ErrCommitUnknown", err)
	}
	for i, pt := range pts {
		if err := pt.tx.Commit(ctx); err != nil {
			t.Errorf("transaction %d after the questions: %v, want it committed (its session not ended)", i, err)
		}
	}
}
