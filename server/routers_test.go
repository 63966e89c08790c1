package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/trainer"
)

const routersOtherKey = "routers-other-key-456"

// routersEnv is a server with custom routers and a file server playing the public host of
// the training data (allowed because the fetcher allows local URLs, as with
// --allow-local-urls).
type routersEnv struct {
	h     http.Handler
	files *httptest.Server
}

func routersServer(t *testing.T, opts ...trainer.Option) *routersEnv {
	t.Helper()
	st := newTestStore(t)
	quiet := slog.New(slog.DiscardHandler)
	base := []trainer.Option{trainer.WithFetcher(&fetch.Fetcher{AllowLocal: true}), trainer.WithLogger(quiet)}
	svc, err := trainer.New(st, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Store: st, APIKeys: []string{testKey, routersOtherKey}, Logger: quiet}, CustomRouters(svc))
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })

	dir := filepath.Join("..", "examples", "data")
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/broken.csv":
			io.WriteString(w, "question,answer\nq,a/b\n")
			return
		case "/train.json": // served without an extension hint in the content type
			w.Header().Set("Content-Type", "application/octet-stream")
			r.URL.Path = "/routing_train.json"
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.Base(r.URL.Path)))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(files.Close)
	return &routersEnv{h: srv, files: files}
}

func (e *routersEnv) waitJob(t *testing.T, key, id string) reply {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := do(t, e.h, "GET", "/api/v1/routers/train/status?task_id="+id, key, "")
		if r.status != http.StatusOK {
			t.Fatalf("status: %d %s", r.status, r.raw)
		}
		if s := r.body["status"]; s == "completed" || s == "failed" {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %v", id, r.body["status"])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRoutersEndToEnd(t *testing.T) {
	e := routersServer(t)
	body := fmt.Sprintf(`{"Data_URLs": [%q, %q]}`, e.files.URL+"/train.json", e.files.URL+"/routing_train.csv")
	r := do(t, e.h, "POST", "/api/v1/routers/train", testKey, body)
	if r.status != http.StatusAccepted || r.body["status"] != "queued" || r.body["version"] == "" {
		t.Fatalf("train: %d %s", r.status, r.raw)
	}
	jobID, _ := r.body["training_job_id"].(string)

	st := e.waitJob(t, testKey, jobID)
	if st.body["status"] != "completed" {
		t.Fatalf("job: %s", st.raw)
	}
	modelID, _ := st.body["model_id"].(string)
	for _, f := range []string{"started_at", "completed_at"} {
		if _, err := time.Parse(time.RFC3339, fmt.Sprint(st.body[f])); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	cfg, _ := st.body["training_config"].(map[string]any)
	timing, _ := cfg["timing"].(map[string]any)
	for _, f := range []string{"training_time_seconds", "embedding_time_seconds", "total_time_seconds"} {
		if v, ok := timing[f].(float64); !ok || v <= 0 {
			t.Errorf("training_config.timing.%s = %v", f, timing[f])
		}
	}
	if cfg["rows"] != float64(120) {
		t.Errorf("rows = %v, want 120 (60 JSON + 60 CSV)", cfg["rows"])
	}

	d := do(t, e.h, "GET", "/api/v1/routers/models?model_id="+modelID, testKey, "")
	if d.status != http.StatusOK || d.body["model_id"] != modelID || d.body["status"] != "active" ||
		d.body["embedding_model"] == "" || d.body["created_at"] == "" || d.body["version"] == "" {
		t.Fatalf("details: %s", d.raw)
	}
	n, _ := d.body["num_classes"].(float64)
	if n < 2 {
		t.Fatalf("num_classes = %v", d.body["num_classes"])
	}
	metrics, _ := d.body["metrics"].(map[string]any)
	for _, f := range []string{"top1_hit_rate", "top3_hit_rate", "accuracy", "baseline_top1_hit_rate"} {
		if v, ok := metrics[f].(float64); !ok || v < 0 || v > 1 {
			t.Errorf("metrics.%s = %v", f, metrics[f])
		}
	}

	p := do(t, e.h, "POST", "/api/v1/routers/predict", testKey,
		fmt.Sprintf(`{"model_id": %q, "inputs": ["What is 17 * 23?", "Write a python function that reverses a list."]}`, modelID))
	if p.status != http.StatusOK || p.body["version"] == "" {
		t.Fatalf("predict: %d %s", p.status, p.raw)
	}
	var pr trainer.PredictResponse
	if err := json.Unmarshal([]byte(p.raw), &pr); err != nil {
		t.Fatal(err)
	}
	if len(pr.Predictions) != 2 {
		t.Fatalf("predictions: %s", p.raw)
	}
	for _, pred := range pr.Predictions {
		if len(pred.Models) != int(n) || pred.Models[0].Model != pred.TopModel || pred.Models[0].Rank != 1 || pred.TopProb <= 0 || pred.TopProb > 1 {
			t.Fatalf("prediction: %+v", pred)
		}
	}

	// The other key sees none of it.
	wantError(t, do(t, e.h, "GET", "/api/v1/routers/train/status?task_id="+jobID, routersOtherKey, ""), 404, KindNotFound, jobID)
	wantError(t, do(t, e.h, "GET", "/api/v1/routers/models?model_id="+modelID, routersOtherKey, ""), 404, KindNotFound, modelID)
	wantError(t, do(t, e.h, "POST", "/api/v1/routers/predict", routersOtherKey, fmt.Sprintf(`{"model_id": %q, "inputs": ["x"]}`, modelID)), 404, KindNotFound, modelID)
	// No key at all.
	wantError(t, do(t, e.h, "GET", "/api/v1/routers/models?model_id="+modelID, "", ""), 401, KindUnauthorized, "API key")

	// Prediction input limits.
	many := make([]string, 501)
	for i := range many {
		many[i] = "q"
	}
	b, _ := json.Marshal(map[string]any{"model_id": modelID, "inputs": many})
	wantError(t, do(t, e.h, "POST", "/api/v1/routers/predict", testKey, string(b)), 422, KindValidation, "at most 500")
	wantError(t, do(t, e.h, "POST", "/api/v1/routers/predict", testKey, fmt.Sprintf(`{"model_id": %q, "inputs": ["ok", ""]}`, modelID)), 422, KindValidation, "inputs[1]")
	wantError(t, do(t, e.h, "POST", "/api/v1/routers/predict", testKey, fmt.Sprintf(`{"model_id": %q, "inputs": []}`, modelID)), 422, KindValidation, "inputs")
	wantError(t, do(t, e.h, "POST", "/api/v1/routers/predict", testKey, fmt.Sprintf(`{"model_id": %q, "inputs": [1]}`, modelID)), 422, KindValidation, `"inputs[0]" must be a string`)
	wantError(t, do(t, e.h, "POST", "/api/v1/routers/predict", testKey, `{"inputs": ["x"]}`), 422, KindValidation, "model_id")
	wantError(t, do(t, e.h, "POST", "/api/v1/routers/predict", testKey, `{"model_id": "rm_nope", "inputs": ["x"]}`), 404, KindNotFound, "rm_nope")
}

func TestRoutersBadRequests(t *testing.T) {
	e := routersServer(t)
	for _, c := range []struct {
		body, msg string
		status    int
	}{
		{`{}`, "Data_URLs", 422},
		{`{"Data_URLs": null}`, "Data_URLs", 422},
		{`{"Data_URLs": []}`, "Data_URLs", 422},
		{`{"Data_URLs": "https://x.test/a.csv"}`, "Data_URLs must be an array", 422},
		{`{"Data_URLs": ["https://x.test/a.csv", 7]}`, "Data_URLs[1] must be a string", 422},
		{`{"Data_URLs": [""]}`, "Data_URLs[0]", 422},
		{`{"Data_URLs": ["https://x.test/a.csv"], "model_prices": [1]}`, "model_prices must be an object", 422},
		{`{"Data_URLs": ["https://x.test/a.csv"], "model_prices": {"a/b": "1"}}`, `model_prices["a/b"] must be a number`, 422},
		{`{"Data_URLs": ["https://x.test/a.csv"], "model_prices": {"a/b": -1}}`, `model_prices["a/b"]`, 422},
		{`{"Data_URLs": ["https://x.test/a.csv"], "model_prices": {"nope": 1}}`, "model_prices", 422},
		{`{"Data_URLs": ["not a url"]}`, "Data_URLs[0]", 422},
		{`{"Data_URLs": ["https://x.test/a.csv"], "extra": 1}`, "extra", 422},
		{`{"Data_URLs": [`, "malformed JSON", 400},
	} {
		r := do(t, e.h, "POST", "/api/v1/routers/train", testKey, c.body)
		kind := KindValidation
		if c.status == 400 {
			kind = KindBadRequest
		}
		wantError(t, r, c.status, kind, c.msg)
	}
	wantError(t, do(t, e.h, "GET", "/api/v1/routers/train/status", testKey, ""), 422, KindValidation, "task_id")
	wantError(t, do(t, e.h, "GET", "/api/v1/routers/models?model_id=", testKey, ""), 422, KindValidation, "model_id")
	// An unknown id's 404 names the field that carried it, as the other routes' do.
	wantError(t, do(t, e.h, "GET", "/api/v1/routers/train/status?task_id=tj_nope", testKey, ""), 404, KindNotFound, `task_id: training job "tj_nope" not found`)
	wantError(t, do(t, e.h, "POST", "/api/v1/routers/train/cancel?task_id=tj_nope", testKey, ""), 404, KindNotFound, `task_id: training job "tj_nope"`)
	wantError(t, do(t, e.h, "DELETE", "/api/v1/routers/train/jobs/tj_nope", testKey, ""), 404, KindNotFound, `task_id: training job "tj_nope"`)
	wantError(t, do(t, e.h, "GET", "/api/v1/routers/models?model_id=rm_nope", testKey, ""), 404, KindNotFound, `model_id: router model "rm_nope" not found`)
	wantError(t, do(t, e.h, "POST", "/api/v1/routers/predict", testKey, `{"model_id": "rm_nope", "inputs": ["a"]}`), 404, KindNotFound, `model_id: router model "rm_nope"`)
	wantError(t, do(t, e.h, "DELETE", "/api/v1/routers/models/rm_nope", testKey, ""), 404, KindNotFound, `model_id: router model "rm_nope"`)

	// A file with a bad header is accepted at submit and fails the job, naming file and row.
	bad := e.files.URL + "/broken.csv"
	r := do(t, e.h, "POST", "/api/v1/routers/train", testKey, fmt.Sprintf(`{"Data_URLs": [%q]}`, bad))
	if r.status != http.StatusAccepted {
		t.Fatalf("train: %d %s", r.status, r.raw)
	}
	st := e.waitJob(t, testKey, r.body["training_job_id"].(string))
	msg, _ := st.body["error_message"].(string)
	if st.body["status"] != "failed" || !strings.Contains(msg, bad) || !strings.Contains(msg, "line 1") || st.body["model_id"] != nil {
		t.Fatalf("job: %s", st.raw)
	}
}

func TestRoutersQueueFull(t *testing.T) {
	st := newTestStore(t)
	quiet := slog.New(slog.DiscardHandler)
	svc, err := trainer.New(st, trainer.WithQueueSize(1), trainer.WithLogger(quiet)) // never started
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Store: st, APIKeys: []string{testKey}, Logger: quiet}, CustomRouters(svc))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	body := `{"Data_URLs": ["https://x.test/a.csv"]}`
	if r := do(t, srv, "POST", "/api/v1/routers/train", testKey, body); r.status != http.StatusAccepted {
		t.Fatalf("first: %d %s", r.status, r.raw)
	}
	r := do(t, srv, "POST", "/api/v1/routers/train", testKey, body)
	wantError(t, r, http.StatusServiceUnavailable, KindUnavailable, "queue is full")
	if r.header.Get("Retry-After") == "" {
		t.Error("no Retry-After on 503")
	}
}

