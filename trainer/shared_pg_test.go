package trainer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/jobqueue/riverqueue"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// Environment of the helper worker processes TestSharedQueue starts (re-executing this
// test binary).
const (
	helperEnv       = "SWITCHYARD_TRAINER_QUEUE_HELPER" // the schema to use
	helperStaleEnv  = "SWITCHYARD_TRAINER_QUEUE_STALE"
	sharedStaleTest = 2 * time.Second
)

// pgDSN returns the test cluster's address, or skips saying how to get one.
func pgDSN(t *testing.T) string {
	t.Helper()
	d := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	if d == "" {
		t.Skip("SWITCHYARD_TEST_POSTGRES is not set: scripts/pg-test-cluster.sh starts a throwaway PostgreSQL cluster and prints it (needs the Debian package postgresql)")
	}
	return d
}

// openShared opens the store and the River queue on schema, closed at the end of the test.
func openShared(t *testing.T, dsn, schema string, log *slog.Logger) (*store.Store, *riverqueue.Queue) {
	t.Helper()
	ctx := context.Background()
	d, err := pgstore.OpenDriver(ctx, dsn, pgstore.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(d)
	q, err := riverqueue.Open(ctx, d.Pool(), riverqueue.Options{Schema: schema, StaleAfter: sharedStaleTest,
		RetryDelay: 100 * time.Millisecond, PollInterval: 200 * time.Millisecond, Logger: log})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, q
}

// TestSharedQueueHelper is a worker process of TestSharedQueue; run alone it skips.
func TestSharedQueueHelper(t *testing.T) {
	schema := os.Getenv(helperEnv)
	if schema == "" {
		t.Skip("helper process of TestSharedQueue (runs only when that test starts it)")
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	st, q := openShared(t, pgDSN(t), schema, log)
	s, err := New(st, WithQueue(q), WithWorkers(1), WithLogger(log), WithFetcher(&fetch.Fetcher{AllowLocal: true}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(os.Stderr, "helper ready")
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes stdin (or kills us)
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_ = q.Stop(sctx)
	_ = s.Close()
}

// helper is a worker process started by TestSharedQueue.
type helper struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	lines []string
	ready chan struct{}
}

var startedRe = regexp.MustCompile(`msg="trainer: job started" job=(\S+)`)

// started returns the ids of the jobs this helper started, one per start.
func (h *helper) started() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ids []string
	for _, l := range h.lines {
		if m := startedRe.FindStringSubmatch(l); m != nil {
			ids = append(ids, m[1])
		}
	}
	return ids
}

func (h *helper) logged(sub string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range h.lines {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

func startHelper(t *testing.T, name, schema string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSharedQueueHelper$", "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), helperEnv+"="+schema)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	h := &helper{name: name, cmd: cmd, stdin: stdin, ready: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			h.mu.Lock()
			h.lines = append(h.lines, sc.Text())
			h.mu.Unlock()
			if sc.Text() == "helper ready" {
				once.Do(func() { close(h.ready) })
			}
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			h.mu.Lock()
			t.Logf("%s log:\n%s", name, strings.Join(h.lines, "\n"))
			h.mu.Unlock()
		}
	})
	select {
	case <-h.ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not start", name)
	}
	return h
}

