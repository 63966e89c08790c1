package completions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// fakeChargeFaultDriver is a test fake of a store that fails some of the transactions
// writing budget accounts, in order: plan[i] is the fate of the i-th such transaction —
// "fail" rolls it back with an error (the store down, its disk full), "unknown" commits it
// and answers store.ErrCommitUnknown (the connection broke at the commit), "" commits it.
// "unknown-committed" and "unknown-aborted" commit it or roll it back and answer a
// *store.CommitUnknownError naming it, whose outcome CommitStatus tells from its second
// question on (the first: not known yet). "unknown-untold" commits it and names it too,
// but CommitStatus never tells (not known yet, every time); "unknown-nameless" commits it
// and names a transaction CommitStatus does not know (store.ErrInvalid). Past the plan
// they commit.
type fakeChargeFaultDriver struct {
	*memstore.Driver
	mu        sync.Mutex
	plan      []string
	n         int             // budget-writing transactions so far
	committed map[string]bool // a named transaction's outcome
	asked     map[string]int  // CommitStatus's questions of each
	untold    map[string]bool // named transactions whose outcome CommitStatus never tells
	gets      map[string]int  // Gets (outside transactions) of each budget account
}

// Get counts the reads of budget accounts outside a transaction.
func (d *fakeChargeFaultDriver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	if c == store.Budgets {
		d.mu.Lock()
		if d.gets == nil {
			d.gets = map[string]int{}
		}
		d.gets[key]++
		d.mu.Unlock()
	}
	return d.Driver.Get(ctx, c, key)
}

func (d *fakeChargeFaultDriver) budgetGets(id string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.gets[id]
}

// CommitStatus implements store.CommitChecker.
func (d *fakeChargeFaultDriver) CommitStatus(ctx context.Context, token string) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	committed, ok := d.committed[token]
	if !ok {
		return false, fmt.Errorf("fake store: %w: no transaction %s", store.ErrInvalid, token)
	}
	if d.asked[token]++; d.asked[token] == 1 || d.untold[token] {
		return false, fmt.Errorf("fake store: %w: transaction %s still in progress", store.ErrCommitUnknown, token)
	}
	return committed, nil
}

var (
	errFakeStoreDown  = errors.New("fake store: connection refused")
	errFakeCommitLost = errors.New("fake store: rolled back, its answer lost")
)

func (d *fakeChargeFaultDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	var fate, token string
	err := d.Driver.Update(ctx, func(tx store.Tx) error {
		var puts int64
		if err := fn(budgetCountingTx{Tx: tx, puts: &puts}); err != nil {
			return err
		}
		if puts > 0 {
			d.mu.Lock()
			if d.n < len(d.plan) {
				fate = d.plan[d.n]
			}
			d.n++
			switch fate {
			case "unknown-committed", "unknown-aborted", "unknown-untold":
				token = fmt.Sprint(d.n)
				if d.committed == nil {
					d.committed, d.asked, d.untold = map[string]bool{}, map[string]int{}, map[string]bool{}
				}
				d.committed[token] = fate != "unknown-aborted"
				d.untold[token] = fate == "unknown-untold"
			case "unknown-nameless":
				token = "nameless"
			}
			d.mu.Unlock()
		}
		switch fate {
		case "fail":
			return errFakeStoreDown
		case "unknown-aborted":
			return errFakeCommitLost
		}
		return nil
	})
	switch {
	case err == nil && fate == "unknown":
		return fmt.Errorf("fake store: commit: %w", store.ErrCommitUnknown)
	case token != "" && (err == nil || errors.Is(err, errFakeCommitLost)):
		return fmt.Errorf("fake store: commit: %w", &store.CommitUnknownError{Token: token, Err: io.ErrUnexpectedEOF})
	}
	return err
}

func (d *fakeChargeFaultDriver) writes() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

