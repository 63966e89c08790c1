package optimizer

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// hookDriver is a memstore driver whose calls can be held at chosen points, to put a
// Submit or a Start exactly where a race would.
type hookDriver struct {
	*memstore.Driver
	mu sync.Mutex
	// afterList, when set, runs after a List of c has read the store and before it answers.
	afterList func(c store.Collection)
	// afterPut, when set, runs after an Update that put value under c has committed and
	// before it returns.
	afterPut func(c store.Collection, value []byte)
}

func (d *hookDriver) hooks() (func(store.Collection), func(store.Collection, []byte)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.afterList, d.afterPut
}

func (d *hookDriver) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	out, err := d.Driver.List(ctx, c, opts)
	if h, _ := d.hooks(); h != nil {
		h(c)
	}
	return out, err
}

type putRecord struct {
	c     store.Collection
	value []byte
}

// recordingTx notes what an Update function puts.
type recordingTx struct {
	store.Tx
	puts *[]putRecord
}

func (t recordingTx) Put(ctx context.Context, c store.Collection, key string, value []byte) error {
	*t.puts = append(*t.puts, putRecord{c, bytes.Clone(value)})
	return t.Tx.Put(ctx, c, key, value)
}

func (d *hookDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	var puts []putRecord
	err := d.Driver.Update(ctx, func(tx store.Tx) error {
		puts = puts[:0] // a driver may run fn more than once
		return fn(recordingTx{tx, &puts})
	})
	if _, h := d.hooks(); h != nil && err == nil {
		for _, p := range puts {
			h(p.c, p.value)
		}
	}
	return err
}

// newHookedEnv is newEnv on a hookDriver.
func newHookedEnv(t *testing.T, d *hookDriver, runner sandbox.Runner, opts ...Option) *env {
	t.Helper()
	e := &env{st: store.New(d), up: newScriptedUpstream(t, "job-key"), runner: runner}
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "scripted", BaseURL: e.up.URL + "/v1", APIKey: "proposer-key"}))
	p, err := NewLLMProposer(reg, "scripted/proposer", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.proposer = p
	base := []Option{
		WithFetcher(&fetch.Fetcher{AllowLocal: true}),
		WithGateway(e.up.URL+"/v1", StaticKey("job-key")),
		WithPublicURL("https://sy.example"),
		WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	}
	svc, err := New(e.st, runner, p, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	e.url = serveBytes(t, zipFiles(t, bundleFiles(t)))
	return e
}

// A job submitted while Start recovers the store's jobs is run: Submit read "started, no
// queue yet" before storing the job, so it did not send it, and Start's listing of the
// store had been read before the job was stored, so it did not queue it either — the job
// was answered 202 and stayed queued (holding one of its owner's slots) until a restart.
func TestReview22fSubmitDuringStartIsRun(t *testing.T) {
	d := &hookDriver{Driver: memstore.NewDriver()}
	listed, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	d.afterList = func(c store.Collection) {
		if c == store.OptimizationJobs {
			once.Do(func() { close(listed); <-release })
		}
	}
	e := newHookedEnv(t, d, &fakeRunner{})
	ctx := context.Background()
	started := make(chan error, 1)
	go func() { started <- e.svc.Start(ctx) }()
	<-listed // Start has read the store's jobs and not yet made its queue
	sub, err := e.svc.Submit(ctx, "alice", request(e.url, 1))
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := e.svc.Close(cctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if st := waitFor(t, e.svc, sub.JobID); st.Status != StatusCompleted {
		t.Fatalf("job submitted during Start: %+v", st)
	}
}
