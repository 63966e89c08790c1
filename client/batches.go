package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// DefaultBatchPollInterval is how often WaitBatch and WatchBatch poll when not told.
const DefaultBatchPollInterval = 2 * time.Second

// File is a file of the server's Files API (OpenAI's file object): a batch input
// (purpose "batch") or a batch's output or error file (purpose "batch_output").
type File struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	Bytes     int64  `json:"bytes"`
	CreatedAt int64  `json:"created_at"`
	// ExpiresAt is when the server deletes the file (Unix seconds); nil for never.
	ExpiresAt *int64 `json:"expires_at"`
	Filename  string `json:"filename"`
	Purpose   string `json:"purpose"`
	Status    string `json:"status"`
}

// FileList is a page of ListFiles.
type FileList struct {
	Data    []File `json:"data"`
	FirstID string `json:"first_id"`
	LastID  string `json:"last_id"`
	HasMore bool   `json:"has_more"`
}

// FileListOptions select a page of ListFiles; the zero value lists every file, newest
// first.
type FileListOptions struct {
	// Purpose keeps "batch" or "batch_output" files ("": both).
	Purpose string
	// After is the LastID of the previous page.
	After string
	// Limit is 1 to 10,000 (0: the server's default, 10,000).
	Limit int
	// Order is "desc" (newest first, the default) or "asc".
	Order string
}

// ExpiresAfter bounds a file's life: Seconds (3,600 to 2,592,000) after its creation.
type ExpiresAfter struct {
	Anchor  string `json:"anchor"`
	Seconds int64  `json:"seconds"`
}

// UploadFile uploads a batch input with POST /v1/files: JSONL, one request per line
// ({"custom_id", "method": "POST", "url", "body"}). purpose "" means "batch", the only one
// the server takes. The server checks every line; a bad one is an *Error (400) whose
// message names the line and the field. The content is streamed as it is sent, a chunk at a
// time (never held whole); a failed upload is retried only when content is an io.Seeker
// that can seek (an *os.File of a regular file, a *strings.Reader), sent again from where
// it began; an *os.File on a pipe is sent once. filename "" sends "batch.jsonl".
func (c *Client) UploadFile(ctx context.Context, filename string, content io.Reader, purpose string) (*File, error) {
	return c.UploadFileExpiring(ctx, filename, content, purpose, nil)
}

// UploadFileExpiring is UploadFile with an expiry (nil: the server's default, 30 days for
// a batch input).
func (c *Client) UploadFileExpiring(ctx context.Context, filename string, content io.Reader, purpose string, expires *ExpiresAfter) (*File, error) {
	if purpose == "" {
		purpose = "batch"
	}
	fields := [][2]string{{"purpose", purpose}}
	if expires != nil {
		fields = append(fields, [2]string{"expires_after[anchor]", expires.Anchor}, [2]string{"expires_after[seconds]", strconv.FormatInt(expires.Seconds, 10)})
	}
	if filename == "" {
		filename = "batch.jsonl" // as the Python client's: a part without a file name is no file to the server
	}
	var f File
	if err := c.postForm(ctx, "/v1/files", fields, filename, content, &f); err != nil {
		return nil, err
	}
	return &f, nil
}

// File returns one of the key's files.
func (c *Client) File(ctx context.Context, id string) (*File, error) {
	if id == "" {
		return nil, fmt.Errorf("client: GET /v1/files/: %w", ErrMissingID)
	}
	var f File
	if err := c.do(ctx, http.MethodGet, "/v1/files/"+url.PathEscape(id), nil, nil, &f); err != nil {
		return nil, err
	}
	return &f, nil
}

