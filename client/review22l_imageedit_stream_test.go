package client_test

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

// editPart is one part of an image edit form as the server read it.
type editPart struct {
	name, filename, ctype string
	data                  []byte
}

// editFormServer answers image edits, recording each attempt's Content-Length and parts;
// the first failFirst attempts are answered 503.
func editFormServer(t *testing.T, failFirst int) (*client.Client, func() ([]int64, [][]editPart)) {
	t.Helper()
	var mu sync.Mutex
	var lengths []int64
	var forms [][]editPart
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || r.URL.Path != "/v1/images/edits" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var parts []editPart
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			b, err := io.ReadAll(p)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			parts = append(parts, editPart{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), b})
		}
		mu.Lock()
		lengths, forms = append(lengths, r.ContentLength), append(forms, parts)
		n := len(forms)
		mu.Unlock()
		if n <= failFirst {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"created":1,"model":"openai/gpt-image-1","data":[{"b64_json":"aGk="}]}`)
	}))
	t.Cleanup(hs.Close)
	c, err := client.New(client.WithBaseURL(hs.URL), client.WithAPIKey("k"),
		client.WithSleep(func(context.Context, time.Duration) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	return c, func() ([]int64, [][]editPart) {
		mu.Lock()
		defer mu.Unlock()
		return lengths, forms
	}
}

// pattern is n bytes that differ from one chunk to the next.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7+i/4099)
	}
	return b
}

// EditImages streams its form as TrainUpload and UploadFile do (it was built in memory,
// the images copied beside themselves, and sent with its length): the request is chunked,
// and the fields, the images (several, over many chunks) and the mask arrive intact and in
// order, with their names and media types. A 503 is retried with the whole form again.
func TestReview22lEditImagesStreamsTheForm(t *testing.T) {
	c, got := editFormServer(t, 1)
	img1, img2, mask := pattern(300<<10+17, 1), pattern(100<<10+3, 2), pattern(70<<10, 3)
	res, err := c.EditImages(t.Context(), &client.ImageEditRequest{Model: "gpt-image-1", Prompt: "a hat", N: 2,
		Images: []client.ImageFile{{Name: "cat.png", Data: img1}, {Name: "dog.webp", Data: img2}},
		Mask:   &client.ImageFile{Name: "m", ContentType: "image/png", Data: mask}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 1 || res.Data[0].B64JSON != "aGk=" {
		t.Fatalf("answer %+v", res)
	}
	lengths, forms := got()
	if len(forms) != 2 {
		t.Fatalf("%d attempts, want 2 (a 503, then the form again)", len(forms))
	}
	want := []editPart{
		{"model", "", "", []byte("gpt-image-1")}, {"prompt", "", "", []byte("a hat")}, {"n", "", "", []byte("2")},
		{"image[]", "cat.png", "image/png", img1}, {"image[]", "dog.webp", "image/webp", img2},
		{"mask", "m", "image/png", mask},
	}
	for i, parts := range forms {
		if lengths[i] != -1 {
			t.Errorf("attempt %d: Content-Length %d: the form was built before it was sent, want it chunked", i+1, lengths[i])
		}
		if len(parts) != len(want) {
			t.Fatalf("attempt %d: %d parts, want %d", i+1, len(parts), len(want))
		}
		for j, p := range parts {
			w := want[j]
			if p.name != w.name || p.filename != w.filename || p.ctype != w.ctype && w.ctype != "" || !bytes.Equal(p.data, w.data) {
				t.Errorf("attempt %d part %d: %s %q %s (%d bytes), want %s %q %s (%d bytes) intact",
					i+1, j+1, p.name, p.filename, p.ctype, len(p.data), w.name, w.filename, w.ctype, len(w.data))
			}
		}
	}
}