// pendingGateway is a gateway on a store failing its budget writes as plan says, with a
// key's account inside a team's (both stored), the pending charges retried at once.
func pendingGateway(t *testing.T, keyLimits BudgetLimits, plan ...string) (*Gateway, *fakeChargeFaultDriver, *Budget) {
	t.Helper()
	ctx := context.Background()
	d := &fakeChargeFaultDriver{Driver: memstore.NewDriver(), plan: plan}
	st := store.New(d)
	g, err := New(Options{Providers: fakeRegistry{"up": instantFake{}}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	g.pending.first, g.pending.maxGap = time.Millisecond, 2*time.Millisecond
	key, err := CreateSharedBudget(ctx, st, "key/vk", keyLimits)
	if err != nil {
		t.Fatal(err)
	}
	team, err := CreateSharedBudget(ctx, st, "team/t", BudgetLimits{MaxTokens: 100000})
	if err != nil {
		t.Fatal(err)
	}
	key.SetParent(team, "t")
	d.mu.Lock()
	d.n = 0 // the plan counts from the first request's writes
	d.mu.Unlock()
	return g, d, key
}

// storedTokens is the tokens account id's record holds.
func storedTokens(t *testing.T, g *Gateway, id string) int64 {
	t.Helper()
	rec, err := store.GetJSON[sharedBudget](context.Background(), g.opts.Store, store.Budgets, id)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Used.Tokens
}

// waitPending waits until no charge is pending (a count, not a timing: the deadline only
// ends a test that would otherwise hang).
func waitPending(t *testing.T, g *Gateway) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); g.PendingCharges().Count > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("charges still pending: %+v", g.PendingCharges())
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFailedChargeIsAppliedOnce: the charge of an answered request that the store did not
// take (down, its disk full, PostgreSQL restarting) was logged and lost: the key and its
// team were never charged the answer's 20 tokens. It is now kept and applied again until
// the store takes it, to each account exactly once — also when an attempt's commit got no
// answer though it was kept (store.ErrCommitUnknown): the account records the charge's id.
// A first charge whose commit's outcome is unknown is not applied again (it was, here),
// and is counted.
func TestFailedChargeIsAppliedOnce(t *testing.T) {
	ctx := context.Background()
	t.Run("kept and applied again", func(t *testing.T) {
		// The request's reservation, its charge failing, then the two accounts' attempts.
		g, d, key := pendingGateway(t, BudgetLimits{MaxTokens: 100000}, "", "fail", "fail", "unknown", "unknown", "fail")
		if _, err := g.Complete(ctx, Scope{Budget: key}, userReq("hi", "up/m")); err != nil {
			t.Fatal(err)
		}
		waitPending(t, g)
		for _, id := range []string{"key/vk", "team/t"} {
			if got := storedTokens(t, g, id); got != 20 {
				t.Errorf("%s: %d tokens charged, want the answer's 20 once", id, got)
			}
		}
		if s := g.PendingCharges(); s.Applied != 2 || s.Lost != 0 || s.Count != 0 {
			t.Errorf("pending charges: %+v, want 2 applied (the key's and the team's)", s)
		}
		if d.writes() < 5 {
			t.Errorf("%d budget writes, want 5 at least: the charge and an account's attempts failing or unanswered", d.writes())
		}
		d.mu.Lock()
		d.plan = nil // what is left of it (an attempt finding its charge applied writes nothing)
		d.mu.Unlock()
		// Later requests are charged as ever.
		if _, err := g.Complete(ctx, Scope{Budget: key}, userReq("hi", "up/m")); err != nil {
			t.Fatal(err)
		}
		if got := storedTokens(t, g, "key/vk"); got != 40 {
			t.Errorf("after another request: %d tokens, want 40", got)
		}
	})
	t.Run("first commit unknown", func(t *testing.T) {
		g, _, key := pendingGateway(t, BudgetLimits{MaxTokens: 100000}, "", "unknown")
		if _, err := g.Complete(ctx, Scope{Budget: key}, userReq("hi", "up/m")); err != nil {
			t.Fatal(err)
		}
		if got := storedTokens(t, g, "key/vk"); got != 20 {
			t.Errorf("key: %d tokens, want 20 (applied by the commit whose answer was lost, not again)", got)
		}
		if s := g.PendingCharges(); s.Unknown != 2 || s.Count != 0 || s.Applied != 0 {
			t.Errorf("pending charges: %+v, want 2 unknown, none kept", s)
		}
	})
}

// TestUnansweredFirstChargeIsResolved: a request's first charge whose commit got no answer
// (store.ErrCommitUnknown) was logged and never applied again, as it carries no id its
// accounts record: rolled back, the key and its team were never charged the answer. When
// the store can tell later whether the transaction committed (a *store.CommitUnknownError:
// PostgreSQL's transaction id), the charge is kept until it does (asked again with backoff
// while it cannot), dropped as applied when it committed and applied once when it did not.
func TestUnansweredFirstChargeIsResolved(t *testing.T) {
	ctx := context.Background()
	for _, fate := range []string{"unknown-committed", "unknown-aborted"} {
		t.Run(fate, func(t *testing.T) {
			g, d, key := pendingGateway(t, BudgetLimits{MaxTokens: 100000}, "", fate)
			if _, err := g.Complete(ctx, Scope{Budget: key}, userReq("hi", "up/m")); err != nil {
				t.Fatal(err)
			}
			waitPending(t, g)
			for _, id := range []string{"key/vk", "team/t"} {
				if got := storedTokens(t, g, id); got != 20 {
					t.Errorf("%s: %d tokens charged, want the answer's 20 once", id, got)
				}
			}
			if s := g.PendingCharges(); s.Applied != 2 || s.Unknown != 0 || s.Lost != 0 {
				t.Errorf("pending charges: %+v, want the key's and the team's applied, none unknown", s)
			}
			d.mu.Lock()
			asked := d.asked["2"]
			d.mu.Unlock()
			if asked < 3 {
				t.Errorf("the store was asked %d times about the transaction, want once not known yet and once per account then", asked)
			}
		})
	}
}

// TestUntoldFirstChargeIsGivenUp: a first charge whose commit got no answer was asked
// about for ever (every 30 s) when the store never tells — PostgreSQL's txid_status "too
// old" or "in the future" after a failover, a token it does not know — and counted at
// admission for ever, holding a slot of the bounded queue. Told nothing within its wait
// (here 1 ns: given up at the first question), or told the token names no transaction, it
// is given up as unknown, as a charge the store cannot tell about, and not applied again.
func TestUntoldFirstChargeIsGivenUp(t *testing.T) {
	ctx := context.Background()
	for _, fate := range []string{"unknown-untold", "unknown-nameless"} {
		t.Run(fate, func(t *testing.T) {
			g, d, key := pendingGateway(t, BudgetLimits{MaxTokens: 100000}, "", fate)
			if fate == "unknown-untold" {
				g.pending.unansweredWait = time.Nanosecond
			}
			if _, err := g.Complete(ctx, Scope{Budget: key}, userReq("hi", "up/m")); err != nil {
				t.Fatal(err)
			}
			waitPending(t, g)
			if s := g.PendingCharges(); s.Unknown != 2 || s.Applied != 0 || s.Lost != 0 {
				t.Errorf("pending charges: %+v, want the key's and the team's given up as unknown", s)
			}
			if got := storedTokens(t, g, "key/vk"); got != 20 {
				t.Errorf("key: %d tokens, want 20 (applied by the commit whose answer was lost, not again)", got)
			}
			d.mu.Lock()
			asked := d.asked["2"]
			d.mu.Unlock()
			if fate == "unknown-untold" && asked != 2 {
				t.Errorf("the store was asked %d times about the transaction, want once per account", asked)
			}
		})
	}
}

// TestPendingChargesCountAtAdmission: while a key's answered charge waits for the store,
// the key's admission counts it as spent, so a store blip does not let the key spend past
// its bound: with 30 tokens allowed, 20 stored and 20 pending the next request is refused
// (counting only what is stored, it was let in). Close then applies the pending charge.
func TestPendingChargesCountAtAdmission(t *testing.T) {
	ctx := context.Background()
	g, d, key := pendingGateway(t, BudgetLimits{MaxTokens: 30}, "", "fail", "fail", "fail")
	g.pending.first, g.pending.maxGap = time.Hour, time.Hour // one attempt now, the next at Close
	if _, err := g.Complete(ctx, Scope{Budget: key}, userReq("hi", "up/m")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); d.writes() < 4; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the pending charges were never attempted")
		}
	}
	if _, err := g.Complete(ctx, Scope{Budget: key}, userReq("hi", "up/m")); err != nil {
		t.Fatalf("second request (none stored, 20 pending of 30): %v", err)
	}
	if s := g.PendingCharges(); s.Count != 2 || s.Tokens != 40 {
		t.Fatalf("pending charges: %+v, want the first request's two accounts", s)
	}
	_, err := g.Complete(ctx, Scope{Budget: key}, userReq("hi", "up/m"))
	if !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("third request (20 stored, 20 pending of 30): %v, want ErrBudgetExceeded", err)
	}
	if err := g.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := storedTokens(t, g, "key/vk"); got != 40 {
		t.Errorf("after Close: %d tokens stored, want 40 (the pending charge applied)", got)
	}
	if s := g.PendingCharges(); s.Count != 0 || s.Applied != 2 || s.Lost != 0 {
		t.Errorf("after Close: %+v", s)
	}
}

