package optimizer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// seededRun runs one job with seed (nil: the service's) against the scripted fake LLM in a
// fresh service and returns its result and the train split's inputs (the baseline's runs:
// the first chunks, which run before any iteration), sorted.
func seededRun(t *testing.T, seed *uint64) (ModelResult, []string) {
	t.Helper()
	runner := &fakeRunner{}
	e := newEnv(t, runner, nil, WithSandboxConcurrency(2))
	e.start(t)
	req := request(e.url, 4)
	req.Seed = seed
	sub, err := e.svc.Submit(context.Background(), "alice", req)
	if err != nil {
		t.Fatal(err)
	}
	if st := waitFor(t, e.svc, sub.JobID); st.Status != StatusCompleted {
		t.Fatalf("status %+v", st)
	}
	res, err := e.svc.Results(context.Background(), "alice", sub.JobID)
	if err != nil || len(res.Results) != 1 {
		t.Fatalf("results %+v %v", res, err)
	}
	var train []string
	for _, run := range runner.allRuns()[:2] { // the baseline's two chunks
		train = append(train, run...)
	}
	slices.Sort(train)
	r := res.Results[0]
	r.AgentCodeURL = "" // a fresh token each run
	for i := range r.History {
		r.History[i].DurationMS = 0
	}
	return r, train
}

// TestJobSeedReproducesJob: a job's own seed draws its split and minibatches, and is
// reported; the same seed, bundle and scripted model give the same result, another seed
// another split, and no seed the service's (42).
func TestJobSeedReproducesJob(t *testing.T) {
	seven, eight := uint64(7), uint64(8)
	a, trainA := seededRun(t, &seven)
	b, trainB := seededRun(t, &seven)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatalf("same seed, different results:\n%s\n%s", ja, jb)
	}
	if !slices.Equal(trainA, trainB) || len(trainA) != a.TrainRows {
		t.Fatalf("same seed, different train splits (%d rows, result says %d)", len(trainA), a.TrainRows)
	}
	if a.Seed == nil || *a.Seed != 7 {
		t.Errorf("seed reported %v, want 7", a.Seed)
	}
	if a.IterationsKept == 0 {
		t.Errorf("the scripted job kept nothing: %s", ja) // the comparison above would be vacuous
	}
	c, trainC := seededRun(t, &eight)
	if slices.Equal(trainA, trainC) {
		t.Error("seeds 7 and 8 drew the same train split")
	}
	if c.Seed == nil || *c.Seed != 8 {
		t.Errorf("seed reported %v, want 8", c.Seed)
	}
	d, trainD := seededRun(t, nil)
	if d.Seed == nil || *d.Seed != DefaultSeed {
		t.Errorf("no seed: reported %v, want the service's %d", d.Seed, DefaultSeed)
	}
	train42, _ := Split(scriptedDataset(), DefaultSeed)
	var want []string
	for _, r := range train42 {
		want = append(want, r.Input)
	}
	slices.Sort(want)
	if !slices.Equal(trainD, want) {
		t.Error("no seed: the train split is not the service seed's")
	}
}

// TestJobSeedStored: the seed is kept with the queued job, so the worker that runs it (after
// a restart, or another process's) uses it, not its own service's.
func TestJobSeedStored(t *testing.T) {
	e := newEnv(t, &fakeRunner{}, nil) // not started: the job stays queued
	req := request(e.url, 1)
	req.Seed = new(uint64(123))
	sub, err := e.svc.Submit(context.Background(), "alice", req)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := store.GetJSON[job](context.Background(), e.st, store.OptimizationJobs, sub.JobID)
	if err != nil || rec.Seed == nil || *rec.Seed != 123 {
		t.Fatalf("record %+v %v", rec, err)
	}
	other := newEnv(t, &fakeRunner{}, nil, WithSeed(5))
	if got := other.svc.seedOf(&rec); got != 123 {
		t.Errorf("seedOf = %d, want the job's 123", got)
	}
	rec.Seed = nil
	if got := other.svc.seedOf(&rec); got != 5 {
		t.Errorf("seedOf without one = %d, want the service's 5", got)
	}
}

