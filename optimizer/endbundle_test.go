package optimizer

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// errFakeDied is what dieAfterEndDriver answers every write with once it "died".
var errFakeDied = errors.New("fake store: the process died")

// dieAfterEndDriver is a fake store driver (memstore underneath) standing for a process
// that dies right after it commits an optimization job's record as ended: every write
// after that commit fails, so only what that very transaction wrote is kept.
type dieAfterEndDriver struct {
	*memstore.Driver
	mu   sync.Mutex
	dead bool
}

func (d *dieAfterEndDriver) isDead() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dead
}

func (d *dieAfterEndDriver) Put(ctx context.Context, c store.Collection, key string, value []byte) error {
	if d.isDead() {
		return errFakeDied
	}
	return d.Driver.Put(ctx, c, key, value)
}

func (d *dieAfterEndDriver) Delete(ctx context.Context, c store.Collection, key string) error {
	if d.isDead() {
		return errFakeDied
	}
	return d.Driver.Delete(ctx, c, key)
}

func (d *dieAfterEndDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	if d.isDead() {
		return errFakeDied
	}
	var puts []putRecord
	err := d.Driver.Update(ctx, func(tx store.Tx) error {
		puts = puts[:0] // a driver may run fn more than once
		return fn(recordingTx{tx, &puts})
	})
	if err != nil {
		return err
	}
	for _, p := range puts {
		var j job
		if p.c == store.OptimizationJobs && json.Unmarshal(p.value, &j) == nil && j.Status.Terminal() {
			d.mu.Lock()
			d.dead = true
			d.mu.Unlock()
		}
	}
	return nil
}

// TestEndedJobTakesItsBundleInOneTransaction: a job's end was stored in one transaction
// and its bundle deleted in a second, so a process that died between the two left the
// bundle (up to 200 MiB) of an ended job in the store until a restart swept it. The end
// now deletes the bundle in the transaction that stores it, on the local queue and on a
// shared one: a store that accepts no write after that commit holds no bundle.
func TestEndedJobTakesItsBundleInOneTransaction(t *testing.T) {
	for _, shared := range []bool{false, true} {
		name := "local"
		if shared {
			name = "shared"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			d := &dieAfterEndDriver{Driver: memstore.NewDriver()}
			var opts []Option
			if shared {
				opts = append(opts, WithQueue(minuteQueue{})) // its Enqueue does nothing: the test runs the job
			}
			e := newEnv(t, &fakeRunner{}, nil, opts...) // its upstream, proposer and bundle URL
			e.st = store.New(d)
			svc, err := New(e.st, e.runner, e.proposer, append([]Option{WithFetcher(e.svc.fetcher), WithGateway(e.up.URL+"/v1", StaticKey("job-key")),
				WithPublicURL("https://sy.example"), WithLogger(e.svc.log)}, opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			e.svc = svc
			e.start(t)
			sub, err := e.svc.Submit(ctx, "alice", request(e.url, 1))
			if err != nil {
				t.Fatal(err)
			}
			if keys := storedBundleKeys(t, e.st); len(keys) == 0 {
				t.Fatal("no bundle stored at submit")
			}
			if shared {
				if err := e.svc.handle(ctx, sub.JobID); err != nil {
					t.Fatal(err)
				}
			}
			if st := waitFor(t, e.svc, sub.JobID); st.Status != StatusCompleted {
				t.Fatalf("job %s (%q), want completed", st.Status, st.ErrorMessage)
			}
			if !d.isDead() {
				t.Fatal("the job's end was never committed")
			}
			var left []string
			for _, k := range storedBundleKeys(t, e.st) {
				if strings.Contains(k, sub.JobID) {
					left = append(left, k)
				}
			}
			if len(left) != 0 {
				t.Errorf("the process died right after the job's end was stored, and its bundle outlived it: %v", left)
			}
		})
	}
}