// ListFiles returns a page of the key's files (opts nil: all of them, newest first).
func (c *Client) ListFiles(ctx context.Context, opts *FileListOptions) (*FileList, error) {
	q := url.Values{}
	if opts != nil {
		for k, v := range map[string]string{"purpose": opts.Purpose, "after": opts.After, "order": opts.Order} {
			if v != "" {
				q.Set(k, v)
			}
		}
		if opts.Limit > 0 {
			q.Set("limit", strconv.Itoa(opts.Limit))
		}
	}
	var l FileList
	if err := c.do(ctx, http.MethodGet, "/v1/files", q, nil, &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// FileContent returns a reader of a file's content; close it.
func (c *Client) FileContent(ctx context.Context, id string) (io.ReadCloser, error) {
	if id == "" {
		return nil, fmt.Errorf("client: GET /v1/files/{id}/content: %w", ErrMissingID)
	}
	req, err := c.newRequest(ctx, http.MethodGet, "/v1/files/"+url.PathEscape(id)+"/content", nil, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.send(req)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// DeleteFile deletes one of the key's files. The input of a batch that has not ended is a
// 409 *Error (errors.Is(err, ErrConflict)).
func (c *Client) DeleteFile(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("client: DELETE /v1/files/: %w", ErrMissingID)
	}
	return c.do(ctx, http.MethodDelete, "/v1/files/"+url.PathEscape(id), nil, nil, nil)
}

// CreateBatchRequest is the body of CreateBatch.
type CreateBatchRequest struct {
	// InputFileID is a file uploaded with purpose "batch".
	InputFileID string `json:"input_file_id"`
	// Endpoint is "/v1/chat/completions", "/v1/embeddings", "/v1/responses" or
	// "/v1/completions": every line's url.
	Endpoint string `json:"endpoint"`
	// CompletionWindow is "24h" (the default when empty).
	CompletionWindow string `json:"completion_window"`
	// Metadata is at most 16 pairs.
	Metadata map[string]string `json:"metadata,omitempty"`
	// OutputExpiresAfter bounds the life of the output and error files.
	OutputExpiresAfter *ExpiresAfter `json:"output_expires_after,omitempty"`
}

// Batch is a batch (OpenAI's batch object). Times are Unix seconds, nil until they happen.
type Batch struct {
	ID               string `json:"id"`
	Object           string `json:"object"`
	Endpoint         string `json:"endpoint"`
	InputFileID      string `json:"input_file_id"`
	CompletionWindow string `json:"completion_window"`
	// Status is validating, in_progress, finalizing, completed, failed, expired,
	// cancelling or cancelled.
	Status string `json:"status"`
	// OutputFileID holds the lines answered with a 2xx status, ErrorFileID the others; nil
	// until the batch ends, or when it has none.
	OutputFileID  *string           `json:"output_file_id"`
	ErrorFileID   *string           `json:"error_file_id"`
	CreatedAt     int64             `json:"created_at"`
	InProgressAt  *int64            `json:"in_progress_at"`
	ExpiresAt     *int64            `json:"expires_at"`
	FinalizingAt  *int64            `json:"finalizing_at"`
	CompletedAt   *int64            `json:"completed_at"`
	FailedAt      *int64            `json:"failed_at"`
	ExpiredAt     *int64            `json:"expired_at"`
	CancellingAt  *int64            `json:"cancelling_at"`
	CancelledAt   *int64            `json:"cancelled_at"`
	RequestCounts BatchCounts       `json:"request_counts"`
	Usage         BatchUsage        `json:"usage"`
	Metadata      map[string]string `json:"metadata"`
	// Errors says why a batch failed as a whole (nil otherwise).
	Errors *struct {
		Data []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"data"`
	} `json:"errors"`
	// Switchyard is the server's extension: what the answered lines cost.
	Switchyard *struct {
		CostUSD float64 `json:"cost_usd"`
	} `json:"switchyard,omitempty"`
}

// BatchCounts counts a batch's requests: Completed answered with a 2xx status, Failed
// answered with another or never answered.
type BatchCounts struct {
	Total     int `json:"total"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
}

// BatchUsage is the tokens a batch's answered lines used.
type BatchUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// Done reports whether the batch has ended (completed, failed, expired or cancelled).
func (b *Batch) Done() bool {
	switch b.Status {
	case "completed", "failed", "expired", "cancelled":
		return true
	}
	return false
}

// BatchList is a page of ListBatches.
type BatchList struct {
	Data    []Batch `json:"data"`
	FirstID string  `json:"first_id"`
	LastID  string  `json:"last_id"`
	HasMore bool    `json:"has_more"`
}

// CreateBatch runs a batch input through the gateway as the calling key (POST
// /v1/batches).
func (c *Client) CreateBatch(ctx context.Context, req *CreateBatchRequest) (*Batch, error) {
	r := *req
	if r.CompletionWindow == "" {
		r.CompletionWindow = "24h"
	}
	var b Batch
	if err := c.do(ctx, http.MethodPost, "/v1/batches", nil, &r, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// Batch returns one of the key's batches.
func (c *Client) Batch(ctx context.Context, id string) (*Batch, error) {
	if id == "" {
		return nil, fmt.Errorf("client: GET /v1/batches/: %w", ErrMissingID)
	}
	var b Batch
	if err := c.do(ctx, http.MethodGet, "/v1/batches/"+url.PathEscape(id), nil, nil, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// ListBatches returns a page of the key's batches, newest first: after is the LastID of
// the previous page (""), limit 1 to 100 (0: 20).
func (c *Client) ListBatches(ctx context.Context, after string, limit int) (*BatchList, error) {
	q := url.Values{}
	if after != "" {
		q.Set("after", after)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var l BatchList
	if err := c.do(ctx, http.MethodGet, "/v1/batches", q, nil, &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// CancelBatch cancels a batch: it becomes cancelling, then cancelled with what it had
// answered. A batch that has ended is a 409 *Error.
func (c *Client) CancelBatch(ctx context.Context, id string) (*Batch, error) {
	if id == "" {
		return nil, fmt.Errorf("client: POST /v1/batches/{id}/cancel: %w", ErrMissingID)
	}
	var b Batch
	if err := c.do(ctx, http.MethodPost, "/v1/batches/"+url.PathEscape(id)+"/cancel", nil, nil, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// WatchBatch polls batch id every pollEvery (DefaultBatchPollInterval when 0), yielding
// each state, and stops once it has ended, on the first error, or when ctx ends.
func (c *Client) WatchBatch(ctx context.Context, id string, pollEvery time.Duration) iter.Seq2[*Batch, error] {
	return poll(ctx, pollEvery, DefaultBatchPollInterval, func(ctx context.Context) (*Batch, error) { return c.Batch(ctx, id) }, (*Batch).Done, nil)
}

// WaitBatch polls batch id until it has ended and returns its last state.
func (c *Client) WaitBatch(ctx context.Context, id string, pollEvery time.Duration) (*Batch, error) {
	return waitLast(c.WatchBatch(ctx, id, pollEvery))
}

// BatchOutputLine is one line of a batch's output or error file: Response for a line
// the endpoint answered (whatever its status), Error for one it never answered.
type BatchOutputLine struct {
	ID       string `json:"id"`
	CustomID string `json:"custom_id"`
	Response *struct {
		StatusCode int             `json:"status_code"`
		RequestID  string          `json:"request_id"`
		Body       json.RawMessage `json:"body"`
	} `json:"response"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// BatchOutput downloads a batch's output or error file and yields its lines in order.
func (c *Client) BatchOutput(ctx context.Context, fileID string) iter.Seq2[*BatchOutputLine, error] {
	return func(yield func(*BatchOutputLine, error) bool) {
		rc, err := c.FileContent(ctx, fileID)
		if err != nil {
			yield(nil, err)
			return
		}
		defer rc.Close()
		br := bufio.NewReader(rc)
		for {
			b, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(b)) > 0 {
				var l BatchOutputLine
				if jerr := json.Unmarshal(b, &l); jerr != nil {
					yield(nil, fmt.Errorf("client: file %s: a line is not JSON: %w", fileID, jerr))
					return
				}
				if !yield(&l, nil) {
					return
				}
			}
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(nil, fmt.Errorf("client: file %s: %w", fileID, err))
				return
			}
		}
	}
}
