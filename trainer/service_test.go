package trainer

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/inference"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// topics maps a model to the words of the prompts it answers best.
var topics = []struct {
	model string
	words []string
}{
	{"openai/gpt-math", strings.Fields("integral derivative equation solve algebra matrix prime factor polynomial")},
	{"anthropic/claude-code", strings.Fields("python function compile bug golang loop recursion array stack")},
	{"google/gemini-poetry", strings.Fields("poem sonnet rhyme verse haiku stanza metaphor lyric ballad")},
}

// syntheticRecords returns n rows whose correct model follows the topic of the prompt;
// one in five rows also lists a second model.
func syntheticRecords(n int, seed uint64) []Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	filler := strings.Fields("please help me with this the a and of to quickly carefully today")
	recs := make([]Record, n)
	for i := range recs {
		k := i % len(topics)
		var words []string
		for range 8 {
			words = append(words, topics[k].words[rng.IntN(len(topics[k].words))], filler[rng.IntN(len(filler))])
		}
		models := []string{topics[k].model}
		if i%5 == 0 {
			models = append(models, topics[(k+1)%len(topics)].model)
		}
		recs[i] = Record{Problem: strings.Join(words, " "), CorrectModels: models}
	}
	return recs
}

func asJSON(recs []Record) string {
	b, _ := json.Marshal(recs)
	return string(b)
}

func asCSV(recs []Record) string {
	var sb strings.Builder
	w := csv.NewWriter(&sb)
	w.Write([]string{"problem", "correct_models"})
	for _, r := range recs {
		w.Write([]string{r.Problem, strings.Join(r.CorrectModels, ",")})
	}
	w.Flush()
	return sb.String()
}

