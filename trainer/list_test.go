package trainer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// tickingClock advances by step on every reading, so every record gets its own time.
type tickingClock struct {
	clock
	step time.Duration
}

func (c *tickingClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

// listAllJobs pages through owner's jobs and fails on a repeated id.
func listAllJobs(t *testing.T, s *Service, owner string, opts ListOptions) []JobStatus {
	t.Helper()
	var out []JobStatus
	seen := map[string]bool{}
	for range 100 {
		page, err := s.ListJobs(context.Background(), owner, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range page.Data {
			if seen[j.TrainingJobID] {
				t.Fatalf("job %s listed twice", j.TrainingJobID)
			}
			seen[j.TrainingJobID] = true
			out = append(out, j)
		}
		if page.NextCursor == "" {
			return out
		}
		opts.Cursor = page.NextCursor
	}
	t.Fatal("paging does not end")
	return nil
}

func ids(js []JobStatus) []string {
	out := make([]string, len(js))
	for i, j := range js {
		out[i] = j.TrainingJobID
	}
	return out
}

func indexEntries(t *testing.T, st *store.Store, kind string) []string {
	t.Helper()
	es, err := st.List(context.Background(), store.OwnerIndex, store.ListOptions{Prefix: kind + "/"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Key)
	}
	return out
}

// TestListAndDeleteJobs lists jobs across pages newest first with filters, keeps keys
// apart, and deletes a queued job for good.
func TestListAndDeleteJobs(t *testing.T) {
	clk := &tickingClock{clock: clock{t: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}, step: time.Second}
	st := memstore.New()
	// Not started: jobs stay queued until cancelled.
	s, err := New(st, WithClock(clk.now), WithLogger(quietLogger()), WithJobsPerOwner(100), WithQueueSize(100))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var alice []string // newest first
	var created []time.Time
	for i := range 25 {
		j, err := s.Submit(ctx, "alice", []string{fmt.Sprintf("https://example.com/%d.json", i)})
		if err != nil {
			t.Fatal(err)
		}
		alice = append([]string{j.TrainingJobID}, alice...)
		stat, _ := s.Status(ctx, "alice", j.TrainingJobID)
		at, _ := time.Parse(time.RFC3339Nano, stat.CreatedAt)
		created = append(created, at)
		if i < 3 {
			if _, err := s.Submit(ctx, "bob", []string{"https://example.com/b.json"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Every third of alice's jobs (in submission order) is cancelled: failed.
	failed := map[string]bool{}
	for i := 0; i < 25; i += 3 {
		id := alice[24-i]
		if _, err := s.Cancel(ctx, "alice", id); err != nil {
			t.Fatal(err)
		}
		failed[id] = true
	}

	for _, limit := range []int{0, 1, 4, 24, 25, 100} {
		got := ids(listAllJobs(t, s, "alice", ListOptions{Limit: limit}))
		if fmt.Sprint(got) != fmt.Sprint(alice) {
			t.Fatalf("limit %d:\n got %v\nwant %v", limit, got, alice)
		}
	}
	first, _ := s.ListJobs(ctx, "alice", ListOptions{})
	if len(first.Data) != 20 || first.NextCursor == "" {
		t.Fatalf("default page: %d jobs, cursor %q", len(first.Data), first.NextCursor)
	}
	bob := listAllJobs(t, s, "bob", ListOptions{Limit: 2})
	if len(bob) != 3 {
		t.Fatalf("bob sees %d jobs", len(bob))
	}
	for _, j := range bob {
		if strings.Contains(fmt.Sprint(alice), j.TrainingJobID) {
			t.Fatalf("bob's listing has alice's job %s", j.TrainingJobID)
		}
	}
	if got := listAllJobs(t, s, "carol", ListOptions{}); len(got) != 0 {
		t.Fatalf("carol sees %v", ids(got))
	}

	// Status filter.
	var wantFailed, wantQueued []string
	for _, id := range alice {
		if failed[id] {
			wantFailed = append(wantFailed, id)
		} else {
			wantQueued = append(wantQueued, id)
		}
	}
	if got := ids(listAllJobs(t, s, "alice", ListOptions{Status: []string{"failed"}, Limit: 2})); fmt.Sprint(got) != fmt.Sprint(wantFailed) {
		t.Fatalf("failed:\n got %v\nwant %v", got, wantFailed)
	}
	if got := ids(listAllJobs(t, s, "alice", ListOptions{Status: []string{"queued", "running"}, Limit: 5})); fmt.Sprint(got) != fmt.Sprint(wantQueued) {
		t.Fatalf("queued:\n got %v\nwant %v", got, wantQueued)
	}
	// Time window [created[5], created[10]): jobs 5..9, newest first.
	got := ids(listAllJobs(t, s, "alice", ListOptions{CreatedAfter: created[5], CreatedBefore: created[10], Limit: 2}))
	if fmt.Sprint(got) != fmt.Sprint(alice[15:20]) {
		t.Fatalf("window:\n got %v\nwant %v", got, alice[15:20])
	}

	// Bad options name their field.
	for field, opts := range map[string]ListOptions{
		"status":        {Status: []string{"done"}},
		"limit":         {Limit: 101},
		"cursor":        {Cursor: "garbage!"},
		"created_after": {CreatedAfter: created[3], CreatedBefore: created[2]},
	} {
		_, err := s.ListJobs(ctx, "alice", opts)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != field || !errors.Is(err, ErrInvalid) {
			t.Fatalf("%s: err = %v", field, err)
		}
	}

	// Delete: another key's id is not found; a queued job is cancelled and removed with its
	// index entry; then it is not found.
	victim := wantQueued[3]
	if _, err := s.DeleteJob(ctx, "bob", victim); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete by another key: %v", err)
	}
	before := len(indexEntries(t, st, jobKind))
	d, err := s.DeleteJob(ctx, "alice", victim)
	if err != nil || !d.Deleted || !d.Cancelled || d.ID != victim || d.Object != "training_job" {
		t.Fatalf("DeleteJob = %+v, %v", d, err)
	}
	if _, err := st.Get(ctx, store.TrainingJobs, victim); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("job record still stored: %v", err)
	}
	if after := indexEntries(t, st, jobKind); len(after) != before-1 || strings.Contains(fmt.Sprint(after), victim) {
		t.Fatalf("index entries: %d before, %v after", before, after)
	}
	if _, err := s.Status(ctx, "alice", victim); !errors.Is(err, ErrNotFound) {
		t.Fatalf("status after delete: %v", err)
	}
	if _, err := s.DeleteJob(ctx, "alice", victim); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if got := ids(listAllJobs(t, s, "alice", ListOptions{Limit: 7})); len(got) != 24 || strings.Contains(fmt.Sprint(got), victim) {
		t.Fatalf("listing after delete: %v", got)
	}
	// A finished job is deleted without cancelling.
	if d, err := s.DeleteJob(ctx, "alice", wantFailed[0]); err != nil || d.Cancelled {
		t.Fatalf("delete failed job: %+v %v", d, err)
	}
	// The deleted queued job no longer counts against the key and is skipped when the
	// workers start.
	s.mu.Lock()
	_, pending := s.pending[victim]
	s.mu.Unlock()
	if pending {
		t.Fatal("deleted job still counted as pending")
	}
}

// TestDeleteRunningJob deletes a job stalled in its download: the delete cancels it,
// waits for it to stop and removes it; nothing brings it back.
func TestDeleteRunningJob(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	st := memstore.New()
	s := newService(t, st, WithFetcher(&fetch.Fetcher{AllowLocal: true, IdleTimeout: time.Minute}))
	ctx := context.Background()
	job, err := s.Submit(ctx, "k", []string{srv.URL + "/stalls.json"})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if st, _ := s.Status(ctx, "k", job.TrainingJobID); st.Status != StateRunning {
		t.Fatalf("job is %s, want running", st.Status)
	}
	d, err := s.DeleteJob(ctx, "k", job.TrainingJobID)
	if err != nil || !d.Cancelled {
		t.Fatalf("DeleteJob = %+v, %v", d, err)
	}
	time.Sleep(50 * time.Millisecond) // anything the job would still write
	if _, err := st.Get(ctx, store.TrainingJobs, job.TrainingJobID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("running job came back after its delete: %v", err)
	}
	if n := len(indexEntries(t, st, jobKind)); n != 0 {
		t.Fatalf("%d index entries left", n)
	}
	s.jobMu.Lock()
	n := len(s.running) + len(s.runDone)
	s.jobMu.Unlock()
	if n != 0 {
		t.Fatal("the deleted job is still registered as running")
	}
}

// TestListAndDeleteModels lists models newest first with the status filter, and deletes
// one: record, weights, index entry and cached copy go; it answers not found everywhere.
func TestListAndDeleteModels(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	srv := files(t, map[string]string{"/a.json": asJSON(syntheticRecords(30, 9))})
	st := memstore.New()
	s := newService(t, st, WithClock(clk.now))
	ctx := context.Background()
	var models []string // newest first
	for range 3 {
		clk.add(time.Minute)
		m := train(t, s, "alice", srv.URL+"/a.json").ModelID
		if m == "" {
			t.Fatal("training failed")
		}
		models = append([]string{m}, models...)
	}
	clk.add(time.Minute)
	other := train(t, s, "bob", srv.URL+"/a.json").ModelID

	var got []string
	cursor := ""
	for {
		page, err := s.ListModels(ctx, "alice", ListOptions{Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page.Data {
			got = append(got, m.ModelID)
			if m.Status != ModelActive || m.NumClasses != 3 || m.Metrics == nil || m.TrainingJobID == "" || m.CreatedAt == "" {
				t.Fatalf("summary %+v", m)
			}
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(models) {
		t.Fatalf("models:\n got %v\nwant %v", got, models)
	}
	if page, _ := s.ListModels(ctx, "bob", ListOptions{}); len(page.Data) != 1 || page.Data[0].ModelID != other {
		t.Fatalf("bob's models: %+v", page.Data)
	}

	// Archive the oldest two (unused for a year), keep the newest in use.
	clk.add(200 * 24 * time.Hour)
	if _, err := s.Predict(ctx, "alice", models[0], []string{"integral"}); err != nil {
		t.Fatal(err)
	}
	clk.add(200 * 24 * time.Hour)
	if _, err := s.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	if page, _ := s.ListModels(ctx, "alice", ListOptions{Status: []string{"archived"}}); len(page.Data) != 2 || page.Data[0].ModelID != models[1] {
		t.Fatalf("archived: %+v", page.Data)
	}
	if page, _ := s.ListModels(ctx, "alice", ListOptions{Status: []string{"active"}}); len(page.Data) != 1 || page.Data[0].ModelID != models[0] {
		t.Fatalf("active: %+v", page.Data)
	}
	if _, err := s.ListModels(ctx, "alice", ListOptions{Status: []string{"queued"}}); err == nil {
		t.Fatal("a job state accepted as a model status")
	}

	// Delete the model in use: it was in the model cache.
	victim := models[0]
	if s.models.len() == 0 {
		t.Fatal("the used model is not cached")
	}
	if _, err := s.DeleteModel(ctx, "bob", victim); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete by another key: %v", err)
	}
	d, err := s.DeleteModel(ctx, "alice", victim)
	if err != nil || !d.Deleted || d.Object != "router_model" || d.ID != victim {
		t.Fatalf("DeleteModel = %+v, %v", d, err)
	}
	for _, c := range []store.Collection{store.RouterModels, store.RouterWeights} {
		if _, err := st.Get(ctx, c, victim); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%s of the deleted model still stored: %v", c, err)
		}
	}
	if strings.Contains(fmt.Sprint(indexEntries(t, st, modelKind)), victim) {
		t.Fatal("index entry of the deleted model left")
	}
	s.models.mu.Lock()
	_, cached := s.models.byID[victim]
	s.models.mu.Unlock()
	if cached {
		t.Fatal("deleted model still in the model cache")
	}
	if _, err := s.Model(ctx, "alice", victim); !errors.Is(err, ErrNotFound) {
		t.Fatalf("details after delete: %v", err)
	}
	if _, err := s.Predict(ctx, "alice", victim, []string{"integral"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("predict after delete: %v", err)
	}
	if _, err := s.DeleteModel(ctx, "alice", victim); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	// Archived models can be deleted too; the training job stays.
	if _, err := s.DeleteModel(ctx, "alice", models[2]); err != nil {
		t.Fatal(err)
	}
	if page, _ := s.ListModels(ctx, "alice", ListOptions{}); len(page.Data) != 1 || page.Data[0].ModelID != models[1] {
		t.Fatalf("after deletes: %+v", page.Data)
	}
	if jobs, _ := s.ListJobs(ctx, "alice", ListOptions{}); len(jobs.Data) != 3 {
		t.Fatalf("jobs after model deletes: %d", len(jobs.Data))
	}

	// The weekly cleanup removes the index entries with the models (alice's archived one
	// and bob's, unused too).
	clk.add(8 * 24 * time.Hour)
	if rep, err := s.Cleanup(ctx); err != nil || rep.Removed != 2 {
		t.Fatalf("cleanup: %+v %v", rep, err)
	}
	if n := indexEntries(t, st, modelKind); len(n) != 0 {
		t.Fatalf("index entries left after cleanup: %v", n)
	}
}

// TestListIndexesRecordsStoredBeforeTheIndex lists jobs and models written without index
// entries (by an older version).
func TestListIndexesRecordsStoredBeforeTheIndex(t *testing.T) {
	st := memstore.New()
	ctx := context.Background()
	t0 := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		j := jobRecord{ID: fmt.Sprintf("tj_old%d", i), Owner: "k", State: StateCompleted, CreatedAt: t0.Add(time.Duration(i) * time.Hour)}
		if err := store.PutJSON(ctx, st, store.TrainingJobs, j.ID, j); err != nil {
			t.Fatal(err)
		}
		m := modelRecord{ID: fmt.Sprintf("rm_old%d", i), Owner: "k", State: ModelActive, CreatedAt: j.CreatedAt}
		if err := store.PutJSON(ctx, st, store.RouterModels, m.ID, m); err != nil {
			t.Fatal(err)
		}
	}
	s := newService(t, st)
	jobs, err := s.ListJobs(ctx, "k", ListOptions{})
	if err != nil || fmt.Sprint(ids(jobs.Data)) != "[tj_old2 tj_old1 tj_old0]" {
		t.Fatalf("jobs: %v %v", ids(jobs.Data), err)
	}
	models, err := s.ListModels(ctx, "k", ListOptions{})
	if err != nil || len(models.Data) != 3 || models.Data[0].ModelID != "rm_old2" {
		t.Fatalf("models: %+v %v", models.Data, err)
	}
}