// waitFor polls cond every 20ms until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSharedQueue runs training jobs on River across separate worker processes: a job
// whose worker is killed (kill -9) mid-job is run again by a surviving worker; N jobs each
// run exactly once; a job running longer than the detection time is not run twice; a job
// running in another process is cancelled, and deleted, from this one. This process is an HTTP-only replica (no workers) and River's leader.
func TestSharedQueue(t *testing.T) {
	dsn := pgDSN(t)
	ctx := context.Background()
	schema := fmt.Sprintf("trainer_queue_%d_%d", os.Getpid(), time.Now().UnixNano())

	// Dataset server: "/block*" paths hang their first request until its client goes
	// away (a worker killed or a job cancelled), later ones answer.
	body := asJSON(syntheticRecords(30, 7))
	var mu sync.Mutex
	hits := map[string]int{}
	releaseSlow := make(chan struct{})
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(releaseSlow) }) })
	srv := files(t, nil)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		n := hits[r.URL.Path]
		mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/block") && n == 1 {
			<-r.Context().Done()
			return
		}
		if strings.HasPrefix(r.URL.Path, "/slow") {
			// Leading whitespace, a byte a second, keeps the download alive until released.
			for {
				select {
				case <-releaseSlow:
				case <-r.Context().Done():
					return
				case <-time.After(time.Second):
					io.WriteString(w, "\n")
					w.(http.Flusher).Flush()
					continue
				}
				break
			}
		}
		io.WriteString(w, body)
	})

	log := quietLogger()
	if os.Getenv("SWITCHYARD_TEST_VERBOSE") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	st, q := openShared(t, dsn, schema, log)
	// The replica that accepts the jobs allows the test's local URLs; the worker fetches with
	// the accepting process's policy.
	s, err := New(st, WithQueue(q), WithWorkers(0), WithLogger(log), WithJobsPerOwner(20), WithFetcher(&fetch.Fetcher{AllowLocal: true}))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		q.Stop(sctx)
		s.Close()
	})
	status := func(id string) JobStatus {
		t.Helper()
		got, err := s.Status(ctx, "k", id)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	submit := func(path string) string {
		t.Helper()
		job, err := s.Submit(ctx, "k", []string{srv.URL + path})
		if err != nil {
			t.Fatal(err)
		}
		return job.TrainingJobID
	}

	// (b) The job is queued while no worker runs; the first worker takes it, hangs in the
	// download, and is killed -9.
	crashed := submit("/block-crash.json")
	victim := startHelper(t, "victim", schema)
	waitFor(t, 20*time.Second, "the victim to start the job", func() bool { return len(victim.started()) == 1 })
	if got := status(crashed); got.Status != StateRunning {
		t.Fatalf("job on the victim: %+v", got)
	}
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()

	a, b := startHelper(t, "a", schema), startHelper(t, "b", schema)

	// (a) N jobs, two worker processes: each runs exactly once.
	const n = 6
	var ids []string
	for i := range n {
		ids = append(ids, submit(fmt.Sprintf("/fast-%d.json", i)))
	}
	for _, id := range ids {
		waitFor(t, 30*time.Second, "job "+id, func() bool { return status(id).Status == StateCompleted })
	}
	runs := map[string]int{}
	for _, h := range []*helper{a, b} {
		for _, id := range h.started() {
			runs[id]++
		}
	}
	for _, id := range ids {
		rec, err := store.GetJSON[jobRecord](ctx, st, store.TrainingJobs, id)
		if err != nil {
			t.Fatal(err)
		}
		if runs[id] != 1 || rec.Attempts != 1 {
			t.Errorf("job %s: started %d times by the workers, %d attempts in its record; want 1", id, runs[id], rec.Attempts)
		}
	}
	t.Logf("runs per worker: a=%d b=%d", len(a.started()), len(b.started()))

	// A job much slower than the detection time is looked at by every sweep for dead
	// workers but, its heartbeat being fresh, never run twice.
	slow := submit("/slow.json")
	waitFor(t, 20*time.Second, "a worker to start the slow job", func() bool { return status(slow).Status == StateRunning })
	slowStarted := time.Now()

	// (c) Cancel, from this process, a job running in a worker process.
	cancelled := submit("/block-cancel.json")
	waitFor(t, 20*time.Second, "a worker to start the job", func() bool { return status(cancelled).Status == StateRunning })
	if _, err := s.Cancel(ctx, "k", cancelled); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the cancelled job to fail", func() bool { return status(cancelled).Status == StateFailed })
	if got := status(cancelled); got.ErrorMessage != cancelledWhileRunning {
		t.Errorf("cancelled job: %+v", got)
	}

	// DeleteJob of a job running in a worker process cancels it there, waits, deletes.
	deleted := submit("/block-delete.json")
	waitFor(t, 20*time.Second, "a worker to start the job", func() bool { return status(deleted).Status == StateRunning })
	del, err := s.DeleteJob(ctx, "k", deleted)
	if err != nil || !del.Cancelled {
		t.Fatalf("DeleteJob = %+v, %v", del, err)
	}
	if _, err := s.Status(ctx, "k", deleted); err == nil {
		t.Errorf("deleted job still answers")
	}

	// (b) continued: the killed worker's job is run again by a survivor and completes,
	// within the detection time (about 1.5 × StaleAfter, see riverqueue) and a margin.
	var took atomic.Int64
	waitFor(t, time.Until(killedAt.Add(3*sharedStaleTest+5*time.Second)), "the crashed job to be run again", func() bool {
		took.Store(int64(time.Since(killedAt)))
		st := status(crashed).Status
		return st == StateCompleted || st == StateFailed
	})
	got := status(crashed)
	rec, _ := store.GetJSON[jobRecord](ctx, st, store.TrainingJobs, crashed)
	if got.Status != StateCompleted || rec.Attempts != 2 {
		t.Fatalf("crashed job after the rescue: %+v (attempts %d)", got, rec.Attempts)
	}
	if !a.logged("running again a job whose worker died") && !b.logged("running again a job whose worker died") {
		t.Errorf("no survivor logged running the crashed job again")
	}
	t.Logf("crashed job completed %s after its worker was killed", time.Duration(took.Load()).Round(time.Millisecond))

	time.Sleep(time.Until(slowStarted.Add(4 * sharedStaleTest)))
	releaseOnce.Do(func() { close(releaseSlow) })
	waitFor(t, 20*time.Second, "the slow job to complete", func() bool { return status(slow).Status == StateCompleted })
	rec, _ = store.GetJSON[jobRecord](ctx, st, store.TrainingJobs, slow)
	runs = map[string]int{}
	for _, h := range []*helper{a, b} {
		for _, id := range h.started() {
			runs[id]++
		}
	}
	if rec.Attempts != 1 || runs[slow] != 1 {
		t.Errorf("slow job: %d attempts, started %d times; want 1", rec.Attempts, runs[slow])
	}
	mu.Lock()
	if hits["/slow.json"] != 1 {
		t.Errorf("slow job's data fetched %d times, want 1", hits["/slow.json"])
	}
	mu.Unlock()

	// Cancel reaches a job running past River's own timeout for it (StaleAfter), when
	// River's signal no longer does: through the mark the worker's heartbeat reads.
	late := submit("/block-late.json")
	waitFor(t, 20*time.Second, "a worker to start the job", func() bool { return status(late).Status == StateRunning })
	time.Sleep(sharedStaleTest + 500*time.Millisecond)
	if _, err := s.Cancel(ctx, "k", late); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the late-cancelled job to fail", func() bool { return status(late).Status == StateFailed })
	if got := status(late); got.ErrorMessage != cancelledWhileRunning {
		t.Errorf("late-cancelled job: %+v", got)
	}
}