// TestResultsNameTheMetric: results name what the scores measure: the METRIC eval.py
// declares, else eval.py:score.
func TestResultsNameTheMetric(t *testing.T) {
	for _, c := range []struct{ eval, want string }{
		{"def score(expected, predicted):\n    return 1.0\n", DefaultMetric},
		{"METRIC = \"exact_match\"\n\ndef score(expected, predicted):\n    return 1.0\n", "exact_match"},
		{"METRIC: str = 'f1 over tokens'  # shown in results\ndef score(e, p):\n    return 1.0\n", "f1 over tokens"},
		{"def exact(e, p):\n    return e == p\nMETRIC = exact\ndef score(e, p):\n    return exact(e, p)\n", DefaultMetric},
		{"METRIC = \"\"\ndef score(e, p):\n    return 1.0\n", DefaultMetric},
		{"METRIC = \"" + strings.Repeat("m", 150) + "\"\ndef score(e, p):\n    return 1.0\n", strings.Repeat("m", MaxMetricName) + "..."},
	} {
		files := bundleFiles(t)
		files["eval.py"] = []byte(c.eval)
		b, err := ReadBundle(zipFiles(t, files))
		if err != nil {
			t.Fatal(err)
		}
		if b.Metric != c.want {
			t.Errorf("eval.py %q: metric %q, want %q", c.eval, b.Metric, c.want)
		}
	}

	e := newEnv(t, &fakeRunner{}, nil)
	e.start(t)
	files := bundleFiles(t)
	files["eval.py"] = append([]byte("METRIC = \"exact_match\"\n"), files["eval.py"]...)
	sub, err := e.svc.Submit(context.Background(), "alice", request(serveBytes(t, zipFiles(t, files)), 1))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, e.svc, sub.JobID)
	res, err := e.svc.Results(context.Background(), "alice", sub.JobID)
	if err != nil || len(res.Results) != 1 || res.Results[0].Metric != "exact_match" {
		t.Fatalf("results %+v %v, want metric exact_match", res, err)
	}
}

// TestSubmitChecksDataset: a dataset.json the job could not use is refused at submit, naming
// the file and the row (or what the file is), and no job is stored; a good bundle queues.
func TestSubmitChecksDataset(t *testing.T) {
	e := newEnv(t, &fakeRunner{}, nil) // not started: accepted jobs stay queued
	rows := func(extra string) string {
		var b strings.Builder
		b.WriteString("[")
		for i := range 11 {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`{"input":"upper: a","answer":"A"}`)
		}
		return b.String() + extra + "]"
	}
	for name, c := range map[string]struct{ data, want string }{
		"not JSON":     {`[{"input": "a", "answer": }]`, "dataset.json: is not valid JSON"},
		"empty file":   {"  \n", "dataset.json: is empty"},
		"empty array":  {"[]", "dataset.json: has 0 rows; at least 10 are required"},
		"object":       {`{"examples": [{"input":"a","answer":"b"}]}`, `dataset.json: is a JSON object (the rows look to be under "examples"`},
		"string":       {`"rows"`, "dataset.json: is a JSON string"},
		"JSON Lines":   {"{\"input\":\"a\",\"answer\":\"b\"}\n{\"input\":\"c\",\"answer\":\"d\"}\n", "one JSON object per line (JSON Lines)"},
		"row not obj":  {rows(`,"upper: b"`), "dataset.json: row 11 (counting from 0) must be an object with \"input\" and \"answer\", got a string"},
		"no answer":    {rows(`,{"input":"x","output":"y"}`), `dataset.json: row 11 (counting from 0) has no "answer" (its keys: "input", "output"; rename "output" to "answer")`},
		"no input":     {rows(`,{"question":"x","answer":"y"}`), `dataset.json: row 11 (counting from 0) has no "input" (its keys: "answer", "question"; rename "question" to "input")`},
		"Input":        {rows(`,{"Input":"x","answer":"y"}`), `dataset.json: row 11 (counting from 0) has no "input" (its keys: "Input", "answer"; rename "Input" to "input")`},
		"answer space": {rows(`,{"input":"x","answer ":"y"}`), `dataset.json: row 11 (counting from 0) has no "answer" (its keys: "answer ", "input"; rename "answer " to "answer")`},
		"answer null":  {rows(`,{"input":"x","answer":null}`), `dataset.json: row 11 (counting from 0): "answer" must be a string, number, boolean, object or array, got null`},
		"input null":   {rows(`,{"input":null,"answer":"y"}`), `dataset.json: row 11 (counting from 0): "input" must be a string, number, boolean, object or array, got null`},
		"too few rows": {`[{"input":"a","answer":"b"}]`, "dataset.json: has 1 rows; at least 10 are required"},
	} {
		files := bundleFiles(t)
		files["dataset.json"] = []byte(c.data)
		_, err := e.svc.Submit(context.Background(), "alice", request(serveBytes(t, zipFiles(t, files)), 1))
		var se *SubmitError
		if !errors.As(err, &se) || !errors.Is(err, ErrBundle) || se.Field() != "input_url" {
			t.Errorf("%s: err = %v, want a *SubmitError", name, err)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "input_url: invalid bundle: dataset.json: ") || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %q, want it to say %q", name, msg, c.want)
		}
	}
	page, err := e.svc.ListJobs(context.Background(), "alice", ListOptions{})
	if err != nil || len(page.Data) != 0 {
		t.Fatalf("jobs stored after refusals: %+v %v", page, err)
	}
	if _, err := e.svc.Submit(context.Background(), "alice", request(e.url, 1)); err != nil {
		t.Fatalf("a good bundle: %v", err)
	}
	if page, err := e.svc.ListJobs(context.Background(), "alice", ListOptions{}); err != nil || len(page.Data) != 1 || page.Data[0].Status != StatusQueued {
		t.Fatalf("after a good submit: %+v %v", page, err)
	}
}

