package completions

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/pgstore"
	"github.com/switchyard-ai/switchyard/store/storetest"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// cutChargeDriver is pgstore's driver (through a storetest.FakeCutProxy) that arms the
// proxy to cut the COMMIT of the first transaction writing a charge (an account whose
// tokens grow), once cutNext is set: the request's charge, not its reservation.
type cutChargeDriver struct {
	*pgstore.Driver
	proxy   *storetest.FakeCutProxy
	mode    storetest.CutMode
	cutNext atomic.Bool
}

func (d *cutChargeDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return d.UpdateLocked(ctx, nil, fn)
}

func (d *cutChargeDriver) UpdateLocked(ctx context.Context, locks []store.Ref, fn func(tx store.Tx) error) error {
	return d.Driver.UpdateLocked(ctx, locks, func(tx store.Tx) error { return fn(chargeSpyTx{Tx: tx, d: d}) })
}

// Unwrap returns pgstore's driver, for Store.CommitStatus.
func (d *cutChargeDriver) Unwrap() store.Driver { return d.Driver }

// chargeSpyTx arms its driver's proxy at the Put of a charge.
type chargeSpyTx struct {
	store.Tx
	d *cutChargeDriver
}

func (t chargeSpyTx) Put(ctx context.Context, c store.Collection, key string, value []byte) error {
	var rec sharedBudget
	if c == store.Budgets && json.Unmarshal(value, &rec) == nil && rec.Used.Tokens > 0 && t.d.cutNext.CompareAndSwap(true, false) {
		t.d.proxy.Arm(t.d.mode) // the COMMIT that follows this function's return
	}
	return t.Tx.Put(ctx, c, key, value)
}

// TestChargeCutMidCommitOnPostgreSQL: a request's charge whose connection to PostgreSQL
// is cut mid-commit (a real TCP proxy between pgx and the database: the client's side
// closed, the server's left open as a network partition leaves it). When the COMMIT
// reached the server, the gateway learns it committed and does not charge again. When it
// did not, the server held the session, in the transaction and holding the account's
// lock, until its TCP keepalive gave up on the client (two hours by default): the
// pending charge was "not known yet" all that time and every other charge of the key
// waited for the lock. pgstore now ends that session at the gateway's first question, so
// the charge is known rolled back at once and applied again. Either way the key is
// charged the answer's tokens once.
func TestChargeCutMidCommitOnPostgreSQL(t *testing.T) {
	dsn := drivertest.PostgresDSN(t)
	for _, c := range []struct {
		name string
		mode storetest.CutMode
	}{
		{"COMMIT reached the server", storetest.ForwardCommitAndCut},
		{"COMMIT lost on the way", storetest.SwallowCommitAndCut},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			proxy, proxied := storetest.NewFakeCutProxy(t, dsn)
			pd, err := pgstore.OpenDriver(ctx, proxied, pgstore.Options{Schema: drivertest.FreshSchema("chargecut")})
			if err != nil {
				t.Fatal(err)
			}
			defer pd.Close()
			d := &cutChargeDriver{Driver: pd, proxy: proxy, mode: c.mode}
			st := store.New(d)
			g, err := New(Options{Providers: fakeRegistry{"up": instantFake{}}, Store: st})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close(ctx)
			g.pending.first, g.pending.maxGap = time.Millisecond, 50*time.Millisecond
			key, err := CreateSharedBudget(ctx, st, "key/vk", BudgetLimits{MaxTokens: 100000})
			if err != nil {
				t.Fatal(err)
			}
			d.cutNext.Store(true)
			if _, err := g.Complete(ctx, Scope{Budget: key}, userReq("hi", "up/m")); err != nil {
				t.Fatal(err)
			}
			if proxy.Cuts() != 1 {
				t.Fatalf("the proxy cut %d connections, want the charge's", proxy.Cuts())
			}
			waitPending(t, g)
			if got := storedTokens(t, g, "key/vk"); got != 20 {
				t.Errorf("the key is charged %d tokens, want the answer's 20 once", got)
			}
			if s := g.PendingCharges(); s.Applied != 1 || s.Unknown != 0 || s.Lost != 0 {
				t.Errorf("pending charges: %+v, want the charge applied (or found committed) once, none unknown or lost", s)
			}
			// The key's later requests are charged as ever (its lock not held by the
			// lost session).
			if _, err := g.Complete(ctx, Scope{Budget: key}, userReq("hi", "up/m")); err != nil {
				t.Fatal(err)
			}
			if got := storedTokens(t, g, "key/vk"); got != 40 {
				t.Errorf("after another request: %d tokens, want 40", got)
			}
		})
	}
}
