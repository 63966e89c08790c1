package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// r11bServer is keysServer with a given upstream handler and static API keys.
func r11bServer(t *testing.T, st *store.Store, up http.Handler, keys []string) (*httptest.Server, *Server) {
	return keysServerWith(t, st, up, Config{APIKeys: keys})
}

// barrierUpstream holds every upstream call until n have arrived (or 3 s passed), then
// answers them all as fakeOpenAIUpstream does.
type barrierUpstream struct {
	n       int32
	arrived atomic.Int32
	once    sync.Once
	open    chan struct{}
	inner   fakeOpenAIUpstream
}

func (b *barrierUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if b.arrived.Add(1) >= b.n {
		b.once.Do(func() { close(b.open) })
	}
	select {
	case <-b.open:
	case <-time.After(3 * time.Second):
	}
	b.inner.ServeHTTP(w, r)
}

// TestReview11bBudgetConcurrentOvershoot: README and BudgetLimits.MaxCostUSD promise that
// "the total can pass max_budget_usd by one request's cost". The cost is only compared
// before the call (reserveCall) and added after the answer (charge), so N requests sent at
// once all pass the check with spend 0 and the key spends N requests' cost.
func TestReview11bBudgetConcurrentOvershoot(t *testing.T) {
	const n = 8
	up := &barrierUpstream{n: n, open: make(chan struct{})}
	hs, s := r11bServer(t, nil, up, []string{testKey})
	vk := issue(t, s, `{"max_budget_usd":0.013}`) // exactly one request ($0.013)
	var wg sync.WaitGroup
	var ok atomic.Int32
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, _ := chatWith(t, hs, vk.Key, "openai/ok"); resp.StatusCode == http.StatusOK {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID)
	// Allowed: the budget plus one request's cost.
	if limit := 0.013 + 0.013; info.Spend.CostUSD > limit+1e-9 {
		t.Fatalf("max_budget_usd 0.013: %d requests answered, spend $%.3f > budget + one request ($%.3f)", ok.Load(), info.Spend.CostUSD, limit)
	}
}

// hookDriver wraps memstore's driver with hooks on plain (non-transaction) Gets and Deletes.
type hookDriver struct {
	store.Driver
	onGet    func(c store.Collection, key string)
	onDelete func(c store.Collection, key string)
}

func (d *hookDriver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	if d.onGet != nil {
		d.onGet(c, key)
	}
	return d.Driver.Get(ctx, c, key)
}

func (d *hookDriver) Delete(ctx context.Context, c store.Collection, key string) error {
	if d.onDelete != nil {
		d.onDelete(c, key)
	}
	return d.Driver.Delete(ctx, c, key)
}

// TestReview11bPatchLostUpdate: updateKey reads the key's record before (and outside) the
// transaction that writes it, then rewrites every field from that read. A PATCH that only
// renames the key, racing a PATCH that narrows the key's models, writes the old model list
// back: the narrowing answered 200 yet is silently undone, and the key calls the model it
// was just taken off.
func TestReview11bPatchLostUpdate(t *testing.T) {
	d := &hookDriver{Driver: newTestDriver(t)}
	st := store.New(d)
	hs, s := r11bServer(t, st, &fakeOpenAIUpstream{}, []string{testKey})
	vk := issue(t, s, `{"models":["openai/ok","openai/ok2"]}`)

	read := make(chan struct{}, 16)
	d.onGet = func(c store.Collection, key string) {
		if c == store.VirtualKeys {
			read <- struct{}{}
		}
	}
	// PATCH A (rename): headers sent, body still coming.
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("PATCH", hs.URL+"/api/v1/keys/"+vk.ID, pr)
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	doneA := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			doneA <- 0
			return
		}
		resp.Body.Close()
		doneA <- resp.StatusCode
	}()
	wroteOpen := make(chan struct{})
	go func() { pw.Write([]byte(`{`)); close(wroteOpen) }()
	select {
	case <-read: // A read the record
	case <-time.After(5 * time.Second):
		t.Fatal("PATCH A never read the key")
	}
	d.onGet = nil
	// PATCH B narrows the models and is answered 200.
	if r := do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, `{"models":["openai/ok"]}`); r.status != http.StatusOK {
		t.Fatalf("PATCH B: %d %s", r.status, r.raw)
	}
	if resp, _ := chatWith(t, hs, vk.Key, "openai/ok2"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("after PATCH B, openai/ok2: %d", resp.StatusCode)
	}
	<-wroteOpen // the rest after the brace: two writers racing on the pipe could swap them
	pw.Write([]byte(`"name":"renamed"}`))
	pw.Close()
	if code := <-doneA; code != http.StatusOK {
		t.Fatalf("PATCH A: %d", code)
	}
	info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID)
	if len(info.Models) != 1 || info.Models[0] != "openai/ok" {
		t.Errorf("models after a rename raced a narrowing: %v, want [openai/ok]", info.Models)
	}
	if resp, _ := chatWith(t, hs, vk.Key, "openai/ok2"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the key calls openai/ok2 again after it was taken off its list: %d", resp.StatusCode)
	}
}

