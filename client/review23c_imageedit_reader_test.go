package client_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// An image given as a Reader is streamed, never held whole: a 64 MiB image made as it is
// read arrives whole (its digest checked) with the other parts, the request is chunked,
// the image is never read more than half of it ahead of what the server has received, and
// the whole edit allocates less than a quarter of the image's size (reading it into memory
// first would allocate at least all of it). Counts and ratios, no timings.
func TestReview23cEditImagesStreamsAReader(t *testing.T) {
	const size = 64 << 20
	var received atomic.Int64
	type part struct {
		name, filename, ctype string
		n                     int64
		sum                   [sha256.Size]byte
	}
	var got struct {
		parts []part
	}
	hs := newFormServer(t, &received, `{"created":1,"model":"openai/gpt-image-1","data":[{"b64_json":"aGk="}]}`, func(p *multipart.Part) error {
		h := sha256.New()
		n, err := io.Copy(h, p)
		if err == nil {
			got.parts = append(got.parts, part{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), n, [sha256.Size]byte(h.Sum(nil))})
		}
		return err
	})
	c, err := client.New(client.WithBaseURL(hs.URL), client.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}

	// The digest the big image should arrive with, computed from a twin of the reader.
	var twinReceived atomic.Int64
	twin := &lazyFile{size: size, received: &twinReceived, t: t}
	h := sha256.New()
	if _, err := io.Copy(h, twin); err != nil {
		t.Fatal(err)
	}
	bigSum := [sha256.Size]byte(h.Sum(nil))
	small, mask := pattern(50<<10+9, 4), pattern(20<<10, 5)

	big := &lazyFile{size: size, received: &received, t: t}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := c.EditImages(t.Context(), &client.ImageEditRequest{Model: "gpt-image-1", Prompt: "a hat",
		Images: []client.ImageFile{{Name: "big.png", Reader: big}, {Name: "small.webp", Data: small}},
		Mask:   &client.ImageFile{Name: "mask.png", Reader: bytes.NewReader(mask)}})
	runtime.ReadMemStats(&after)
	big.afterReturn.Store(true)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 1 || res.Data[0].B64JSON != "aGk=" || hs.err != nil {
		t.Fatalf("answer %+v; the server's error %v", res, hs.err)
	}
	want := []part{
		{"model", "", "", int64(len("gpt-image-1")), sha256.Sum256([]byte("gpt-image-1"))},
		{"prompt", "", "", 5, sha256.Sum256([]byte("a hat"))},
		{"image[]", "big.png", "image/png", size, bigSum},
		{"image[]", "small.webp", "image/webp", int64(len(small)), sha256.Sum256(small)},
		{"mask", "mask.png", "image/png", int64(len(mask)), sha256.Sum256(mask)},
	}
	if len(got.parts) != len(want) {
		t.Fatalf("the server got %d parts, want %d", len(got.parts), len(want))
	}
	for i, p := range got.parts {
		w := want[i]
		if p.name != w.name || p.filename != w.filename || w.ctype != "" && p.ctype != w.ctype || p.n != w.n || p.sum != w.sum {
			t.Errorf("part %d: %s %q %s (%d bytes), want %s %q %s (%d bytes) intact", i+1, p.name, p.filename, p.ctype, p.n, w.name, w.filename, w.ctype, w.n)
		}
	}
	if hs.contentLength != -1 {
		t.Errorf("the request's Content-Length was %d: the form was built before it was sent", hs.contentLength)
	}
	if ahead := big.maxAhead.Load(); ahead > size/2 {
		t.Errorf("the image was read %d bytes ahead of what the server had received (of %d): it was held in memory", ahead, size)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size/4 {
		t.Errorf("the edit allocated %d bytes for a %d-byte image: it was held in memory", alloc, size)
	} else {
		t.Logf("the edit of a %d-byte image allocated %d bytes", size, alloc)
	}
}

var errReview23cCamera = errors.New("review23c: the camera went away")

// brokenImage gives its first bytes, then fails; it counts its reads.
type brokenImage struct {
	r     io.Reader
	reads atomic.Int64
}

func (b *brokenImage) Read(p []byte) (int, error) {
	if b.reads.Add(1) > 1 {
		return 0, errReview23cCamera
	}
	return b.r.Read(p[:min(len(p), 8)])
}