// files serves path → body from an httptest server.
func files(t *testing.T, m map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := m[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func newService(t *testing.T, st *store.Store, opts ...Option) *Service {
	t.Helper()
	if st == nil {
		st = memstore.New()
	}
	base := []Option{WithFetcher(&fetch.Fetcher{AllowLocal: true}), WithLogger(quietLogger())}
	s, err := New(st, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// waitDone polls a job until it is completed or failed.
func waitDone(t *testing.T, s *Service, owner, id string) JobStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	for {
		st, err := s.Status(ctx, owner, id)
		if err != nil {
			t.Fatal(err)
		}
		if st.Status == StateCompleted || st.Status == StateFailed {
			return st
		}
		select {
		case <-ctx.Done():
			t.Fatalf("job %s still %s", id, st.Status)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func train(t *testing.T, s *Service, owner string, urls ...string) JobStatus {
	t.Helper()
	job, err := s.Submit(context.Background(), owner, urls)
	if err != nil {
		t.Fatal(err)
	}
	if job.Status != StateQueued || job.Version == "" || !strings.HasPrefix(job.TrainingJobID, "tj_") {
		t.Fatalf("Submit = %+v", job)
	}
	return waitDone(t, s, owner, job.TrainingJobID)
}

func TestTrainAndPredictFromJSONAndCSV(t *testing.T) {
	recs := syntheticRecords(150, 1)
	srv := files(t, map[string]string{"/a.json": asJSON(recs[:75]), "/b.csv": asCSV(recs[75:])})
	ended := make(chan JobStat, 4)
	s := newService(t, nil, WithJobEnded(func(j JobStat) { ended <- j }))
	ctx := context.Background()

	st := train(t, s, "key-a", srv.URL+"/a.json", srv.URL+"/b.csv")
	if st.Status != StateCompleted {
		t.Fatalf("job failed: %s", st.ErrorMessage)
	}
	if st.ModelID == "" || st.StartedAt == "" || st.CompletedAt == "" || st.ErrorMessage != "" {
		t.Fatalf("status = %+v", st)
	}
	started, err1 := time.Parse(time.RFC3339, st.StartedAt)
	completed, err2 := time.Parse(time.RFC3339, st.CompletedAt)
	if err1 != nil || err2 != nil || completed.Before(started) {
		t.Fatalf("timestamps %q %q: %v %v", st.StartedAt, st.CompletedAt, err1, err2)
	}
	cfg := st.TrainingConfig
	if cfg == nil || cfg.Rows != 150 || cfg.SkippedRows != 0 || len(cfg.Classes) != 3 || cfg.EmbeddingModel == "" {
		t.Fatalf("training_config = %+v", cfg)
	}
	tm := cfg.Timing
	if tm.TotalTimeSeconds <= 0 || tm.TrainingTimeSeconds <= 0 || tm.EmbeddingTimeSeconds <= 0 ||
		tm.TotalTimeSeconds < tm.TrainingTimeSeconds || tm.TotalTimeSeconds < tm.EmbeddingTimeSeconds {
		t.Fatalf("timing = %+v", tm)
	}
	if cfg.HoldoutRows+cfg.TrainRows != 150 || cfg.HoldoutRows < 25 || cfg.HoldoutRows > 35 {
		t.Fatalf("split %d/%d, want about 20%% held out", cfg.TrainRows, cfg.HoldoutRows)
	}
	// Telemetry's view: the finished job with its run time and end.
	stats, err := s.JobStats(ctx)
	if err != nil || len(stats) != 1 || stats[0].ID != st.TrainingJobID || stats[0].State != "completed" ||
		stats[0].Seconds <= 0 || stats[0].Finished.IsZero() {
		t.Fatalf("job stats %+v %v", stats, err)
	}
	// The process that ran it reported its end once, as stored.
	select {
	case j := <-ended:
		if j.ID != stats[0].ID || j.State != stats[0].State || math.Abs(j.Seconds-stats[0].Seconds) > 0.01 || !j.Finished.Equal(stats[0].Finished) {
			t.Fatalf("job ended reported %+v, stored %+v", j, stats[0])
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WithJobEnded's function was not called")
	}

	d, err := s.Model(ctx, "key-a", st.ModelID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != ModelActive || d.NumClasses != 3 || d.EmbeddingModel != cfg.EmbeddingModel || d.CreatedAt == "" || d.Version == "" {
		t.Fatalf("details = %+v", d)
	}
	m := d.Metrics
	if m == nil || m.HoldoutRows != cfg.HoldoutRows {
		t.Fatalf("metrics = %+v", m)
	}
	// The topics are learnable: the router must beat always picking one model by far.
	if m.Top1HitRate < 0.9 || m.Top1HitRate <= m.BaselineTop1HitRate || m.Top3HitRate < m.Top1HitRate {
		t.Fatalf("metrics = %+v", m)
	}
	if m.BaselineTop1HitRate > 0.6 {
		t.Fatalf("baseline %v is implausible for 3 balanced topics", m.BaselineTop1HitRate)
	}
	if m.MeanScore < 0.9 || m.MeanScore <= m.BaselineMeanScore || m.Ranking == "" || m.CalibrationError <= 0 || m.CalibrationError > 0.2 {
		t.Fatalf("quality metrics = %+v", m)
	}
	// No prices known: a frontier without prices and the global default tolerance.
	if td := d.Tradeoff; td == nil || len(td.Frontier) == 0 || td.Frontier[0].MeanPrice != nil || td.DefaultTolerance != FallbackTolerance {
		t.Fatalf("tradeoff without prices = %+v", td)
	}

	inputs := []string{
		"solve this integral and derivative equation",
		"fix the bug in my python function loop",
		"write a sonnet with rhyme and verse",
	}
	resp, err := s.Predict(ctx, "key-a", st.ModelID, inputs)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Predictions) != 3 || resp.Version == "" {
		t.Fatalf("response = %+v", resp)
	}
	for i, p := range resp.Predictions {
		if p.TopModel != topics[i].model {
			t.Errorf("input %d: top model %s, want %s", i, p.TopModel, topics[i].model)
		}
		if len(p.Models) != 3 || p.Models[0].Model != p.TopModel || p.Models[0].Confidence != p.TopProb {
			t.Fatalf("prediction %d = %+v", i, p)
		}
		for k, rm := range p.Models {
			if !(rm.Confidence >= 0 && rm.Confidence <= 1) {
				t.Fatalf("prediction %d: confidence out of [0,1]: %+v", i, p.Models)
			}
			if rm.Rank != k+1 || (k > 0 && rm.Confidence > p.Models[k-1].Confidence) {
				t.Fatalf("prediction %d not ranked: %+v", i, p.Models)
			}
		}
	}
	if s.models.len() != 1 {
		t.Errorf("model cache holds %d models, want 1", s.models.len())
	}

	// Another owner sees nothing.
	if _, err := s.Status(ctx, "key-b", st.TrainingJobID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Status by another owner: %v", err)
	}
	if _, err := s.Model(ctx, "key-b", st.ModelID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Model by another owner: %v", err)
	}
	if _, err := s.Predict(ctx, "key-b", st.ModelID, inputs); !errors.Is(err, ErrNotFound) {
		t.Errorf("Predict by another owner: %v", err)
	}
	if _, err := s.Predict(ctx, "key-a", "rm_missing", inputs); !errors.Is(err, ErrNotFound) {
		t.Errorf("Predict unknown model: %v", err)
	}
}

func TestPredictValidation(t *testing.T) {
	recs := syntheticRecords(30, 2)
	srv := files(t, map[string]string{"/a.json": asJSON(recs)})
	s := newService(t, nil)
	st := train(t, s, "k", srv.URL+"/a.json")
	if st.Status != StateCompleted {
		t.Fatal(st.ErrorMessage)
	}
	ctx := context.Background()
	tooMany := make([]string, MaxInputs+1)
	for i := range tooMany {
		tooMany[i] = "x"
	}
	for _, c := range []struct {
		model  string
		inputs []string
		field  string
		text   string
	}{
		{st.ModelID, nil, "inputs", "at least one"},
		{st.ModelID, tooMany, "inputs", "at most 500"},
		{st.ModelID, []string{"a", "b", "  "}, "inputs[2]", "empty"},
		{"", []string{"a"}, "model_id", "required"},
	} {
		_, err := s.Predict(ctx, "k", c.model, c.inputs)
		var ve *ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, ErrInvalid) || ve.Field != c.field || !strings.Contains(ve.Message, c.text) {
			t.Errorf("Predict(%d inputs) error = %v, want field %s", len(c.inputs), err, c.field)
		}
	}
	// Exactly 500 inputs is fine and keeps input order.
	ok := make([]string, MaxInputs)
	for i := range ok {
		ok[i] = []string{"integral equation", "python bug", "sonnet rhyme"}[i%3]
	}
	resp, err := s.Predict(ctx, "k", st.ModelID, ok)
	if err != nil || len(resp.Predictions) != MaxInputs {
		t.Fatalf("500 inputs: %d predictions, %v", len(resp.Predictions), err)
	}
	for i := 0; i < 3; i++ {
		if resp.Predictions[i].TopModel != resp.Predictions[i+3].TopModel || resp.Predictions[i].TopModel != topics[i].model {
			t.Fatalf("predictions out of order: %s %s", resp.Predictions[i].TopModel, resp.Predictions[i+3].TopModel)
		}
	}
}

func TestSubmitValidation(t *testing.T) {
	s, err := New(memstore.New(), WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		urls  []string
		field string
	}{
		{nil, "Data_URLs"},
		{[]string{}, "Data_URLs"},
		{[]string{"https://x.test/a.json", ""}, "Data_URLs[1]"},
		{[]string{"ftp://x.test/a.csv"}, "Data_URLs[0]"},
		{[]string{"x.test/a.csv"}, "Data_URLs[0]"},
		{[]string{"file:///etc/passwd"}, "Data_URLs[0]"},
		{[]string{"http://"}, "Data_URLs[0]"},
	} {
		_, err := s.Submit(context.Background(), "k", c.urls)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("Submit(%q) error = %v, want a ValidationError on %s", c.urls, err, c.field)
		}
	}
	entries, _ := s.store.List(context.Background(), store.TrainingJobs, store.ListOptions{})
	if len(entries) != 0 {
		t.Fatalf("invalid submissions stored %d jobs", len(entries))
	}
}

func TestQueueFull(t *testing.T) {
	// Not started: nothing drains the queue.
	s, err := New(memstore.New(), WithQueueSize(2), WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 2 {
		if _, err := s.Submit(context.Background(), "k", []string{"https://x.test/a.json"}); err != nil {
			t.Fatalf("submit %d: %v", i, err)
		}
	}
	if _, err := s.Submit(context.Background(), "k", []string{"https://x.test/a.json"}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("third submit: %v, want ErrQueueFull", err)
	}
}

func TestJobFailuresNameFileAndRow(t *testing.T) {
	good := syntheticRecords(30, 3)
	oneModel := syntheticRecords(30, 3)
	for i := range oneModel {
		oneModel[i].CorrectModels = []string{"a/only"}
	}
	noCorrect := syntheticRecords(30, 3)
	for i := range noCorrect[5:] {
		noCorrect[5+i].CorrectModels = []string{}
	}
	srv := files(t, map[string]string{
		"/good.json":      asJSON(good),
		"/header.csv":     "prompt,models\nq,a/b\n",
		"/noproblem.csv":  "problem,correct_models\nq1,a/b\nq2,a/b\n,a/b\n",
		"/badmodel.json":  `[{"problem":"q","correct_models":["a/b"]},{"problem":"q","correct_models":["gpt4"]}]`,
		"/notjson.json":   "<html>oops</html>",
		"/few.json":       asJSON(good[:9]),
		"/onemodel.json":  asJSON(oneModel),
		"/nocorrect.json": asJSON(noCorrect),
	})
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL + "/gone.json"
	closed.Close()

	s := newService(t, nil, WithWorkers(2))
	for _, c := range []struct {
		urls []string
		want []string
	}{
		{[]string{srv.URL + "/good.json", srv.URL + "/header.csv"}, []string{srv.URL + "/header.csv", "line 1", "bad header"}},
		{[]string{srv.URL + "/noproblem.csv"}, []string{srv.URL + "/noproblem.csv", "line 4", "problem is empty"}},
		{[]string{srv.URL + "/badmodel.json"}, []string{srv.URL + "/badmodel.json", "record 2", `"gpt4"`, "provider/model"}},
		{[]string{srv.URL + "/notjson.json"}, []string{srv.URL + "/notjson.json", "wrong format"}},
		{[]string{srv.URL + "/missing.json"}, []string{srv.URL + "/missing.json", "404"}},
		{[]string{closedURL}, []string{closedURL}},
		{[]string{srv.URL + "/few.json"}, []string{"only 9 usable rows", "at least 10"}},
		{[]string{srv.URL + "/onemodel.json"}, []string{"a/only", "at least 2"}},
		{[]string{srv.URL + "/nocorrect.json"}, []string{"only 5 usable rows", "25 without any correct model"}},
	} {
		st := train(t, s, "k", c.urls...)
		kind := ErrorKindInvalidData
		if strings.Contains(c.urls[0], "missing") || c.urls[0] == closedURL {
			kind = ErrorKindFetch
		}
		if st.Status != StateFailed || st.ModelID != "" || st.CompletedAt == "" || st.ErrorKind != kind {
			t.Errorf("%v: status %+v, want failed with %s", c.urls, st, kind)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(st.ErrorMessage, w) {
				t.Errorf("error_message %q does not contain %q", st.ErrorMessage, w)
			}
		}
	}
	models, _ := s.store.List(context.Background(), store.RouterModels, store.ListOptions{})
	if len(models) != 0 {
		t.Fatalf("failed jobs stored %d models", len(models))
	}
}

func TestSSRFGuardFailsJob(t *testing.T) {
	srv := files(t, map[string]string{"/a.json": asJSON(syntheticRecords(30, 4))})
	s, err := New(memstore.New(), WithLogger(quietLogger())) // default fetcher: local refused
	if err != nil {
		t.Fatal(err)
	}
	s.Start(context.Background())
	defer s.Close()
	st := train(t, s, "k", srv.URL+"/a.json")
	if st.Status != StateFailed || !strings.Contains(st.ErrorMessage, "not allowed") || !strings.Contains(st.ErrorMessage, srv.URL) || st.ErrorKind != ErrorKindFetch {
		t.Fatalf("status = %+v", st)
	}
}

func TestRestartRecoversJobs(t *testing.T) {
	st := memstore.New()
	ctx := context.Background()
	release := make(chan struct{})
	var once sync.Once
	entered := make(chan struct{}, 4)
	body := asJSON(syntheticRecords(30, 5))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		select {
		case <-release:
			io.WriteString(w, body)
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()

	// First process: the job blocks in fetching; Close interrupts it and puts it back.
	s1 := newService(t, st)
	job, err := s1.Submit(ctx, "k", []string{srv.URL + "/a.json"})
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	if got, _ := s1.Status(ctx, "k", job.TrainingJobID); got.Status != StateRunning || got.StartedAt == "" {
		t.Fatalf("status while fetching = %+v", got)
	}
	s1.Close()
	if got, _ := s1.Status(ctx, "k", job.TrainingJobID); got.Status != StateQueued {
		t.Fatalf("status after Close = %+v, want queued", got)
	}

	// A process that died mid-job leaves it running; simulate one such job, plus one that
	// was interrupted too often already.
	crashed, err := store.GetJSON[jobRecord](ctx, st, store.TrainingJobs, job.TrainingJobID)
	if err != nil {
		t.Fatal(err)
	}
	// The graceful stop did not count against MaxAttempts (three deploys in a row must not
	// fail a long job).
	if crashed.Attempts != 0 {
		t.Errorf("attempts after a graceful stop = %d, want 0", crashed.Attempts)
	}
	crashed.Attempts = 1 // the crashed run's start
	crashed.State = StateRunning
	if err := store.PutJSON(ctx, st, store.TrainingJobs, crashed.ID, crashed); err != nil {
		t.Fatal(err)
	}
	tired := crashed
	tired.ID, tired.Attempts = "tj_tired", MaxAttempts
	if err := store.PutJSON(ctx, st, store.TrainingJobs, tired.ID, tired); err != nil {
		t.Fatal(err)
	}

	once.Do(func() { close(release) })
	s2 := newService(t, st)
	got := waitDone(t, s2, "k", job.TrainingJobID)
	if got.Status != StateCompleted {
		t.Fatalf("recovered job: %+v", got)
	}
	rec, _ := store.GetJSON[jobRecord](ctx, st, store.TrainingJobs, job.TrainingJobID)
	if rec.Attempts != 2 {
		t.Errorf("attempts = %d, want 2", rec.Attempts)
	}
	gt, _ := s2.Status(ctx, "k", "tj_tired")
	if gt.Status != StateFailed || !strings.Contains(gt.ErrorMessage, "interrupted") || gt.ErrorKind != ErrorKindInterrupted {
		t.Fatalf("over-interrupted job = %+v", gt)
	}
}

func TestLifecycleArchiveAndCleanup(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	srv := files(t, map[string]string{"/a.json": asJSON(syntheticRecords(30, 6))})
	st := memstore.New()
	s := newService(t, st, WithClock(clk.now))
	ctx := context.Background()
	used := train(t, s, "k", srv.URL+"/a.json").ModelID
	idle := train(t, s, "k", srv.URL+"/a.json").ModelID
	if used == "" || idle == "" {
		t.Fatal("training failed")
	}
	in := []string{"integral"}

	clk.add(200 * 24 * time.Hour)
	if _, err := s.Predict(ctx, "k", used, in); err != nil {
		t.Fatal(err)
	}
	if d, _ := s.Model(ctx, "k", used); d.LastUsedAt != clk.now().Format(time.RFC3339Nano) {
		t.Fatalf("last_used_at = %q, want %s", d.LastUsedAt, clk.now())
	}
	clk.add(200 * 24 * time.Hour) // 400 days after training, 200 after the last use
	rep, err := s.Cleanup(ctx)
	if err != nil || rep.Archived != 1 || rep.Removed != 0 {
		t.Fatalf("Cleanup = %+v, %v; want the idle model archived", rep, err)
	}
	if d, _ := s.Model(ctx, "k", idle); d.Status != ModelArchived || d.ArchivedAt == "" {
		t.Fatalf("idle model = %+v", d)
	}
	if d, _ := s.Model(ctx, "k", used); d.Status != ModelActive {
		t.Fatalf("used model = %+v", d)
	}
	_, err = s.Predict(ctx, "k", idle, in)
	if !errors.Is(err, ErrArchived) || !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "archived") {
		t.Fatalf("Predict on archived model: %v", err)
	}

	clk.add(8 * 24 * time.Hour)
	rep, err = s.Cleanup(ctx)
	if err != nil || rep.Removed != 1 || rep.Archived != 0 {
		t.Fatalf("second Cleanup = %+v, %v; want the archived model removed", rep, err)
	}
	if _, err := s.Model(ctx, "k", idle); !errors.Is(err, ErrNotFound) {
		t.Fatalf("removed model: %v", err)
	}
	if _, err := st.Get(ctx, store.RouterWeights, idle); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("weights of removed model still stored: %v", err)
	}
	if _, err := s.Predict(ctx, "k", used, in); err != nil {
		t.Fatalf("active model after cleanup: %v", err)
	}

	// Orphaned weights are reclaimed too.
	if err := st.Put(ctx, store.RouterWeights, "rm_orphan", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if rep, err := s.Cleanup(ctx); err != nil || rep.Removed != 1 {
		t.Fatalf("orphan cleanup = %+v, %v", rep, err)
	}
}

func TestModelCacheEvictsLeastRecentlyUsed(t *testing.T) {
	srv := files(t, map[string]string{"/a.json": asJSON(syntheticRecords(30, 7))})
	s := newService(t, nil, WithModelCacheSize(1))
	ctx := context.Background()
	a := train(t, s, "k", srv.URL+"/a.json").ModelID
	b := train(t, s, "k", srv.URL+"/a.json").ModelID
	for _, id := range []string{a, b, a} {
		if _, err := s.Predict(ctx, "k", id, []string{"python bug"}); err != nil {
			t.Fatal(err)
		}
		if _, _, ok := s.models.acquire(id); !ok {
			t.Fatalf("model %s not cached after use", id)
		}
		if s.models.len() != 1 {
			t.Fatalf("cache holds %d models, capacity 1", s.models.len())
		}
	}
	// Corrupt weights in the store are reported, not served, once the cache is cold.
	s.models.clear()
	if err := s.store.Put(ctx, store.RouterWeights, b, []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Predict(ctx, "k", b, []string{"x"}); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("corrupt weights: %v", err)
	}
}

func ExampleService() {
	ctx := context.Background()
	svc, _ := New(memstore.New(), WithLogger(slog.New(slog.DiscardHandler)))
	_ = svc.Start(ctx)
	defer svc.Close()
	_, err := svc.Submit(ctx, "key-1", nil)
	fmt.Println(err)
	// Output: Data_URLs: must list at least one dataset URL
}

func TestPanicInJobFailsItAndServiceGoesOn(t *testing.T) {
	srv := files(t, map[string]string{"/a.json": asJSON(syntheticRecords(30, 8))})
	panicky := true
	var mu sync.Mutex
	s := newService(t, nil, WithFitOptions(func(o *inference.FitOptions) {
		mu.Lock()
		defer mu.Unlock()
		if panicky {
			panic("boom")
		}
	}))
	st := train(t, s, "k", srv.URL+"/a.json")
	if st.Status != StateFailed || !strings.Contains(st.ErrorMessage, "internal error") || strings.Contains(st.ErrorMessage, "boom") || st.ErrorKind != ErrorKindInternal {
		t.Fatalf("status = %+v", st)
	}
	mu.Lock()
	panicky = false
	mu.Unlock()
	if st := train(t, s, "k", srv.URL+"/a.json"); st.Status != StateCompleted {
		t.Fatalf("next job: %+v", st)
	}
}

func TestSmallestAcceptedDataset(t *testing.T) {
	// Exactly MinRows usable rows and MinClasses models: the job must complete.
	recs := syntheticRecords(MinRows, 9)
	for i := range recs {
		recs[i].CorrectModels = []string{topics[i%2].model}
	}
	srv := files(t, map[string]string{"/a.csv": asCSV(recs)})
	s := newService(t, nil)
	st := train(t, s, "k", srv.URL+"/a.csv")
	if st.Status != StateCompleted {
		t.Fatalf("job: %+v", st)
	}
	d, err := s.Model(context.Background(), "k", st.ModelID)
	if err != nil || d.NumClasses != 2 || d.Metrics == nil || d.Metrics.HoldoutRows == 0 {
		t.Fatalf("details = %+v, %v", d, err)
	}
}

func TestJobsAndModelsSurviveReopeningTheDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "switchyard.db")
	srv := files(t, map[string]string{"/a.json": asJSON(syntheticRecords(30, 10))})
	ctx := context.Background()

	// First process: accepts a job but stops before any worker runs it.
	st1, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s1, err := New(st1, WithFetcher(&fetch.Fetcher{AllowLocal: true}), WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	job, err := s1.Submit(ctx, "k", []string{srv.URL + "/a.json"})
	if err != nil {
		t.Fatal(err)
	}
	s1.Close()
	st1.Close()

	// Second process: finds it queued, trains it; the model answers after a third opening.
	st2, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s2 := newService(t, st2)
	done := waitDone(t, s2, "k", job.TrainingJobID)
	if done.Status != StateCompleted {
		t.Fatalf("job: %+v", done)
	}
	s2.Close()
	st2.Close()

	st3, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st3.Close()
	s3 := newService(t, st3)
	resp, err := s3.Predict(ctx, "k", done.ModelID, []string{"python loop bug"})
	if err != nil || resp.Predictions[0].TopModel != topics[1].model {
		t.Fatalf("predict after reopening: %+v, %v", resp, err)
	}
}

// TestTradeoffFrontierInModelDetails trains on data where an expensive model answers every
// prompt and a cheap one only the easy half: the measured frontier must show a tolerance
// that keeps the quality and lowers the price, and the default tolerance must be one of
// those (within one point of the no-tradeoff quality).
func TestTradeoffFrontierInModelDetails(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	easy := strings.Fields("hello thanks greeting weather today name hi")
	hard := strings.Fields("theorem proof lemma integral topology manifold eigenvalue")
	var recs []Record
	for i := 0; i < 240; i++ {
		words, models := easy, []string{"acme/big", "acme/small"}
		if i%2 == 1 {
			words, models = hard, []string{"acme/big"}
		}
		var w []string
		for range 6 {
			w = append(w, words[rng.IntN(len(words))])
		}
		recs = append(recs, Record{Problem: strings.Join(w, " "), CorrectModels: models})
	}
	srv := files(t, map[string]string{"/d.json": asJSON(recs)})
	s := newService(t, nil, WithPrices(func(m string) (float64, bool) {
		if m == "acme/small" {
			return 0.5, true
		}
		return 0, false
	}))
	ctx := context.Background()
	job, err := s.SubmitWithOptions(ctx, "k", []string{srv.URL + "/d.json"}, JobOptions{ModelPrices: map[string]float64{"acme/big": 10}})
	if err != nil {
		t.Fatal(err)
	}
	st := waitDone(t, s, "k", job.TrainingJobID)
	if st.Status != StateCompleted {
		t.Fatalf("job failed: %s", st.ErrorMessage)
	}
	d, err := s.Model(ctx, "k", st.ModelID)
	if err != nil {
		t.Fatal(err)
	}
	td := d.Tradeoff
	if td == nil || td.Prices["acme/big"] != 10 || td.Prices["acme/small"] != 0.5 || len(td.Frontier) != len(inference.DefaultTolerances()) {
		t.Fatalf("tradeoff = %+v", td)
	}
	base := td.Frontier[0]
	// Measured on the held-out rows and on the evaluation fit's validation split (20% of
	// its training rows).
	held := d.Metrics.HoldoutRows
	if want := held + int(math.Round(0.2*float64(len(recs)-held))); base.Rows != want {
		t.Fatalf("frontier measured on %d rows, want %d (%d held out + the fit's validation split)", base.Rows, want, held)
	}
	if base.MeanPrice == nil || *base.MeanPrice < 9 {
		t.Fatalf("no-tradeoff point %+v: big should be picked almost always", base)
	}
	var chosen *inference.FrontierPoint
	for i := range td.Frontier {
		if td.Frontier[i].Tolerance == td.DefaultTolerance {
			chosen = &td.Frontier[i]
		}
	}
	if chosen == nil || chosen.MeanScore < base.MeanScore-MaxQualityLoss-1e-9 {
		t.Fatalf("default tolerance %v is not a frontier point within one point: %+v", td.DefaultTolerance, td.Frontier)
	}
	for _, fp := range td.Frontier {
		if fp.LossStdErr < 0 || (fp.MeanScore < base.MeanScore-1e-9 && fp.LossStdErr == 0) || (fp.Tolerance == 0 && fp.LossStdErr != 0) {
			t.Fatalf("frontier point %+v: loss standard error inconsistent with its loss", fp)
		}
	}
	// Half the prompts are easy: the default tolerance must buy a real saving.
	if *chosen.MeanPrice > 0.8**base.MeanPrice || chosen.Changed < 0.3 {
		t.Fatalf("default tolerance %v saves too little: %+v (base %+v)", td.DefaultTolerance, *chosen, base)
	}
	est, err := s.Estimate(ctx, "k", st.ModelID, []string{"hello greeting"})
	if err != nil || est.Tolerance != td.DefaultTolerance {
		t.Fatalf("Estimate tolerance %v, %v; want %v", est.Tolerance, err, td.DefaultTolerance)
	}
	if _, err := s.SubmitWithOptions(ctx, "k", []string{srv.URL + "/d.json"}, JobOptions{ModelPrices: map[string]float64{"acme/big": -1}}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "model_prices") {
		t.Errorf("negative price: %v", err)
	}
}

// TestTrainingBoundsClassesAndRows reproduces the memory attack of a data set whose rows
// each name a different model, and the row cap: both jobs fail fast with a message naming
// the limit, before any fit.
func TestTrainingBoundsClassesAndRows(t *testing.T) {
	var many []Record
	for i := 0; i <= MaxClasses; i++ {
		many = append(many, Record{Problem: fmt.Sprintf("prompt %d", i), CorrectModels: []string{fmt.Sprintf("p/m%d", i)}})
	}
	var b strings.Builder
	for i := 0; i <= MaxRows; i++ {
		fmt.Fprintf(&b, "{\"problem\":\"q%d\",\"correct_models\":[\"a/b\"]}\n", i)
	}
	srv := files(t, map[string]string{"/classes.json": asJSON(many), "/rows.jsonl": b.String()})
	s := newService(t, nil)
	for path, want := range map[string]string{
		"/classes.json": fmt.Sprintf("at most %d are allowed per router", MaxClasses),
		"/rows.jsonl":   fmt.Sprintf("at most %d rows are allowed", MaxRows),
	} {
		st := train(t, s, "k", srv.URL+path)
		if st.Status != StateFailed || !strings.Contains(st.ErrorMessage, want) || st.ErrorKind != ErrorKindInvalidData {
			t.Errorf("%s: %s %q (%s), want failed naming %q with invalid_data", path, st.Status, st.ErrorMessage, st.ErrorKind, want)
		}
	}
}

// TestTrainingBoundsTotalBytes: a job's files together may hold at most MaxDatasetBytes
// (each alone passes the fetcher's cap), so a job naming many large files fails before it
// holds them all.
func TestTrainingBoundsTotalBytes(t *testing.T) {
	big := `{"problem":"q","correct_models":["a/b"]}` + "\n" + strings.Repeat(" ", MaxDatasetBytes/3+1)
	srv := files(t, map[string]string{"/big.jsonl": big})
	s := newService(t, nil)
	u := srv.URL + "/big.jsonl"
	st := train(t, s, "k", u, u, u)
	if st.Status != StateFailed || !strings.Contains(st.ErrorMessage, fmt.Sprintf("at most %d MiB are allowed per training job", MaxDatasetBytes>>20)) {
		t.Fatalf("%s %q", st.Status, st.ErrorMessage)
	}
}

// TestAccuracyOnMultiLabelData: with two correct models per row, listed alphabetically,
// accuracy measures whether the router knows which models can answer (high for learnable
// topics, above the per-model-rate baseline), not whether its pick is listed first.
func TestAccuracyOnMultiLabelData(t *testing.T) {
	recs := syntheticRecords(150, 3)
	for i := range recs {
		k := i % len(topics)
		recs[i].CorrectModels = []string{topics[k].model, topics[(k+1)%len(topics)].model}
		slices.Sort(recs[i].CorrectModels)
	}
	srv := files(t, map[string]string{"/m.json": asJSON(recs)})
	s := newService(t, nil)
	st := train(t, s, "k", srv.URL+"/m.json")
	if st.Status != StateCompleted {
		t.Fatalf("job failed: %s", st.ErrorMessage)
	}
	d, err := s.Model(context.Background(), "k", st.ModelID)
	if err != nil {
		t.Fatal(err)
	}
	m := d.Metrics
	if m.Top1HitRate < 0.9 || m.Accuracy < 0.85 || m.Accuracy <= m.BaselineAccuracy+0.1 {
		t.Fatalf("top-1 %.3f accuracy %.3f baseline accuracy %.3f", m.Top1HitRate, m.Accuracy, m.BaselineAccuracy)
	}
}

// TestCleanupAtStartAndDryRun: a dry run reports what Cleanup would do and changes nothing;
// a service started with a cleanup interval runs it at once, without waiting a period.
func TestCleanupAtStartAndDryRun(t *testing.T) {
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	srv := files(t, map[string]string{"/a.json": asJSON(syntheticRecords(30, 6))})
	st := memstore.New()
	s := newService(t, st, WithClock(clk.now))
	ctx := context.Background()
	idle := train(t, s, "k", srv.URL+"/a.json").ModelID
	clk.add(400 * 24 * time.Hour)

	rep, err := s.CleanupDryRun(ctx)
	if err != nil || !rep.DryRun || rep.Archived != 1 || !slices.Equal(rep.ArchivedIDs, []string{idle}) {
		t.Fatalf("dry run = %+v, %v", rep, err)
	}
	if d, _ := s.Model(ctx, "k", idle); d.Status != ModelActive {
		t.Fatalf("the dry run changed the model: %+v", d)
	}

	// A restarted service (same store) with a weekly interval archives it at start-up.
	s2, err := New(st, WithClock(clk.now), WithLogger(quietLogger()), WithCleanupInterval(7*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, _ := s2.Model(ctx, "k", idle)
		if d.Status == ModelArchived {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not archived at start-up: %+v", d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTaskLabelsReachTheRouter trains on rows that carry task labels: the router learns
// the two tasks (model details report them and the prior's weight, one of the weights
// tried), and the same rows without labels train no task prior.
func TestTaskLabelsReachTheRouter(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	easy := strings.Fields("hello thanks greeting weather today name hi")
	hard := strings.Fields("theorem proof lemma integral topology manifold eigenvalue")
	var recs, unlabelled []Record
	for i := 0; i < 400; i++ {
		words, task, models := easy, "chat", []string{"acme/big", "acme/small"}
		if i%2 == 1 {
			words, task, models = hard, "maths", []string{"acme/big"}
		}
		if rng.IntN(5) == 0 { // noisy outcomes: the per-task mean is what is stable
			models = []string{"acme/small"}
		}
		var w []string
		for range 6 {
			w = append(w, words[rng.IntN(len(words))])
		}
		recs = append(recs, Record{Problem: strings.Join(w, " "), CorrectModels: models, Task: task})
		unlabelled = append(unlabelled, Record{Problem: strings.Join(w, " "), CorrectModels: models})
	}
	srv := files(t, map[string]string{"/tasks.json": asJSON(recs), "/plain.json": asJSON(unlabelled)})
	s := newService(t, nil)
	ctx := context.Background()
	var lastModel string
	var lastL2 float64
	metrics := func(file string) *Metrics {
		job, err := s.Submit(ctx, "k", []string{srv.URL + file})
		if err != nil {
			t.Fatal(err)
		}
		st := waitDone(t, s, "k", job.TrainingJobID)
		if st.Status != StateCompleted {
			t.Fatalf("%s: job failed: %s", file, st.ErrorMessage)
		}
		d, err := s.Model(ctx, "k", st.ModelID)
		if err != nil {
			t.Fatal(err)
		}
		lastModel = st.ModelID
		if st.TrainingConfig != nil {
			lastL2 = st.TrainingConfig.L2
		}
		return d.Metrics
	}
	m := metrics("/tasks.json")
	if m == nil || m.Tasks != 2 || !(m.TaskPriorWeight >= 0 && m.TaskPriorWeight <= 1) {
		t.Fatalf("metrics with task labels: %+v", m)
	}
	// The final router (fitted on every row without a validation split) keeps the held-out
	// fit's prior weight and calibration.
	model, release, err := s.loadModel(ctx, lastModel)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	names, w := model.Quality().Tasks()
	if (m.TaskPriorWeight > 0 || m.TaskExpertWeight > 0) != (names != nil) || w != m.TaskPriorWeight {
		t.Errorf("final router's task prior %v weight %v, metrics say %v", names, w, m.TaskPriorWeight)
	}
	// 160 training rows per task: each task gets an expert (its validation split uses
	// them), which the final router keeps at the weight the held-out fit chose.
	if n, ew := model.Quality().TaskExperts(); n != 2 || m.TaskExperts != 2 || ew == 0 || ew != m.TaskExpertWeight {
		t.Errorf("final router has %d task experts at weight %v, metrics say %d at %v", n, ew, m.TaskExperts, m.TaskExpertWeight)
	}
	if model.Quality().Calibration() == nil {
		t.Error("the final router lost the calibration")
	}
	// Ranked by the quality heads, the final router needs no softmax head; the job still
	// reports the L2 its evaluation fit chose.
	if m.Ranking != inference.RankQuality || model.Classifier() != nil || lastL2 <= 0 {
		t.Errorf("ranking %q, final router's softmax head %v, training_config l2 %v", m.Ranking, model.Classifier(), lastL2)
	}
	if m := metrics("/plain.json"); m == nil || m.Tasks != 0 || m.TaskPriorWeight != 0 {
		t.Fatalf("metrics without task labels: %+v", m)
	}
}

// TestGuardedSubmitStaysGuarded: a job accepted by a process without --allow-local-urls is
// fetched with the SSRF guard by whichever process runs it, even one that allows local URLs
// (a replica and a worker configured differently); one accepted by that process is not.
func TestGuardedSubmitStaysGuarded(t *testing.T) {
	st := memstore.New()
	ctx := context.Background()
	srv := files(t, map[string]string{"/a.json": asJSON(syntheticRecords(30, 5))})
	strict, err := New(st, WithLogger(quietLogger())) // the zero fetcher: local URLs refused
	if err != nil {
		t.Fatal(err)
	}
	job, err := strict.Submit(ctx, "k", []string{srv.URL + "/a.json"})
	if err != nil {
		t.Fatal(err)
	}
	strict.Close() // never started: the job stays queued for the next process
	s := newService(t, st)
	if got := waitDone(t, s, "k", job.TrainingJobID); got.Status != StateFailed || !strings.Contains(got.ErrorMessage, "not allowed") {
		t.Fatalf("job accepted without local URLs: %s %q", got.Status, got.ErrorMessage)
	}
	if got := train(t, s, "k", srv.URL+"/a.json"); got.Status != StateCompleted {
		t.Fatalf("job accepted with local URLs: %s %q", got.Status, got.ErrorMessage)
	}
}

// TestStartContextBoundsTheWorkers: Start's context is the workers' lifetime; once it ends,
// Submit says the service is closed instead of queueing a job no worker will run.
func TestStartContextBoundsTheWorkers(t *testing.T) {
	s, err := New(memstore.New(), WithLogger(quietLogger()), WithFetcher(&fetch.Fetcher{AllowLocal: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := s.Submit(context.Background(), "k", []string{"https://example.com/d.json"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit after Start's context ended: err %v, want ErrClosed", err)
	}
}

// TestMaxQualityLossOption: an operator's WithMaxQualityLoss is the rule the default
// tolerance is chosen by (and what the model details report).
func TestMaxQualityLossOption(t *testing.T) {
	var recs []Record
	for i := 0; i < 120; i++ {
		models := []string{"acme/big", "acme/small"}
		text := fmt.Sprintf("hello greeting number %d", i)
		if i%2 == 1 {
			models, text = []string{"acme/big"}, fmt.Sprintf("prove the theorem number %d", i)
		}
		recs = append(recs, Record{Problem: text, CorrectModels: models})
	}
	srv := files(t, map[string]string{"/d.json": asJSON(recs)})
	s := newService(t, nil, WithMaxQualityLoss(0.5))
	ctx := context.Background()
	job, err := s.SubmitWithOptions(ctx, "k", []string{srv.URL + "/d.json"}, JobOptions{ModelPrices: map[string]float64{"acme/big": 10, "acme/small": 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	st := waitDone(t, s, "k", job.TrainingJobID)
	if st.Status != StateCompleted {
		t.Fatalf("job failed: %s", st.ErrorMessage)
	}
	d, err := s.Model(ctx, "k", st.ModelID)
	if err != nil {
		t.Fatal(err)
	}
	td := d.Tradeoff
	if td == nil || td.MaxQualityLoss != 0.5 {
		t.Fatalf("tradeoff %+v, want max_quality_loss 0.5", td)
	}
	if want := inference.ChooseTolerance(td.Frontier, 0.5, FallbackTolerance); td.DefaultTolerance != want {
		t.Errorf("default tolerance %v, want %v by the 0.5 rule (frontier %+v)", td.DefaultTolerance, want, td.Frontier)
	}
}

// TestServiceMisuseSentinels: a nil store and a second Start are errors callers can tell
// apart with errors.Is.
func TestServiceMisuseSentinels(t *testing.T) {
	if _, err := New(nil); !errors.Is(err, ErrNoStore) {
		t.Errorf("New(nil): %v", err)
	}
	s := newService(t, nil)
	if err := s.Start(context.Background()); !errors.Is(err, ErrStarted) {
		t.Errorf("second Start: %v", err)
	}
}