// TestReview11bIssuerRemoved: a virtual key acts for the key that issued it. When that
// key is removed (a static key dropped from SWITCHYARD_API_KEYS on restart), the virtual
// keys it issued keep spending in its name: the scoped-key path never checks that the
// owner is still a key.
func TestReview11bIssuerRemoved(t *testing.T) {
	st := newTestStore(t)
	_, a := r11bServer(t, st, &fakeOpenAIUpstream{}, []string{testKey, completionsOtherKey})
	vk := issue(t, a, `{}`)
	// The same store after a restart without testKey.
	hsB, b := r11bServer(t, st, &fakeOpenAIUpstream{}, []string{completionsOtherKey})
	if r := do(t, b, "GET", "/api/v1/keys", testKey, ""); r.status != http.StatusUnauthorized {
		t.Fatalf("the removed issuer itself: %d", r.status)
	}
	if resp, body := chatWith(t, hsB, vk.Key, "openai/ok"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a virtual key of a removed issuer: %d %s, want 401", resp.StatusCode, body)
	}
}

// TestReview11bExpiryDeleteRace: sharedKey deleted an expired key's record outside any
// transaction after reading it. A PATCH that removes the expiry in between (answered 200,
// "expired" absent) had its fresh record deleted by that stale delete: the key the
// operator just brought back stayed refused. (Rewritten with the mend: the delete is a
// transaction now, so the hook runs the PATCH just before it; since a virtual key's expired
// record is kept, the PATCH runs after the refused request when no transaction came.)
func TestReview11bExpiryDeleteRace(t *testing.T) {
	d := &updateHookDriver{Driver: newTestDriver(t)}
	st := store.New(d)
	hs, s := r11bServer(t, st, &fakeOpenAIUpstream{}, []string{testKey})
	vk := issue(t, s, `{"expires_at":"`+time.Now().Add(time.Hour).UTC().Format(time.RFC3339)+`"}`)
	ctx := context.Background()
	rec, err := store.GetJSON[storedVirtualKey](ctx, st, store.VirtualKeys, "key_"+hashPrefix(testKey)+"/"+vk.ID)
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Minute).UTC()
	rec.ExpiresAt = &past
	sk, _ := store.GetJSON[storedScopedKey](ctx, st, store.ScopedKeys, rec.Hash)
	sk.ExpiresAt = past
	store.PutJSON(ctx, st, store.VirtualKeys, rec.Owner+"/"+vk.ID, rec)
	store.PutJSON(ctx, st, store.ScopedKeys, rec.Hash, sk)

	// The request reads the expired record; before its delete runs, the operator's PATCH
	// removes the expiry (the request's first transaction is that delete).
	d.mu.Lock()
	d.before = func() {
		r := do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, `{"expires_at":null}`)
		if r.status != http.StatusOK || r.body["expired"] != nil {
			t.Errorf("PATCH: %d %s", r.status, r.raw)
		}
	}
	d.mu.Unlock()
	if resp, _ := chatWith(t, hs, vk.Key, "openai/ok"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the request that read the expired record: %d", resp.StatusCode)
	}
	// A virtual key's expired record is kept now (its holder is told it expired), so the
	// request may have made no transaction for the hook: the PATCH then runs here.
	d.mu.Lock()
	patch := d.before
	d.before = nil
	d.mu.Unlock()
	if patch != nil {
		patch()
	}
	if resp, body := chatWith(t, hs, vk.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Errorf("after PATCH expires_at null answered 200: %d %s", resp.StatusCode, body)
	}
}

