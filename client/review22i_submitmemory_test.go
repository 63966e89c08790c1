package client_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

// A submission the server refuses (422, 429 or 503 with a Retry-After longer than the
// client waits) is returned as an *Error carrying status, kind, message and the hint, and
// leaves the remembered job and model ids as they were: the job submitted before is still
// the latest one that exists, so Status, Wait, Model and Predict keep following it.
func TestReview22iFailedSubmitKeepsTheIDs(t *testing.T) {
	var n atomic.Int64
	refusals := []struct {
		status int
		body   string
		ra     string
	}{
		{422, `{"error":"Validation Error","message":"Data_URLs[0]: must be a URL"}`, ""},
		{429, `{"error":"Too Many Requests","message":"this key has its limit of jobs"}`, "60"},
		{503, `{"error":"Service Unavailable","message":"queue full"}`, "60"},
	}
	c := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		i := (n.Add(1) - 1) % 4
		if i == 0 {
			switch r.URL.Path {
			case "/api/v1/routers/train":
				w.WriteHeader(http.StatusAccepted)
				w.Write([]byte(`{"training_job_id":"tj_1","status":"queued"}`))
			case "/api/v1/optimize":
				w.WriteHeader(http.StatusAccepted)
				w.Write([]byte(`{"job_id":"oj_1","status":"queued"}`))
			}
			return
		}
		ref := refusals[i-1]
		if ref.ra != "" {
			w.Header().Set("Retry-After", ref.ra)
		}
		w.WriteHeader(ref.status)
		w.Write([]byte(ref.body))
	})
	ctx := context.Background()
	tr := c.RouterTrainer()
	tr.UseModel("rm_0")
	if _, err := tr.Train(ctx, "https://example.com/a.json"); err != nil || tr.JobID() != "tj_1" {
		t.Fatalf("Train: %v, job %q", err, tr.JobID())
	}
	for _, ref := range refusals {
		_, err := tr.Train(ctx, "https://example.com/b.json")
		var e *client.Error
		if !errors.As(err, &e) || e.Status != ref.status || e.Message == "" || e.Kind == "" {
			t.Fatalf("refused Train: err = %v; want an *Error with status %d, kind and message", err, ref.status)
		}
		if ref.ra != "" && e.RetryAfter != 60*time.Second {
			t.Fatalf("%d: RetryAfter = %v, want the server's 60s surfaced", ref.status, e.RetryAfter)
		}
		if tr.JobID() != "tj_1" || tr.ModelID() != "rm_0" {
			t.Fatalf("after a refused Train (%d): job %q model %q; want tj_1 and rm_0 kept", ref.status, tr.JobID(), tr.ModelID())
		}
	}
	o := c.AgentOptimizer()
	if _, err := o.Submit(ctx, &client.OptimizeRequest{InputURL: "https://example.com/b.zip", TargetModel: "openai/gpt-4o"}); err != nil || o.JobID() != "oj_1" {
		t.Fatalf("Submit: %v, job %q", err, o.JobID())
	}
	for _, ref := range refusals {
		_, err := o.Submit(ctx, &client.OptimizeRequest{InputURL: "https://example.com/b.zip", TargetModel: "openai/gpt-4o"})
		var e *client.Error
		if !errors.As(err, &e) || e.Status != ref.status || o.JobID() != "oj_1" {
			t.Fatalf("refused Submit: err = %v, job %q; want an *Error with status %d and oj_1 kept", err, o.JobID(), ref.status)
		}
	}
}