// TestPendingChargeElsewhereReadsNoAccount: admission reads an account (its period's
// usage, from the store) to count its pending charges only when it has some. It read every
// account of every request's chain while any charge was pending anywhere in the process —
// one key's charge kept through a store blip, or an unanswered one for hours — a store
// read per account and request, when the store was least able to take them: another
// key's request reads its account no more than with nothing pending.
func TestPendingChargeElsewhereReadsNoAccount(t *testing.T) {
	ctx := context.Background()
	g, d, key := pendingGateway(t, BudgetLimits{MaxTokens: 100000})
	g.pending.first, g.pending.maxGap = time.Hour, time.Hour // one attempt now, the next at Close
	other, err := CreateSharedBudget(ctx, g.opts.Store, "key/other", BudgetLimits{MaxTokens: 100000})
	if err != nil {
		t.Fatal(err)
	}
	// The other key's reads of its account with nothing pending.
	if _, err := g.Complete(ctx, Scope{Budget: other}, userReq("hi", "up/m")); err != nil {
		t.Fatal(err)
	}
	alone := d.budgetGets("key/other")
	d.mu.Lock()
	d.plan, d.n = []string{"", "fail", "fail", "fail"}, 0 // the first key's charge fails
	d.mu.Unlock()
	if _, err := g.Complete(ctx, Scope{Budget: key}, userReq("hi", "up/m")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); d.writes() < 4; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the pending charges were never attempted")
		}
	}
	if s := g.PendingCharges(); s.Count != 2 {
		t.Fatalf("pending charges: %+v, want the first key's and its team's", s)
	}
	if _, err := g.Complete(ctx, Scope{Budget: other}, userReq("hi", "up/m")); err != nil {
		t.Fatal(err)
	}
	if got := d.budgetGets("key/other") - alone; got != alone {
		t.Errorf("the other key's request read its account %d times with another key's charge pending, want %d as with none", got, alone)
	}
	if err := g.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestPendingChargeOfEndedPeriod: a pending charge applied after its account's period was
