package client_test

import (
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

// lazyFile is a file of size bytes made as it is read (never held), recording how far
// its reader got ahead of what the server had received (received, set by the server).
type lazyFile struct {
	size     int64
	pos      atomic.Int64
	received *atomic.Int64
	maxAhead atomic.Int64
	// afterReturn, once set, makes a Read an error of the test: the upload read the file
	// after TrainUpload returned.
	afterReturn atomic.Bool
	t           *testing.T
}

func (f *lazyFile) Read(p []byte) (int, error) {
	if f.afterReturn.Load() {
		f.t.Error("the file was read after TrainUpload returned")
	}
	pos := f.pos.Load()
	if pos >= f.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), f.size-pos))
	for i := range n {
		p[i] = 'a' + byte((pos+int64(i))%26)
	}
	pos = f.pos.Add(int64(n))
	if ahead := pos - f.received.Load(); ahead > f.maxAhead.Load() {
		f.maxAhead.Store(ahead)
	}
	return n, nil
}

// countingBody counts what the server read of a request's body.
type countingBody struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// formServer is a test server reading each request's multipart form as it arrives, counting
// what it read in received and handing each part to onPart; it answers answer (JSON), or
// 400 with the first error of the form or of onPart, kept in err. contentLength is the
// last request's Content-Length (-1: chunked).
type formServer struct {
	*httptest.Server
	contentLength int64
	err           error
}

func newFormServer(t *testing.T, received *atomic.Int64, answer string, onPart func(*multipart.Part) error) *formServer {
	t.Helper()
	fs := &formServer{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs.contentLength = r.ContentLength
		fail := func(err error) {
			fs.err = err
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
		_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil {
			fail(err)
			return
		}
		mr := multipart.NewReader(countingBody{r.Body, received}, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err == nil {
				err = onPart(p)
			}
			if err != nil {
				fail(err)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	}))
	t.Cleanup(fs.Close)
	return fs
}

// A training upload of a 64 MiB file is streamed: the request is chunked (no length known
// in advance) and the file is never read more than half of it ahead of what the server
// has received (the form built in memory read all of it before sending a byte); the server
// gets the whole file and the fields.
func TestTrainUploadStreamsTheFile(t *testing.T) {
	const size = 64 << 20
	var received atomic.Int64
	var got struct {
		fileBytes int64
		format    string
	}
	hs := newFormServer(t, &received, `{"training_job_id":"tj_1","status":"queued"}`, func(part *multipart.Part) (err error) {
		switch part.FormName() {
		case "format":
			b, _ := io.ReadAll(part)
			got.format = string(b)
		case "file":
			got.fileBytes, err = io.Copy(io.Discard, part)
		}
		return err
	})
	c, err := client.New(client.WithBaseURL(hs.URL), client.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	f := &lazyFile{size: size, received: &received, t: t}
	job, err := c.RouterTrainer().TrainUpload(t.Context(), "big.csv", f, &client.UploadOptions{Format: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	f.afterReturn.Store(true)
	if job.TrainingJobID != "tj_1" || hs.err != nil || got.fileBytes != size || got.format != "csv" {
		t.Fatalf("job %+v; the server got %+v (error %v)", job, got, hs.err)
	}
	if hs.contentLength != -1 {
		t.Errorf("the request's Content-Length was %d: the form was built before it was sent", hs.contentLength)
	}
	if ahead := f.maxAhead.Load(); ahead > size/2 {
		t.Errorf("the file was read %d bytes ahead of what the server had received (of %d): it was held in memory", ahead, size)
	}
}

// Cancelling the context of a training upload stops it: TrainUpload returns the
// cancellation, the file was not read to its end, and it is not read after TrainUpload
// returned.
func TestTrainUploadStopsWhenCancelled(t *testing.T) {
	const size = 64 << 20
	var received atomic.Int64
	gotSome, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 32<<10)
		for received.Load() < 1<<20 {
			n, err := r.Body.Read(buf)
			received.Add(int64(n))
			if err != nil {
				return
			}
		}
		once.Do(func() { close(gotSome) })
		<-release // reads no more: the client can send no further than the socket buffers
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(release) }) // before hs.Close
	c, err := client.New(client.WithBaseURL(hs.URL), client.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		select {
		case <-gotSome:
			cancel()
		case <-ctx.Done():
		}
	}()
	f := &lazyFile{size: size, received: &received, t: t}
	_, err = c.RouterTrainer().TrainUpload(ctx, "big.csv", f, nil)
	f.afterReturn.Store(true)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("TrainUpload with its context cancelled: %v, want context.Canceled", err)
	}
	if pos := f.pos.Load(); pos >= size {
		t.Fatalf("the file was read to its end (%d bytes) though the upload was cancelled", pos)
	}
}

// A training upload the server answers 503 is sent again whole when its file is an
// io.Seeker (from where the file was when TrainUpload was called), and not at all when it
// is not (it cannot be read again).
func TestTrainUploadRetriesOnlyASeeker(t *testing.T) {
	var mu sync.Mutex
	var files []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		b, _ := io.ReadAll(f)
		mu.Lock()
		files = append(files, string(b))
		first := len(files) == 1
		mu.Unlock()
		if first {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"training_job_id":"tj_1","status":"queued"}`)
	}))
	t.Cleanup(hs.Close)
	c, err := client.New(client.WithBaseURL(hs.URL), client.WithAPIKey("k"), client.WithSleep(func(context.Context, time.Duration) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	content := strings.NewReader("skip|prompt,a/score\nhi,1\n")
	content.Seek(5, io.SeekStart)
	if _, err := c.RouterTrainer().TrainUpload(t.Context(), "d.csv", content, nil); err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0] != "prompt,a/score\nhi,1\n" || files[1] != files[0] {
		t.Fatalf("the server got %q, want the file from where it was, twice", files)
	}
	files = nil
	_, err = c.RouterTrainer().TrainUpload(t.Context(), "d.csv", io.MultiReader(strings.NewReader("prompt,a/score\nhi,1\n")), nil)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusServiceUnavailable || len(files) != 1 {
		t.Fatalf("a file that is no io.Seeker: %v after %d attempts, want the 503 after one", err, len(files))
	}
}
