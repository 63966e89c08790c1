package server

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/jobqueue/riverqueue"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/pgstore"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
	"github.com/switchyard-ai/switchyard/trainer"
)

// trainingReplica is one Switchyard process on the shared PostgreSQL database (schema):
// its own pool, River queue, trainer with workers training jobs and HTTP server, as
// serve --store postgres runs it (workers 0: an HTTP-only replica). The trainer's log is
// kept in the returned buffer.
func trainingReplica(t *testing.T, dsn, schema string, workers int) (http.Handler, *store.Store, *lockedBuffer) {
	t.Helper()
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	d, err := pgstore.OpenDriver(ctx, dsn, pgstore.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(d)
	t.Cleanup(func() { st.Close() })
	q, err := riverqueue.Open(ctx, d.Pool(), riverqueue.Options{Schema: schema, StaleAfter: 2 * time.Second,
		RetryDelay: 100 * time.Millisecond, PollInterval: 200 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	log := &lockedBuffer{}
	svc, err := trainer.New(st, trainer.WithQueue(q), trainer.WithWorkers(workers), trainer.WithLogger(slog.New(slog.NewTextHandler(log, nil))),
		trainer.WithFetcher(&fetch.Fetcher{AllowLocal: true}))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Store: st, APIKeys: []string{testKey}, Logger: quiet}, CustomRouters(svc))
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		srv.Close(sctx)
		q.Stop(sctx)
	})
	return srv, st, log
}

// A training job whose dataset is uploaded (multipart) to an HTTP-only replica is run by
// another replica's worker (and only there) through the shared PostgreSQL queue: the worker reads the file
// from the shared store, the job completes, both replicas show it (with its upload's
// name, size and format) and predict with its router, and the file is gone from the
// store once the job ended. For a records CSV and for Not Diamond's joint CSV.
func TestTrainingUploadRunsOnAnotherReplicaPostgres(t *testing.T) {
	dsn := drivertest.PostgresDSN(t)
	schema := drivertest.FreshSchema("train_upload")
	accepting, st, acceptingLog := trainingReplica(t, dsn, schema, 0)
	worker, _, workerLog := trainingReplica(t, dsn, schema, 1)
	records, err := os.ReadFile(filepath.Join("..", "examples", "data", "routing_train.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// A records file over trainer.UploadChunkSize, kept in several pieces: the original
	// rows, repeated with long distinct questions.
	rows, err := csv.NewReader(bytes.NewReader(records)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var big bytes.Buffer
	w := csv.NewWriter(&big)
	w.Write(rows[0])
	for i := 0; big.Len() <= 2*trainer.UploadChunkSize+1000; i++ {
		r := rows[1+i%(len(rows)-1)]
		w.Write([]string{fmt.Sprintf("%s (variant %d: %s)", r[0], i, strings.Repeat("padding ", 1200)), r[1]})
		w.Flush()
	}
	for _, c := range []struct {
		name, filename, format string
		fields                 [][2]string
		data                   []byte
		input                  string
	}{
		{"records CSV", "routing_train.csv", "csv", nil, records, "What is the capital of France?"},
		{"records CSV in three pieces", "big.csv", "csv", nil, big.Bytes(), "What is the capital of France?"},
		{"Not Diamond's joint CSV", "joint.csv", "notdiamond", [][2]string{{"format", "notdiamond"}, {"prompt_column", "question"}},
			ndJointCSV(t, 60, false), "solve the integral of this polynomial"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctype, body := multipartBody(t, c.fields, "file", c.filename, c.data)
			r := postTrainForm(t, accepting, "/api/v1/routers/train/upload", testKey, ctype, body)
			if r.status != http.StatusAccepted {
				t.Fatalf("upload: %d %s", r.status, r.raw)
			}
			id, _ := r.body["training_job_id"].(string)
			done := (&routersEnv{h: accepting}).waitJob(t, testKey, id)
			if done.body["status"] != "completed" {
				t.Fatalf("job on the accepting replica: %s", done.raw)
			}
			started := fmt.Sprintf(`msg="trainer: job started" job=%s `, id)
			if !strings.Contains(workerLog.String(), started) || strings.Contains(acceptingLog.String(), started) {
				t.Errorf("the job did not run on the worker replica alone; worker's log:\n%s\naccepting replica's log:\n%s", workerLog, acceptingLog)
			}
			modelID, _ := done.body["model_id"].(string)
			for name, h := range map[string]http.Handler{"accepting": accepting, "worker": worker} {
				s := do(t, h, "GET", "/api/v1/routers/train/status?task_id="+id, testKey, "")
				up, _ := s.body["upload"].(map[string]any)
				if s.status != http.StatusOK || s.body["status"] != "completed" || s.body["model_id"] != modelID ||
					up["filename"] != c.filename || up["format"] != c.format || up["bytes"] != float64(len(c.data)) {
					t.Errorf("status on the %s replica: %d %s", name, s.status, s.raw)
				}
				p := do(t, h, "POST", "/api/v1/routers/predict", testKey, fmt.Sprintf(`{"model_id": %q, "inputs": [%q]}`, modelID, c.input))
				if p.status != http.StatusOK {
					t.Errorf("predict on the %s replica: %d %s", name, p.status, p.raw)
				}
			}
			for name, h := range map[string]http.Handler{"accepting": accepting, "worker": worker} {
				if l := do(t, h, "GET", "/api/v1/routers/train/jobs", testKey, ""); l.status != http.StatusOK || !strings.Contains(l.raw, id) {
					t.Errorf("the jobs listed on the %s replica: %d %s", name, l.status, l.raw)
				}
			}
			left, err := st.List(context.Background(), store.TrainingUploads, store.ListOptions{Prefix: id + "/"})
			if err != nil || len(left) != 0 {
				t.Errorf("%d pieces of the uploaded file left after the job (%v), want none", len(left), err)
			}
		})
	}
}