// reset counted in the new period, eating into a budget meant to start afresh. It belongs
// to the period it was incurred in: with 30 tokens a period, a request's 20 pending when
// the hour ends, and the next period's first request charged 20, the period's second
// request is admitted (the old charge no longer counts at admission) and the charge,
// applied at Close, is recorded but leaves the key's period at 20; the team, whose account
// has no period, is charged it. A charge applied within its period still counts
// (TestPendingChargesCountAtAdmission).
func TestPendingChargeOfEndedPeriod(t *testing.T) {
	ctx := context.Background()
	g, d, key := pendingGateway(t, BudgetLimits{MaxTokens: 30, ResetEvery: time.Hour}, "", "fail", "fail", "fail")
	var mu sync.Mutex
	now := time.Date(2026, 11, 29, 9, 50, 0, 0, time.UTC)
	key.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	g.pending.first, g.pending.maxGap = time.Hour, time.Hour // one attempt now, the next at Close
	if _, err := g.Complete(ctx, Scope{Budget: key}, userReq("hi", "up/m")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); d.writes() < 4; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the pending charges were never attempted")
		}
	}
	if s := g.PendingCharges(); s.Count != 2 {
		t.Fatalf("pending charges: %+v, want the first request's two accounts", s)
	}
	mu.Lock()
	now = now.Add(61 * time.Minute) // the key's next period
	mu.Unlock()
	for i := 2; i <= 3; i++ {
		if _, err := g.Complete(ctx, Scope{Budget: key}, userReq("hi", "up/m")); err != nil {
			t.Fatalf("request %d (the new period: %d tokens of 30 charged; 20 pending of the last): %v", i, 20*(i-2), err)
		}
	}
	if err := g.Close(ctx); err != nil {
		t.Fatal(err)
	}
	rec, err := store.GetJSON[sharedBudget](ctx, g.opts.Store, store.Budgets, "key/vk")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Used.Tokens != 40 || rec.Used.Calls != 2 || len(rec.Applied) != 1 {
		t.Errorf("key: %d tokens, %d calls, applied %v; want the new period's 40 tokens and 2 calls, the old charge recorded applied", rec.Used.Tokens, rec.Used.Calls, rec.Applied)
	}
	if got := storedTokens(t, g, "team/t"); got != 60 {
		t.Errorf("team: %d tokens, want 60 (no period: the pending charge counts)", got)
	}
	if s := g.PendingCharges(); s.Count != 0 || s.Applied != 2 || s.Lost != 0 {
		t.Errorf("after Close: %+v, want the two applied", s)
	}
}

