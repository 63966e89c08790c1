package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// lockRecordingDriver records, of each transaction, the records it named to UpdateLocked
// and the budget accounts (store.Budgets) it wrote or deleted.
type lockRecordingDriver struct {
	store.Driver
	mu  sync.Mutex
	txs []recordedTx
}

type recordedTx struct {
	locks, wrote []string
}

func (d *lockRecordingDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return d.UpdateLocked(ctx, nil, fn)
}

func (d *lockRecordingDriver) UpdateLocked(ctx context.Context, locks []store.Ref, fn func(tx store.Tx) error) error {
	var wrote []string
	err := store.UpdateLocked(ctx, d.Driver, locks, func(tx store.Tx) error {
		wrote = wrote[:0] // a run again starts afresh
		return fn(budgetWritesTx{Tx: tx, wrote: &wrote})
	})
	if err == nil && len(wrote) > 0 {
		var named []string
		for _, r := range locks {
			if r.Collection == store.Budgets {
				named = append(named, r.Key)
			}
		}
		d.mu.Lock()
		d.txs = append(d.txs, recordedTx{locks: named, wrote: slices.Clone(wrote)})
		d.mu.Unlock()
	}
	return err
}

// unnamed returns, of each transaction recorded since from, the accounts it wrote
// without naming them to UpdateLocked.
func (d *lockRecordingDriver) unnamed(from int) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, tx := range d.txs[from:] {
		for _, id := range tx.wrote {
			if !slices.Contains(tx.locks, id) {
				out = append(out, fmt.Sprintf("%s (named %v)", id, tx.locks))
			}
		}
	}
	return out
}

func (d *lockRecordingDriver) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.txs)
}

type budgetWritesTx struct {
	store.Tx
	wrote *[]string
}

func (t budgetWritesTx) Put(ctx context.Context, c store.Collection, key string, v []byte) error {
	if c == store.Budgets {
		*t.wrote = append(*t.wrote, key)
	}
	return t.Tx.Put(ctx, c, key, v)
}

func (t budgetWritesTx) Delete(ctx context.Context, c store.Collection, key string) error {
	if c == store.Budgets {
		*t.wrote = append(*t.wrote, key)
	}
	return t.Tx.Delete(ctx, c, key)
}

// TestAdminBudgetWritesLockTheirAccounts: an operator's write of a budget account (a key,
// team, user, end user, organization or tag created, its limits changed, or deleted, and
// the proxy-wide budget set at start) was a plain Update, which on PostgreSQL aborts with
// the requests' charges of the account (UpdateLocked) and, past the store's retries, failed
// the operator's request. Each now names the accounts it writes to UpdateLocked, as the
// requests' admissions and charges do, so they wait for one another: every transaction
// of these routes and of a budgeted request that writes an account names it.
func TestAdminBudgetWritesLockTheirAccounts(t *testing.T) {
	d := &lockRecordingDriver{Driver: newTestDriver(t)}
	hs, s := keysServerWith(t, store.New(d), &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey}, ProxyMaxBudgetUSD: 100})
	steps := []struct{ method, path, body string }{
		{"POST", "/team/new", `{"team_id":"eng","max_budget":50}`},
		{"POST", "/team/update", `{"team_id":"eng","max_budget":40}`},
		{"POST", "/user/new", `{"user_id":"ann","max_budget":30,"auto_create_key":false}`},
		{"POST", "/user/update", `{"user_id":"ann","max_budget":25}`},
		{"POST", "/customer/new", `{"user_id":"cus","max_budget":5}`},
		{"POST", "/customer/update", `{"user_id":"cus","max_budget":6}`},
		{"POST", "/organization/new", `{"organization_id":"org1","organization_alias":"org1","max_budget":70}`},
		{"PATCH", "/organization/update", `{"organization_id":"org1","max_budget":60}`},
		{"POST", "/tag/new", `{"name":"blue","max_budget":9}`},
		{"POST", "/tag/update", `{"name":"blue","max_budget":8}`},
	}
	from := 0 // the proxy-wide account, set at start, too
	for _, st := range steps {
		if r := do(t, s, st.method, st.path, testKey, st.body); r.status != http.StatusOK {
			t.Fatalf("%s %s: %d %s", st.method, st.path, r.status, r.raw)
		}
	}
	g := litellmGenerate(t, s, `{"max_budget":10,"team_id":"eng"}`)
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","max_budget":20}`); r.status != http.StatusOK {
		t.Fatalf("/key/update: %d %s", r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, g.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("a chat of the key: %d %s", st, b)
	}
	for _, st := range []struct{ method, path, body string }{
		{"POST", "/key/delete", `{"keys":["` + g.Token + `"]}`},
		{"POST", "/team/delete", `{"team_ids":["eng"]}`},
		{"POST", "/user/delete", `{"user_ids":["ann"]}`},
		{"POST", "/customer/delete", `{"user_ids":["cus"]}`},
		{"POST", "/tag/delete", `{"name":"blue"}`},
		{"DELETE", "/organization/delete", `{"organization_ids":["org1"]}`},
	} {
		if r := do(t, s, st.method, st.path, testKey, st.body); r.status != http.StatusOK {
			t.Fatalf("%s %s: %d %s", st.method, st.path, r.status, r.raw)
		}
	}
	if d.count() == from {
		t.Fatal("no transaction wrote a budget account")
	}
	if bad := d.unnamed(from); len(bad) > 0 {
		t.Errorf("accounts written without being named to UpdateLocked: %v", bad)
	}
}

// TestBudgetUpdateLocksItsAccounts: /budget/update writes the accounts of the end users,
// virtual keys and organizations naming the budget (their limits become the budget's),
// found inside its transaction, which was a plain Update: on PostgreSQL it and the
// requests charging those accounts aborted one another, past the store's retries failing
// the operator's update. It now names every account it writes to UpdateLocked.
func TestBudgetUpdateLocksItsAccounts(t *testing.T) {
	d := &lockRecordingDriver{Driver: newTestDriver(t)}
	_, s := keysServerWith(t, store.New(d), &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey}})
	for _, st := range []struct{ path, body string }{
		{"/budget/new", `{"budget_id":"b1","max_budget":5}`},
		{"/customer/new", `{"user_id":"cus1","budget_id":"b1"}`},
		{"/customer/new", `{"user_id":"cus2","budget_id":"b1"}`},
		{"/organization/new", `{"organization_id":"org1","organization_alias":"org1","budget_id":"b1"}`},
	} {
		if r := do(t, s, "POST", st.path, testKey, st.body); r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", st.path, r.status, r.raw)
		}
	}
	litellmGenerate(t, s, `{"budget_id":"b1"}`)
	from := d.count()
	if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"b1","max_budget":7}`); r.status != http.StatusOK {
		t.Fatalf("/budget/update: %d %s", r.status, r.raw)
	}
	if d.count() != from+1 {
		t.Fatalf("%d transactions wrote budget accounts, want /budget/update's one", d.count()-from)
	}
	d.mu.Lock()
	wrote := d.txs[from].wrote
	d.mu.Unlock()
	if len(wrote) != 4 {
		t.Errorf("/budget/update wrote accounts %v, want the two end users', the key's and the organization's", wrote)
	}
	if un := d.unnamed(from); len(un) > 0 {
		t.Errorf("/budget/update wrote accounts it did not name to UpdateLocked: %v", un)
	}
}
