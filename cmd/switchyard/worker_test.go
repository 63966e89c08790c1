package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchyard-ai/switchyard/client"
)

// TestWorkerNeedsPostgres: with the bbolt store a worker process cannot share jobs, and an
// HTTP-only serve (--workers 0) would never run any: both are refused with the reason, as
// command line errors (exit 2).
func TestWorkerNeedsPostgres(t *testing.T) {
	code, _, errOut := cli(t, "worker", "--data", t.TempDir())
	if code != 2 || !strings.Contains(errOut, "a worker needs a shared PostgreSQL store") || !strings.Contains(errOut, "bbolt is one process") {
		t.Fatalf("worker with bbolt: %d %s", code, errOut)
	}
	code, _, errOut = cli(t, "serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--workers", "0")
	if code != 2 || !strings.Contains(errOut, "--workers must be at least 1 with the bbolt store") {
		t.Fatalf("serve --workers 0 with bbolt: %d %s", code, errOut)
	}
	code, _, errOut = cli(t, "serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--store", "mysql://x")
	if code != 2 || !strings.Contains(errOut, "give a postgres:// URL") {
		t.Fatalf("serve --store mysql: %d %s", code, errOut)
	}
}

// TestServeAndWorkerShareJobs: `serve --workers 0` on PostgreSQL accepts a training job
// and `switchyard worker` on the same database runs it; so it does a job whose dataset is
// uploaded with the request (the worker reads the file from the shared store), which then
// shows as completed, with its upload, on serve.
func TestServeAndWorkerShareJobs(t *testing.T) {
	dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("SWITCHYARD_TEST_POSTGRES is not set: scripts/pg-test-cluster.sh starts a throwaway PostgreSQL cluster and prints it (needs the Debian package postgresql)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	schema := fmt.Sprintf("cmd_worker_%d_%d", os.Getpid(), time.Now().UnixNano())
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+schema); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	qs := u.Query()
	qs.Set("search_path", schema)
	u.RawQuery = qs.Encode()
	t.Setenv("SWITCHYARD_STORE", u.String())
	t.Setenv("SWITCHYARD_API_KEYS", "k")
	t.Setenv("SWITCHYARD_JOB_STALE_AFTER", "2s")

	data := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("..", "..", "examples", "data"))))
	defer data.Close()

	serveErr, workerErr := &syncBuffer{}, &syncBuffer{}
	serveDone, workerDone := make(chan int, 1), make(chan int, 1)
	go func() {
		serveDone <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--workers", "0", "--allow-local-urls"}, &syncBuffer{}, serveErr)
	}()
	go func() {
		workerDone <- run(ctx, []string{"worker", "--data", t.TempDir(), "--allow-local-urls"}, &syncBuffer{}, workerErr)
	}()
	var addr string
	deadline := time.Now().Add(30 * time.Second)
	for addr == "" || !strings.Contains(workerErr.String(), "switchyard worker running") {
		if m := addrRe.FindStringSubmatch(serveErr.String()); m != nil {
			addr = m[1]
		}
		select {
		case code := <-serveDone:
			t.Fatalf("serve exited with %d: %s", code, serveErr.String())
		case code := <-workerDone:
			t.Fatalf("worker exited with %d: %s", code, workerErr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("not started:\nserve: %s\nworker: %s", serveErr.String(), workerErr.String())
		}
	}
	if !strings.Contains(serveErr.String(), "workers=0") {
		t.Errorf("serve log does not say it runs no jobs: %s", serveErr.String())
	}

	t.Setenv("SWITCHYARD_BASE_URL", "http://"+addr)
	t.Setenv("SERVICE_API_KEY", "k")
	code, out, errOut := cli(t, "train", "--poll", "50ms", data.URL+"/routing_train.json")
	if code != 0 || !regexp.MustCompile(`Router model\s+rm_\S+`).MatchString(out) {
		t.Fatalf("train through serve: %d\n%s\n%s\nworker: %s", code, out, errOut, workerErr.String())
	}
	if !strings.Contains(workerErr.String(), `msg="trainer: job started"`) || strings.Contains(serveErr.String(), `msg="trainer: job started"`) {
		t.Errorf("the job did not run on the worker:\nserve: %s\nworker: %s", serveErr.String(), workerErr.String())
	}

	// A job on an uploaded dataset (multipart, POST /api/v1/routers/train/upload).
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	csvFile, err := os.ReadFile(filepath.Join("..", "..", "examples", "data", "routing_train.csv"))
	if err != nil {
		t.Fatal(err)
	}
	tr := c.RouterTrainer()
	job, err := tr.TrainUpload(ctx, "routing_train.csv", bytes.NewReader(csvFile), nil)
	if err != nil {
		t.Fatalf("upload through serve: %v", err)
	}
	var st *client.TrainingStatus
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if st, err = tr.Status(ctx); err != nil {
			t.Fatal(err)
		}
		if st.Status == client.TrainCompleted || st.Status == client.TrainFailed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("uploaded job %s still %s\nworker: %s", job.TrainingJobID, st.Status, workerErr.String())
		}
	}
	if st.Status != client.TrainCompleted || st.ModelID == "" || st.Upload == nil || st.Upload.Filename != "routing_train.csv" || st.Upload.Bytes != len(csvFile) {
		t.Fatalf("uploaded job on serve: %+v (upload %+v)\nworker: %s", st, st.Upload, workerErr.String())
	}
	started := fmt.Sprintf(`msg="trainer: job started" job=%s `, job.TrainingJobID)
	if !strings.Contains(workerErr.String(), started) || strings.Contains(serveErr.String(), started) {
		t.Errorf("the uploaded job did not run on the worker:\nserve: %s\nworker: %s", serveErr.String(), workerErr.String())
	}

	cancel()
	for name, done := range map[string]chan int{"serve": serveDone, "worker": workerDone} {
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("%s exit code %d", name, code)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s did not exit", name)
		}
	}
}