// TestSharedJobLimit: with a shared queue the per-owner limit counts the owner's
// unfinished jobs in the store, whichever process accepted them.
func TestSharedJobLimit(t *testing.T) {
	dsn := pgDSN(t)
	ctx := context.Background()
	schema := fmt.Sprintf("trainer_limit_%d_%d", os.Getpid(), time.Now().UnixNano())
	replica := func() *Service {
		st, q := openShared(t, dsn, schema, quietLogger())
		s, err := New(st, WithQueue(q), WithWorkers(0), WithLogger(quietLogger()), WithJobsPerOwner(2),
			WithFetcher(&fetch.Fetcher{AllowLocal: true}))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := replica(), replica()
	url := []string{"http://127.0.0.1:1/data.json"}
	first, err := a.Submit(ctx, "k", url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Submit(ctx, "k", url); err != nil {
		t.Fatal(err)
	}
	_, err = a.Submit(ctx, "k", url)
	var limit *JobLimitError
	if !errors.As(err, &limit) || limit.Active != 2 {
		t.Fatalf("third job of one owner across two processes: %v", err)
	}
	if _, err := a.Submit(ctx, "other", url); err != nil {
		t.Fatalf("another owner: %v", err)
	}
	if _, err := b.Cancel(ctx, "k", first.TrainingJobID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Submit(ctx, "k", url); err != nil {
		t.Fatalf("after a cancel freed a slot: %v", err)
	}
}

// TestSharedRecovery: when every process stopped (the queue holds nothing running), the
// first one to start finds the unfinished jobs in the store: a job left running by a dead
// worker runs again, counting the attempt, and one interrupted MaxAttempts times fails —
// restart recovery's rules.
func TestSharedRecovery(t *testing.T) {
	dsn := pgDSN(t)
	ctx := context.Background()
	schema := fmt.Sprintf("trainer_recovery_%d_%d", os.Getpid(), time.Now().UnixNano())
	srv := files(t, map[string]string{"/a.json": asJSON(syntheticRecords(30, 3))})
	st, q := openShared(t, dsn, schema, quietLogger())
	long := time.Now().Add(-time.Hour)
	put := func(id string, attempts int) {
		t.Helper()
		j := jobRecord{ID: id, Owner: "k", DataURLs: []string{srv.URL + "/a.json"}, State: StateRunning,
			CreatedAt: long, StartedAt: long, HeartbeatAt: long, Attempts: attempts}
		if err := st.Update(ctx, func(tx store.Tx) error {
			if err := store.PutJSON(ctx, tx, store.TrainingJobs, j.ID, j); err != nil {
				return err
			}
			return store.PutOwned(ctx, tx, j.ref())
		}); err != nil {
			t.Fatal(err)
		}
	}
	put("tj_crashed", 1)
	put("tj_tired", MaxAttempts)
	s, err := New(st, WithQueue(q), WithWorkers(1), WithLogger(quietLogger()), WithFetcher(&fetch.Fetcher{AllowLocal: true}))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		s.Close()
		q.Stop(sctx)
	})
	got := waitDone(t, s, "k", "tj_crashed")
	rec, _ := store.GetJSON[jobRecord](ctx, st, store.TrainingJobs, "tj_crashed")
	if got.Status != StateCompleted || rec.Attempts != 2 {
		t.Fatalf("crashed job: %+v (attempts %d)", got, rec.Attempts)
	}
	got = waitDone(t, s, "k", "tj_tired")
	if got.Status != StateFailed || !strings.Contains(got.ErrorMessage, "interrupted 3 times") {
		t.Fatalf("job interrupted MaxAttempts times: %+v", got)
	}
}
