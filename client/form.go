package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"sync"
)

// formChunk is how much of a form's file is read at a time: what is held of it in memory.
const formChunk = 32 << 10

// errFormRetried ends the writing of a form whose request is being sent again.
var errFormRetried = errors.New("client: the form is being sent again")

// postForm posts a multipart form — fields, then content as the file field "file" named
// filename — to path and decodes the JSON answer into out, as postMultipart does.
func (c *Client) postForm(ctx context.Context, path string, fields [][2]string, filename string, content io.Reader, out any) error {
	return c.postMultipart(ctx, path, fields, []formFile{{field: "file", filename: filename, content: content}}, out)
}

// formFile is one file part of a multipart form.
type formFile struct {
	field, filename string
	// header is the part's header; nil for multipart.Writer.CreateFormFile's (field and
	// filename, application/octet-stream).
	header  textproto.MIMEHeader
	content io.Reader

	seeker io.Seeker // content, when it can be sent again
	start  int64     // where content began
}

// postMultipart posts a multipart form — fields, then files in order — to path and
// decodes the JSON answer into out. The form is streamed as it is sent (chunked), a chunk
// of a file at a time: a large file is never held whole. The writing stops when ctx ends
// or the request fails, and has stopped when postMultipart returns, so the caller may
// close the files' content then. A failed request is retried only when every file's
// content is an io.Seeker (an *os.File, a *bytes.Reader) that can seek: each is sought
// back to where it was and sent again (one that cannot, such as an *os.File on a pipe,
// makes the form sent once). A failure reading a file's content is a contentReadError,
// never retried.
func (c *Client) postMultipart(ctx context.Context, path string, fields [][2]string, files []formFile, out any) error {
	req, err := c.newRequest(ctx, http.MethodPost, path, nil, nil)
	if err != nil {
		return err
	}
	f := &formStream{ctx: ctx, fields: fields, files: files,
		boundary: multipart.NewWriter(io.Discard).Boundary()}
	// An io.Seeker that cannot seek (an *os.File on a pipe or a FIFO: os.Stdin of a
	// pipeline) is sent as any reader is: once, not retried.
	rewindable := true
	for i := range f.files {
		ff := &f.files[i]
		ff.seeker = nil
		if s, ok := ff.content.(io.Seeker); ok {
			if start, err := s.Seek(0, io.SeekCurrent); err == nil {
				ff.seeker, ff.start = s, start
			}
		}
		rewindable = rewindable && ff.seeker != nil
	}
	defer f.stop()
	req.Body = f.open()
	if rewindable {
		req.GetBody = func() (io.ReadCloser, error) {
			f.stop()
			if err := f.contentErr(); err != nil {
				return nil, err // the content failed, not the connection: not sent again
			}
			for _, ff := range f.files {
				if _, err := ff.seeker.Seek(ff.start, io.SeekStart); err != nil {
					return nil, fmt.Errorf("rewinding the content: %w", err)
				}
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

// formStream writes one multipart form into a pipe, a chunk of a file at a time, once
// per attempt of its request.
type formStream struct {
	ctx      context.Context
	fields   [][2]string
	files    []formFile
	boundary string

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
	buf := make([]byte, formChunk)
	for _, ff := range f.files {
		var fw io.Writer
		var err error
		if ff.header != nil {
			fw, err = mw.CreatePart(ff.header)
		} else {
			fw, err = mw.CreateFormFile(ff.field, ff.filename)
		}
		if err != nil {
			return err
		}
		if err := f.copyContent(fw, ff.content, buf); err != nil {
			return err
		}
	}
	return mw.Close()
}

// copyContent copies content to w through buf, a chunk at a time; it stops at the first
// chunk after ctx ended. A failure reading content is recorded (contentErr) and returned
// as a *contentReadError.
func (f *formStream) copyContent(w io.Writer, content io.Reader, buf []byte) error {
	for {
		if err := f.ctx.Err(); err != nil {
			return err
		}
		n, rerr := content.Read(buf)
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			err := &contentReadError{err: rerr}
			f.mu.Lock()
			f.readErr = err
			f.mu.Unlock()
			return err
		}
	}
}
