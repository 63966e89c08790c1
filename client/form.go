package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"sync"
)

// formChunk is how much of a form's file is read at a time: what is held of it in memory.
const formChunk = 32 << 10

// errFormRetried ends the writing of a form whose request is being sent again.
var errFormRetried = errors.New("client: the form is being sent again")

// postForm posts a multipart form — fields, then content as the file field "file" named
// filename — to path and decodes the JSON answer into out. The form is streamed as it is
// sent (chunked), a chunk of content at a time: a large file is never held whole. The
// writing stops when ctx ends or the request fails, and has stopped when postForm returns,
// so the caller may close content then. A failed request is retried only when content is
// an io.Seeker (an *os.File, a *bytes.Reader) that can seek: it is sought back to where it
// was and sent again (one that cannot, such as an *os.File on a pipe, is sent once).
func (c *Client) postForm(ctx context.Context, path string, fields [][2]string, filename string, content io.Reader, out any) error {
	req, err := c.newRequest(ctx, http.MethodPost, path, nil, nil)
	if err != nil {
		return err
	}
	f := &formStream{ctx: ctx, fields: fields, filename: filename, content: content,
		boundary: multipart.NewWriter(io.Discard).Boundary()}
	// An io.Seeker that cannot seek (an *os.File on a pipe or a FIFO: os.Stdin of a
	// pipeline) is sent as any reader is: once, not retried.
	if s, ok := content.(io.Seeker); ok {
		if start, err := s.Seek(0, io.SeekCurrent); err == nil {
			f.seeker, f.start = s, start
		}
	}
	defer f.stop()
	req.Body = f.open()
	if f.seeker != nil {
		req.GetBody = func() (io.ReadCloser, error) {
			f.stop()
			if err := f.contentErr(); err != nil {
				return nil, err // the content failed, not the connection: not sent again
			}
			if _, err := f.seeker.Seek(f.start, io.SeekStart); err != nil {
				return nil, fmt.Errorf("rewinding the content: %w", err)
			}
			return f.open(), nil
		}
	}
	req.ContentLength = -1 // unknown: sent chunked
	mw := multipart.NewWriter(io.Discard)
	if err := mw.SetBoundary(f.boundary); err != nil {
		return fmt.Errorf("client: POST %s: %w", path, err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := c.send(req)
	if err != nil {
		if rerr := f.contentErr(); rerr != nil {
			return fmt.Errorf("client: POST %s: %w", path, rerr)
		}
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("client: POST %s: decoding response: %w", path, err)
	}
	return nil
}

// formStream writes one multipart form into a pipe, a chunk of its file at a time, once
// per attempt of its request.
type formStream struct {
	ctx      context.Context
	fields   [][2]string
	filename string
	content  io.Reader
	boundary string
	seeker   io.Seeker // content, when it can be sent again
	start    int64     // where content began

	mu      sync.Mutex
	pr      *io.PipeReader // the current attempt's body
	done    chan struct{}  // closed when its writer has stopped
	readErr error          // content's read failure, if any: no attempt is made after it
}

// contentReadError is a form's content failing to be read: the caller's reader failed,
// not the connection, so the request is not retried (retryableTransport).
type contentReadError struct{ err error }

func (e *contentReadError) Error() string { return "reading the content: " + e.err.Error() }

// Unwrap returns the reader's error.
func (e *contentReadError) Unwrap() error { return e.err }

// contentErr is the failure reading content met ("reading the content: …"), or nil.
func (f *formStream) contentErr() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.readErr
}

// open starts writing the form into a new pipe and returns the pipe's reading end: the
// request's body.
func (f *formStream) open() io.ReadCloser {
	pr, pw := io.Pipe()
	done := make(chan struct{})
	f.mu.Lock()
	f.pr, f.done = pr, done
	f.mu.Unlock()
	go func() {
		defer close(done)
		pw.CloseWithError(f.write(pw))
	}()
	return pr
}

// stop ends the current attempt's writing and waits until its writer has stopped (a Read
// of content under way is waited for): content is no longer read.
func (f *formStream) stop() {
	f.mu.Lock()
	pr, done := f.pr, f.done
	f.mu.Unlock()
	if pr == nil {
		return
	}
	pr.CloseWithError(errFormRetried)
	<-done
}

// write writes the form to w; it stops at the first chunk after ctx ended, or when w
// (the pipe, closed by the transport or stop) fails.
func (f *formStream) write(w io.Writer) error {
	mw := multipart.NewWriter(w)
	if err := mw.SetBoundary(f.boundary); err != nil {
		return err
	}
	for _, fl := range f.fields {
		if err := mw.WriteField(fl[0], fl[1]); err != nil {
			return err
		}
	}
	fw, err := mw.CreateFormFile("file", f.filename)
	if err != nil {
		return err
	}
	buf := make([]byte, formChunk)
	for {
		if err := f.ctx.Err(); err != nil {
			return err
		}
		n, rerr := f.content.Read(buf)
		if n > 0 {
			if _, err := fw.Write(buf[:n]); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			err := &contentReadError{err: rerr}
			f.mu.Lock()
			f.readErr = err
			f.mu.Unlock()
			return err
		}
	}
	return mw.Close()
}