// seekableBrokenImage is a brokenImage that could be sent again: it seeks.
type seekableBrokenImage struct {
	brokenImage
	s io.Seeker
}

func (b *seekableBrokenImage) Seek(off int64, whence int) (int64, error) {
	return b.s.Seek(off, whence)
}

// A Reader that fails ends EditImages with an error matching the reader's, saying the
// content failed to be read, after one attempt: the caller's reader failed, not the
// connection, so it is not retried, even when it could seek back.
func TestReview23cEditImagesReaderErrorSurfaces(t *testing.T) {
	c, got := editFormServer(t, 0)
	for _, tc := range []struct {
		name string
		r    io.Reader
	}{
		{"a reader", &brokenImage{r: strings.NewReader("\x89PNG and more")}},
		{"a seeker", func() io.Reader {
			sr := strings.NewReader("\x89PNG and more")
			return &seekableBrokenImage{brokenImage{r: sr}, sr}
		}()},
	} {
		_, before := got()
		_, err := c.EditImages(t.Context(), &client.ImageEditRequest{Prompt: "a hat",
			Images: []client.ImageFile{{Name: "ok.png", Data: pattern(1000, 1)}, {Name: "cam.png", Reader: tc.r}}})
		if !errors.Is(err, errReview23cCamera) || !strings.Contains(err.Error(), "reading the content") {
			t.Fatalf("%s that fails: %v, want an error wrapping the reader's", tc.name, err)
		}
		if _, after := got(); len(after)-len(before) > 1 {
			t.Fatalf("%s that fails: the edit was sent %d times, want once", tc.name, len(after)-len(before))
		}
	}
}

// closeCounter is a Reader that records whether it was closed.
type closeCounter struct {
	io.Reader
	closed atomic.Bool
}

func (c *closeCounter) Close() error { c.closed.Store(true); return nil }

// Retries of an edit with Readers are as UploadFile's: a 503 is answered by sending the
// whole form again when every Reader seeks (each from where it was when EditImages was
// called), and not at all when one does not (it cannot be read again); a Reader is not
// closed by EditImages.
func TestReview23cEditImagesReaderRetries(t *testing.T) {
	img, mask := pattern(100<<10+5, 6), pattern(40<<10, 7)
	seeker := bytes.NewReader(append([]byte("skip"), img...))
	seeker.Seek(4, io.SeekStart)
	c, got := editFormServer(t, 1)
	_, err := c.EditImages(t.Context(), &client.ImageEditRequest{Prompt: "a hat",
		Images: []client.ImageFile{{Name: "a.png", Reader: seeker}},
		Mask:   &client.ImageFile{Name: "m.png", Data: mask}})
	if err != nil {
		t.Fatal(err)
	}
	_, forms := got()
	if len(forms) != 2 {
		t.Fatalf("%d attempts with a Reader that seeks, want 2 (a 503, then the form again)", len(forms))
	}
	for i, parts := range forms {
		if len(parts) != 3 || parts[1].name != "image" || !bytes.Equal(parts[1].data, img) || parts[2].name != "mask" || !bytes.Equal(parts[2].data, mask) {
			t.Fatalf("attempt %d: the image and mask did not arrive whole from where the reader was", i+1)
		}
	}

	c, got = editFormServer(t, 1)
	pipe := &closeCounter{Reader: io.MultiReader(bytes.NewReader(img))}
	_, err = c.EditImages(t.Context(), &client.ImageEditRequest{Prompt: "a hat",
		Images: []client.ImageFile{{Name: "a.png", Data: img}, {Name: "b.png", Reader: pipe}}})
	var ce *client.Error
	_, forms = got()
	if !errors.As(err, &ce) || ce.Status != http.StatusServiceUnavailable || len(forms) != 1 {
		t.Fatalf("a Reader that is no io.Seeker: %v after %d attempts, want the 503 after one", err, len(forms))
	}
	if len(forms[0]) != 3 || !bytes.Equal(forms[0][2].data, img) {
		t.Fatal("the one attempt did not carry the reader's image whole")
	}
	if pipe.closed.Load() {
		t.Fatal("EditImages closed the caller's Reader")
	}
}