// TestLateChargeOwnPeriods: a pending charge applied late is held to each period apart:
// the account's (an hour) has ended, so its spend is untouched, while the model entry's
// (a day) still holds the charge, which it counts; a charge of the current hour counts in
// both, and one of an earlier day in neither.
func TestLateChargeOwnPeriods(t *testing.T) {
	ctx := context.Background()
	max := 10.0
	start := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	b, err := CreateSharedBudget(ctx, memstore.New(), "key/k", BudgetLimits{ResetEvery: time.Hour,
		Models: map[string]ModelLimits{"m": {MaxCostUSD: &max, ResetEvery: 24 * time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	now := start
	b.now = func() time.Time { return now }
	if _, err := b.reserveCall(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.chargeOnce(ctx, "c0", now, 10, 1, true, "m"); err != nil { // starts both periods
		t.Fatal(err)
	}
	now = start.Add(90 * time.Minute)
	steps := []struct {
		id                string
		at                time.Time
		wantCost, wantUSD float64 // the account's period's cost, the model entry's
	}{
		{"late", start.Add(10 * time.Minute), 0, 3},     // the hour ended, the day holds
		{"current", start.Add(70 * time.Minute), 2, 5},  // both hold
		{"yesterday", start.Add(-23 * time.Hour), 2, 5}, // neither
		{"current", start.Add(70 * time.Minute), 2, 5},  // applied already: not again
	}
	for _, s := range steps {
		if _, err := b.chargeOnce(ctx, s.id, s.at, 10, 2, true, "m"); err != nil {
			t.Fatal(err)
		}
		rec, err := store.GetJSON[sharedBudget](ctx, b.st, store.Budgets, "key/k")
		if err != nil {
			t.Fatal(err)
		}
		if rec.Used.CostUSD != s.wantCost || rec.Used.Models["m"].CostUSD != s.wantUSD {
			t.Errorf("after the %s charge: the account's period $%v, the model's $%v; want $%v and $%v", s.id, rec.Used.CostUSD, rec.Used.Models["m"].CostUSD, s.wantCost, s.wantUSD)
		}
	}
}
