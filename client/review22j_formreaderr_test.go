package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

var errReview22jDisk = errors.New("review22j: the disk failed")

// failingSeeker is a seekable file whose reads fail past its first bytes: a disk error.
type failingSeeker struct {
	*strings.Reader
	reads atomic.Int64
}

func (f *failingSeeker) Read(p []byte) (int, error) {
	if f.reads.Add(1) > 1 {
		return 0, errReview22jDisk
	}
	return f.Reader.Read(p[:min(len(p), 4)])
}

// An upload whose content fails to be read (the caller's file, not the connection) ends
// with that error, matching it, after one attempt: it is no transport failure to retry,
// though the content is an io.Seeker that could be sent again.
func TestReview22jUploadContentErrorNotRetried(t *testing.T) {
	var attempts atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts.Add(1)
		io.Copy(io.Discard, r.Body)
		http.Error(w, "bad form", http.StatusBadRequest)
	}))
	t.Cleanup(hs.Close)
	var slept atomic.Int64
	c, err := client.New(client.WithBaseURL(hs.URL), client.WithAPIKey("k"),
		client.WithSleep(func(context.Context, time.Duration) error { slept.Add(1); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	content := &failingSeeker{Reader: strings.NewReader("prompt,a/score\nhi,1\n")}
	_, err = c.RouterTrainer().TrainUpload(t.Context(), "d.csv", content, nil)
	if !errors.Is(err, errReview22jDisk) {
		t.Fatalf("an upload whose file fails to be read: %v, want the read error", err)
	}
	if n := slept.Load(); n != 0 {
		t.Fatalf("the upload was retried %d times after its file failed to be read (server saw %d attempts)", n, attempts.Load())
	}
}