// TestReview11bPeriodStartBeforeUse: keySpend.PeriodStart is documented "absent before the
// first use", but Budget.Used rolls a copy of an unused account, so a key never used shows
// period_start = the time of the GET (a new one at each read).
func TestReview11bPeriodStartBeforeUse(t *testing.T) {
	_, s := r11bServer(t, nil, &fakeOpenAIUpstream{}, []string{testKey})
	vk := issue(t, s, `{"max_budget_usd":1,"budget_duration":"30d"}`)
	r := do(t, s, "GET", "/api/v1/keys/"+vk.ID, testKey, "")
	spend, _ := r.body["spend"].(map[string]any)
	if _, ok := spend["period_start"]; ok {
		t.Errorf("a key never used has a period_start: %s", r.raw)
	}
}

// TestReview11bPatchBlockedByStaleModel: PATCH re-validates the whole stored model list,
// so once a model a key names is no longer routed (config change), the operator cannot
// even lower the key's budget or shorten its life: every PATCH that does not also rewrite
// models is a 422 on models[i].
func TestReview11bPatchBlockedByStaleModel(t *testing.T) {
	_, s := r11bServer(t, nil, &fakeOpenAIUpstream{}, []string{testKey})
	vk := issue(t, s, `{"models":["openai/ok"],"max_budget_usd":100}`)
	ctx := context.Background()
	key := "key_" + hashPrefix(testKey) + "/" + vk.ID
	rec, err := store.GetJSON[storedVirtualKey](ctx, s.cfg.Store, store.VirtualKeys, key)
	if err != nil {
		t.Fatal(err)
	}
	rec.Models = []string{"openai/retired-model"} // as if issued before the model was dropped
	store.PutJSON(ctx, s.cfg.Store, store.VirtualKeys, key, rec)
	r := do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, `{"max_budget_usd":1}`)
	if r.status != http.StatusOK {
		t.Errorf("lowering the budget of a key naming a retired model: %d %s", r.status, r.raw)
	}
}

// updateHookDriver runs before (once, when armed) ahead of the next transaction.
type updateHookDriver struct {
	store.Driver
	mu     sync.Mutex
	before func()
}

func (d *updateHookDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	d.mu.Lock()
	b := d.before
	d.before = nil
	d.mu.Unlock()
	if b != nil {
		b()
	}
	return d.Driver.Update(ctx, fn)
}

// TestReview11bRevokeInFlight: a request authenticated just before its key is revoked
// reaches reserveCall on an account that is gone; the store's not-found is not mapped, so
// the caller gets a 500 "internal error" (logged as a server error) instead of the 401 a
// revoked key gets.
func TestReview11bRevokeInFlight(t *testing.T) {
	d := &updateHookDriver{Driver: newTestDriver(t)}
	st := store.New(d)
	hs, s := r11bServer(t, st, &fakeOpenAIUpstream{}, []string{testKey})
	vk := issue(t, s, `{"max_requests":5}`)
	owner := "key_" + hashPrefix(testKey)
	d.mu.Lock()
	d.before = func() { // the request's first transaction: its reserveCall
		if err := s.revokeKey(context.Background(), owner, vk.ID); err != nil {
			t.Error(err)
		}
	}
	d.mu.Unlock()
	resp, body := chatWith(t, hs, vk.Key, "openai/ok")
	if resp.StatusCode == http.StatusInternalServerError {
		t.Errorf("a request racing its key's revocation: %d %s", resp.StatusCode, body)
	}
}