// TestSubmitAtLimitFetchesNoBundle: an owner at the per-owner limit is refused before the
// bundle is downloaded, so retries at the limit cost the server no downloads.
func TestSubmitAtLimitFetchesNoBundle(t *testing.T) {
	var fetches atomic.Int32
	data := zipFiles(t, bundleFiles(t))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		w.Write(data)
	}))
	t.Cleanup(srv.Close)
	e := newEnv(t, &fakeRunner{}, nil, WithJobsPerOwner(1)) // not started: the job stays queued
	if _, err := e.svc.Submit(context.Background(), "alice", request(srv.URL, 1)); err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.Submit(context.Background(), "alice", request(srv.URL, 1))
	if !errors.Is(err, ErrTooManyJobs) || fetches.Load() != 1 {
		t.Fatalf("at the limit: %v after %d fetches, want ErrTooManyJobs after 1", err, fetches.Load())
	}
}

// TestSubmitAtLimitFetchesNoBundleSharedQueue: with a shared queue (serve on PostgreSQL)
// an owner at the per-owner limit, counted in the store, is refused before the bundle is
// downloaded too.
func TestSubmitAtLimitFetchesNoBundleSharedQueue(t *testing.T) {
	var fetches atomic.Int32
	data := zipFiles(t, bundleFiles(t))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		w.Write(data)
	}))
	t.Cleanup(srv.Close)
	e := newEnv(t, &fakeRunner{}, nil, WithQueue(minuteQueue{}), WithJobsPerOwner(1))
	if _, err := e.svc.Submit(context.Background(), "alice", request(srv.URL, 1)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, err := e.svc.Submit(context.Background(), "alice", request(srv.URL, 1))
		if !errors.Is(err, ErrTooManyJobs) {
			t.Fatalf("at the limit: %v, want ErrTooManyJobs", err)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Fatalf("%d bundle downloads, want 1 (only the accepted submission's)", n)
	}
	if _, err := e.svc.Submit(context.Background(), "bob", request(srv.URL, 1)); err != nil {
		t.Fatalf("another owner: %v", err)
	}
}

