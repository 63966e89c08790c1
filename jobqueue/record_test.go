package jobqueue_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// testRecord is a job record as a job service stores it.
type testRecord struct {
	ID        string    `json:"id"`
	Owner     string    `json:"owner"`
	State     string    `json:"state"`
	Attempts  int       `json:"attempts"`
	Started   time.Time `json:"started"`
	Heartbeat time.Time `json:"heartbeat"`
	Cancel    bool      `json:"cancel"`
}

func (r *testRecord) Unfinished() bool         { return r.State == "queued" || r.State == "running" }
func (r *testRecord) Running() bool            { return r.State == "running" }
func (r *testRecord) Attempt() int             { return r.Attempts }
func (r *testRecord) CancelAsked() bool        { return r.Cancel }
func (r *testRecord) SetHeartbeat(t time.Time) { r.Heartbeat = t }
func (r *testRecord) LastSeen() time.Time {
	if r.Heartbeat.IsZero() {
		return r.Started
	}
	return r.Heartbeat
}

const testJobs = store.TrainingJobs

func putRecord(t *testing.T, st *store.Store, r testRecord) {
	t.Helper()
	ctx := context.Background()
	if err := store.PutJSON(ctx, st, testJobs, r.ID, r); err != nil {
		t.Fatal(err)
	}
	if err := store.PutOwned(ctx, st, store.OwnedRef{Kind: "test_job", Owner: r.Owner, ID: r.ID, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
}

func TestHeartbeatRefreshesOnlyItsOwnRun(t *testing.T) {
	st := memstore.New()
	ctx := context.Background()
	putRecord(t, st, testRecord{ID: "j", Owner: "o", State: "running", Attempts: 2})
	lost, cancelled, err := jobqueue.Heartbeat[testRecord](st, testJobs, "j", 2)(ctx)
	got, _ := store.GetJSON[testRecord](ctx, st, testJobs, "j")
	if err != nil || lost || cancelled || got.Heartbeat.IsZero() {
		t.Fatalf("own run: lost %v cancelled %v err %v heartbeat %v", lost, cancelled, err, got.Heartbeat)
	}
	// A cancel request is reported; another attempt's record is lost to this run and kept.
	putRecord(t, st, testRecord{ID: "j", Owner: "o", State: "running", Attempts: 3, Cancel: true})
	if lost, _, _ := jobqueue.Heartbeat[testRecord](st, testJobs, "j", 2)(ctx); !lost {
		t.Error("a run taken over by attempt 3 is not lost")
	}
	if got, _ := store.GetJSON[testRecord](ctx, st, testJobs, "j"); !got.Heartbeat.IsZero() {
		t.Error("the old run refreshed the new run's heartbeat")
	}
	if _, cancelled, _ := jobqueue.Heartbeat[testRecord](st, testJobs, "j", 3)(ctx); !cancelled {
		t.Error("the cancel request was not reported")
	}
	if lost, _, _ := jobqueue.Heartbeat[testRecord](st, testJobs, "gone", 1)(ctx); !lost {
		t.Error("a deleted job is not lost")
	}
}

func TestCountUnfinishedAndEnqueueUnfinished(t *testing.T) {
	st := memstore.New()
	ctx := context.Background()
	for i, state := range []string{"queued", "running", "completed", "failed", "queued"} {
		putRecord(t, st, testRecord{ID: string(rune('a' + i)), Owner: "o", State: state})
	}
	putRecord(t, st, testRecord{ID: "x", Owner: "other", State: "queued"})
	if n, err := jobqueue.CountUnfinished[testRecord](ctx, st, testJobs, "test_job", "o", 10); err != nil || n != 3 {
		t.Errorf("CountUnfinished = %d, %v; want 3", n, err)
	}
	if n, _ := jobqueue.CountUnfinished[testRecord](ctx, st, testJobs, "test_job", "o", 2); n != 2 {
		t.Errorf("CountUnfinished up to 2 = %d", n)
	}
	if n, err := jobqueue.CountUnfinished[testRecord](ctx, st, testJobs, "test_job", "o", 0); n != 0 || err != nil {
		t.Errorf("CountUnfinished up to 0 = %d, %v", n, err)
	}
	q := &recordingQueue{}
	if err := jobqueue.EnqueueUnfinished[testRecord](ctx, st, testJobs, q, "k"); err != nil {
		t.Fatal(err)
	}
	if got := len(q.ids); got != 4 {
		t.Errorf("enqueued %v, want the 4 unfinished jobs", q.ids)
	}
	if jobqueue.IsStale(nil, &testRecord{State: "running"}) {
		t.Error("a job is stale without a queue")
	}
	if !jobqueue.IsStale(q, &testRecord{State: "running", Started: time.Now().Add(-time.Hour)}) ||
		jobqueue.IsStale(q, &testRecord{State: "running", Heartbeat: time.Now()}) {
		t.Error("IsStale does not follow the heartbeat")
	}
}

// recordingQueue is a jobqueue.Queue that only records what is enqueued.
type recordingQueue struct{ ids []string }

func (q *recordingQueue) Register(string, jobqueue.Kind) error { return nil }
func (q *recordingQueue) Enqueue(_ context.Context, _ string, id string) error {
	q.ids = append(q.ids, id)
	return nil
}
func (q *recordingQueue) Cancel(context.Context, string, string) error { return nil }
func (q *recordingQueue) StaleAfter() time.Duration                    { return time.Minute }