func TestRoutersOpenAPI(t *testing.T) {
	e := routersServer(t)
	r := do(t, e.h, "GET", "/api/v1/openapi.json", "", "")
	if r.status != http.StatusOK {
		t.Fatalf("openapi: %d", r.status)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal([]byte(r.raw), &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, path string
		want         []string
	}{
		{"post", "/api/v1/routers/train", []string{"Data_URLs", "model_prices", "training_job_id", "202"}},
		{"get", "/api/v1/routers/train/status", []string{"task_id", "training_config", "completed_at"}},
		{"post", "/api/v1/routers/train/cancel", []string{"task_id", "error_message"}},
		{"get", "/api/v1/routers/models", []string{"model_id", "num_classes", "top1_hit_rate", "calibration_error", "default_tolerance", "frontier", "mean_price", "loss_stderr", "standard error of the score given up", "multi-label accuracy of the per-model quality estimates"}},
		{"post", "/api/v1/routers/predict", []string{"inputs", "top_model", "confidence", "rank"}},
	} {
		op, ok := doc.Paths[c.path][c.method]
		if !ok {
			t.Fatalf("OpenAPI lacks %s %s", c.method, c.path)
		}
		for _, w := range c.want {
			if !strings.Contains(string(op), w) && !strings.Contains(r.raw, w) {
				t.Errorf("%s %s: document lacks %q", c.method, c.path, w)
			}
		}
	}
}

// TestRoutersPerKeyLimitAndCancel: a key past its job limit gets 429 with Retry-After naming
// the limit while another key still gets in; cancel ends a queued job failed, answers 409
// for an ended job, 404 for another key's and 422 without task_id.
func TestRoutersPerKeyLimitAndCancel(t *testing.T) {
	st := newTestStore(t)
	quiet := slog.New(slog.DiscardHandler)
	svc, err := trainer.New(st, trainer.WithJobsPerOwner(2), trainer.WithLogger(quiet)) // never started: jobs stay queued
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Store: st, APIKeys: []string{testKey, routersOtherKey}, Logger: quiet}, CustomRouters(svc))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	body := `{"Data_URLs": ["https://x.test/a.csv"]}`
	var ids []string
	for range 2 {
		r := do(t, srv, "POST", "/api/v1/routers/train", testKey, body)
		if r.status != http.StatusAccepted {
			t.Fatalf("submit: %d %s", r.status, r.raw)
		}
		ids = append(ids, r.body["training_job_id"].(string))
	}
	r := do(t, srv, "POST", "/api/v1/routers/train", testKey, body)
	wantError(t, r, http.StatusTooManyRequests, KindTooManyRequests, "limit is 2 per key")
	if r.header.Get("Retry-After") == "" {
		t.Error("no Retry-After on 429")
	}
	if r := do(t, srv, "POST", "/api/v1/routers/train", routersOtherKey, body); r.status != http.StatusAccepted {
		t.Fatalf("other key: %d %s", r.status, r.raw)
	}

	wantError(t, do(t, srv, "POST", "/api/v1/routers/train/cancel", testKey, ""), http.StatusUnprocessableEntity, KindValidation, "task_id")
	wantError(t, do(t, srv, "POST", "/api/v1/routers/train/cancel?task_id="+ids[0], routersOtherKey, ""), http.StatusNotFound, KindNotFound, ids[0])
	r = do(t, srv, "POST", "/api/v1/routers/train/cancel?task_id="+ids[0], testKey, "")
	if r.status != http.StatusOK || r.body["status"] != "failed" || !strings.Contains(fmt.Sprint(r.body["error_message"]), "cancelled") {
		t.Fatalf("cancel: %d %s", r.status, r.raw)
	}
	if r := do(t, srv, "GET", "/api/v1/routers/train/status?task_id="+ids[0], testKey, ""); r.body["status"] != "failed" {
		t.Fatalf("status after cancel: %s", r.raw)
	}
	wantError(t, do(t, srv, "POST", "/api/v1/routers/train/cancel?task_id="+ids[0], testKey, ""), http.StatusConflict, KindConflict, "failed")
	if r := do(t, srv, "POST", "/api/v1/routers/train", testKey, body); r.status != http.StatusAccepted {
		t.Fatalf("after cancel the key is still at its limit: %d %s", r.status, r.raw)
	}
}