// TestSubmitBundleChecksOnePerOwner: one owner's submissions of bundles that download
// slowly take one bundle-check slot, not all of them: its others wait their turn (a
// cancelled wait ends at once) while another owner's submission is checked and queued.
func TestSubmitBundleChecksOnePerOwner(t *testing.T) {
	data := zipFiles(t, bundleFiles(t))
	var slowInflight, slowMost atomic.Int32
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := slowInflight.Add(1)
		for m := slowMost.Load(); n > m && !slowMost.CompareAndSwap(m, n); m = slowMost.Load() {
		}
		defer slowInflight.Add(-1)
		select {
		case <-release:
			w.Write(data)
		case <-r.Context().Done(): // its submission was cancelled
		}
	}))
	t.Cleanup(slow.Close)
	e := newEnv(t, &fakeRunner{}, nil, WithJobsPerOwner(100)) // not started: jobs stay queued
	const n = MaxBundleChecks
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := e.svc.Submit(context.Background(), "mallory", request(slow.URL, 1))
			errs <- err
		}()
	}
	// A waiting submission of mallory's whose caller gives up returns at once.
	cctx, cancel := context.WithCancel(context.Background())
	cancelled := make(chan error, 1)
	go func() {
		_, err := e.svc.Submit(cctx, "mallory", request(slow.URL, 1))
		cancelled <- err
	}()
	bob := make(chan error, 1)
	go func() {
		_, err := e.svc.Submit(context.Background(), "bob", request(e.url, 1))
		bob <- err
	}()
	// Without a line per owner mallory's downloads take every slot and bob waits for them.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second) // guards a hang only
wait:
	for {
		select {
		case err := <-bob:
			if err != nil {
				t.Fatalf("bob: %v", err)
			}
			break wait
		case <-tick.C:
			if m := slowMost.Load(); m > 1 {
				t.Fatalf("mallory had %d bundle downloads at once, want 1", m)
			}
		case <-deadline:
			t.Fatal("bob's submission never finished")
		}
	}
	cancel()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiting submission: %v, want context.Canceled", err)
	}
	close(release)
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if m := slowMost.Load(); m != 1 {
		t.Fatalf("mallory had %d bundle downloads at once, want 1", m)
	}
	e.svc.mu.Lock()
	lines := len(e.svc.checkLines)
	e.svc.mu.Unlock()
	if lines != 0 {
		t.Fatalf("%d owners' check lines left after every submission ended", lines)
	}
}

// TestSubmitBoundsBundleChecks: at most MaxBundleChecks bundles are downloaded at once by
// concurrent submissions; the others wait their turn and then succeed.
func TestSubmitBoundsBundleChecks(t *testing.T) {
	data := zipFiles(t, bundleFiles(t))
	var inflight, most atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inflight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		inflight.Add(-1)
		w.Write(data)
	}))
	t.Cleanup(srv.Close)
	e := newEnv(t, &fakeRunner{}, nil, WithJobsPerOwner(100)) // not started: jobs stay queued
	const n = MaxBundleChecks + 2
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := e.svc.Submit(context.Background(), fmt.Sprintf("owner-%d", i), request(srv.URL, 1))
			errs <- err
		}()
	}
	// Let the downloads pile up: a check that does not bound them would have all n in flight.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) && most.Load() <= MaxBundleChecks {
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if m := most.Load(); m != MaxBundleChecks {
		t.Fatalf("%d bundle downloads at once, want %d", m, MaxBundleChecks)
	}
}

// TestStatusCarriesBestPrompt: status names the best prompt so far of the model in
// progress once its baseline is measured: absent while queued, the result's optimized
// prompt at the end.
func TestStatusCarriesBestPrompt(t *testing.T) {
	e := newEnv(t, &fakeRunner{}, nil)
	sub, err := e.svc.Submit(context.Background(), "alice", request(e.url, 3))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := e.svc.Status(context.Background(), "alice", sub.JobID); err != nil || st.BestPrompt != "" {
		t.Fatalf("queued: %+v %v", st, err)
	}
	e.start(t)
	st := waitFor(t, e.svc, sub.JobID)
	res, err := e.svc.Results(context.Background(), "alice", sub.JobID)
	if err != nil || len(res.Results) != 1 {
		t.Fatal(res, err)
	}
	r := res.Results[0]
	if r.IterationsKept == 0 || st.BestPrompt != r.OptimizedPrompt || st.BestPrompt == r.OriginalPrompt {
		t.Fatalf("status best_prompt %q, want the optimized %q (kept %d)", st.BestPrompt, r.OptimizedPrompt, r.IterationsKept)
	}
}
