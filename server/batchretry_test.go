package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/store"
)

// fakeRestartingKeysDriver is a test fake of a database restarting under a replica: its
// next refusals reads of the keys fail as an unreachable PostgreSQL does, then it answers.
type fakeRestartingKeysDriver struct {
	store.Driver
	refusals atomic.Int64
	refused  atomic.Int64
}

func (d *fakeRestartingKeysDriver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	if (c == store.APIKeys || c == store.ScopedKeys) && d.refusals.Add(-1) >= 0 {
		d.refused.Add(1)
		return nil, errors.New("failed to connect: dial unix /tmp/pg/.s.PGSQL.5432: connect: no such file or directory")
	}
	return d.Driver.Get(ctx, c, key)
}

// TestBatchLineWaitsOutKeyStoreOutage: a virtual key's batch running while the database
// restarted had each line sent meanwhile written to the error file as "internal error: the
// line was not answered" (the key could not be read), though a request of the same key was
// answered 503 and retried by the SDKs; the line is now a retryable 503 that the batch
// sends again once the store answers, and it is answered.
func TestBatchLineWaitsOutKeyStoreOutage(t *testing.T) {
	d := &fakeRestartingKeysDriver{Driver: newTestDriver(t)}
	hs, s := keysServer(t, store.New(d), 0)
	files, err := batch.NewFiles(s.Store(), batch.FilesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := batch.New(s.Store(), files, batch.Options{Concurrency: 1, MaxRetryWait: time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := Batches(svc)(s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	g := litellmGenerate(t, s, `{"key_alias":"evals"}`)
	_, f := uploadBatchFile(t, hs, g.Key, "batch", chatLines("openai/ok"))
	code, b, raw := call(t, "POST", hs.URL+"/v1/batches", g.Key, `{"input_file_id":"`+f["id"].(string)+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`)
	if code != 200 {
		t.Fatalf("create: %d %s", code, raw)
	}
	d.refusals.Store(3) // the database restarts as the batch starts
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); d.refused.Load() < 3; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) { // a bound on a hang, not a timing
			t.Fatalf("the batch read the keys %d times", d.refused.Load())
		}
	}
	b = waitBatch(t, hs, g.Key, b["id"].(string))
	counts := b["request_counts"].(map[string]any)
	if b["status"] != "completed" || counts["completed"] != 1.0 || counts["failed"] != 0.0 {
		t.Fatalf("ended: %v", b)
	}
	if out := fileLines(t, hs, g.Key, b["output_file_id"]); len(out) != 1 || out[0].Response == nil || out[0].Response.StatusCode != 200 {
		t.Fatalf("output lines %+v", out)
	}
}

// TestBatchLineServerErrorRetryable: a batch line answered with a server error the client
// may retry (no x-should-retry: false) was kept as its final answer; it is now marked
// retryable with its Retry-After, as a 429 was, while a 5xx saying not to retry (as the
// gateway's own final failure does; the one of an outage of every model is retried, see
// TestBatchLineRetriesGatewayOutage) and a 501 stay final.
func TestBatchLineServerErrorRetryable(t *testing.T) {
	answer := Option(func(s *Server) error {
		s.Handle(Route{Method: "POST", Path: "/v1/test-answer/{status}", Summary: "a test route answering its status"}, func(w http.ResponseWriter, r *http.Request) error {
			if r.URL.Query().Get("final") != "" {
				w.Header().Set("X-Should-Retry", "false")
			}
			w.Header().Set("Retry-After", "3")
			status, _ := strconv.Atoi(r.PathValue("status"))
			writeJSON(w, status, map[string]any{"error": map[string]any{"message": "test", "type": "server_error"}})
			return nil
		})
		return nil
	})
	_, s := keysServer(t, nil, 0, answer)
	sum := sha256.Sum256([]byte(testKey))
	for _, c := range []struct {
		path      string
		retryable bool
	}{
		{"/v1/test-answer/503", true},
		{"/v1/test-answer/500", true},
		{"/v1/test-answer/529", true},
		{"/v1/test-answer/429", true},
		{"/v1/test-answer/502?final=1", false},
		{"/v1/test-answer/501", false},
		{"/v1/test-answer/400", false},
	} {
		ans, err := s.executeBatchLine(context.Background(), batch.Call{BatchID: "batch_test", Credential: hex.EncodeToString(sum[:]),
			RequestID: "batch_req_test", URL: c.path, Body: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if ans.Retryable != c.retryable || c.retryable && ans.RetryAfter != 3*time.Second {
			t.Errorf("%s answered %d: retryable %v after %s, want %v", c.path, ans.StatusCode, ans.Retryable, ans.RetryAfter, c.retryable)
		}
	}
}

// TestBatchLineBilledServerErrorFinal: a batch line answered with a retryable server error
// after its upstream call was paid for (a write failing after the answer) was sent again up
// to 6 times, each send billed anew; the answer is now marked billed and kept, while the
// same error before any upstream call stays retryable.
func TestBatchLineBilledServerErrorFinal(t *testing.T) {
	answer := Option(func(s *Server) error {
		s.Handle(Route{Method: "POST", Path: "/v1/test-billed/{call}", Summary: "a test route answering 500, after a billed chat call or none"}, func(w http.ResponseWriter, r *http.Request) error {
			if r.PathValue("call") == "yes" {
				inner, _ := http.NewRequestWithContext(r.Context(), "POST", "/v1/chat/completions",
					strings.NewReader(`{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`))
				inner.Header.Set("Authorization", "Bearer "+testKey)
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, inner)
				if rec.Code != 200 {
					t.Errorf("the billed call: %d %s", rec.Code, rec.Body)
				}
			}
			writeJSON(w, http.StatusInternalServerError, map[string]any{"error": map[string]any{"message": "test: the write after the answer failed", "type": "server_error"}})
			return nil
		})
		return nil
	})
	_, s := keysServer(t, nil, 0, answer)
	sum := sha256.Sum256([]byte(testKey))
	for _, c := range []struct {
		path              string
		billed, retryable bool
	}{
		{"/v1/test-billed/yes", true, true},
		{"/v1/test-billed/no", false, true},
	} {
		ans, err := s.executeBatchLine(context.Background(), batch.Call{BatchID: "batch_test", Credential: hex.EncodeToString(sum[:]),
			RequestID: "batch_req_test", URL: c.path, Body: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if ans.StatusCode != 500 || ans.Billed != c.billed || ans.Retryable != c.retryable {
			t.Errorf("%s answered %d: billed %v retryable %v, want billed %v", c.path, ans.StatusCode, ans.Billed, ans.Retryable, c.billed)
		}
	}
}
