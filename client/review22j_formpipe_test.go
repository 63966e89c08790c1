package client_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// An upload whose content is an *os.File that cannot seek (a pipe: os.Stdin of
// `app < data.jsonl`'s shell pipeline, a FIFO) is an io.Seeker only by its type: it is
// sent as any other reader (not retried), not refused because Seek fails.
func TestReview22jUploadFromAPipe(t *testing.T) {
	var mu sync.Mutex
	var got string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		b, _ := io.ReadAll(f)
		mu.Lock()
		got = string(b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"training_job_id":"tj_1","status":"queued"}`)
	}))
	t.Cleanup(hs.Close)
	c, err := client.New(client.WithBaseURL(hs.URL), client.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close() })
	go func() {
		io.WriteString(pw, "prompt,a/score\nhi,1\n")
		pw.Close()
	}()
	if _, err := c.RouterTrainer().TrainUpload(t.Context(), "d.csv", pr, nil); err != nil {
		t.Fatalf("an upload from a pipe: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got != "prompt,a/score\nhi,1\n" {
		t.Fatalf("the server got %q", got)
	}
}
