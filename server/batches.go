package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/completions"
)

// Batches plugs OpenAI's Files and Batch APIs (package batch) into the server, run by the
// gateway itself:
//
//   - POST /v1/files (a multipart form: file, purpose "batch", optional
//     expires_after[anchor] and expires_after[seconds]), GET /v1/files (purpose, limit,
//     after, order), GET and DELETE /v1/files/{file_id}, GET /v1/files/{file_id}/content;
//   - POST /v1/batches, GET /v1/batches (after, limit), GET /v1/batches/{batch_id}, POST
//     /v1/batches/{batch_id}/cancel.
//
// Files and batches belong to the key's owner (a virtual key's: its issuer's); another
// owner's are 404. Each line of a batch is answered by this server's own route for the
// batch's endpoint, as a request of the key that created the batch (Batches makes the
// server the service's Executor): the same authentication, rate, budget, model
// restrictions, tags (and the tag batch:<id>), usage log and error bodies. Errors use
// OpenAI's envelope. Register it before the service's Start; the server's Close stops it.
func Batches(svc *batch.Service) Option {
	return func(s *Server) error {
		if svc == nil {
			return errors.New("server: Batches needs a *batch.Service")
		}
		svc.SetExecutor(batch.ExecutorFunc(s.executeBatchLine))
		s.OnClose(svc.Close)
		s.batchRoutes(svc)
		s.AddErrorMapper(batchError)
		return nil
	}
}

// batchError maps package batch's errors onto statuses.
func batchError(err error) *APIError {
	var ve *batch.ValidationError
	var nf *batch.NotFoundError
	var ce *batch.ConflictError
	switch {
	case errors.As(err, &ve):
		ae := Validation(http.StatusBadRequest, "%s", ve.Error())
		if ve.TooLarge {
			msg := ve.Error()
			if ve.Line == 0 {
				msg += " (serve --files-max-bytes)"
			}
			ae = Errorf(http.StatusRequestEntityTooLarge, KindTooLarge, "%s", msg)
		}
		ae.Param = ve.Param
		return ae
	case errors.As(err, &nf):
		ae := NotFound("%s", nf.Error())
		ae.Param = nf.Param
		return ae
	case errors.As(err, &ce):
		return Errorf(http.StatusConflict, KindConflict, "%s", ce.Error())
	case errors.Is(err, batch.ErrTooManyBatches):
		var le *batch.LimitError
		if errors.As(err, &le) {
			err = le // without the wrapping's prefixes
		}
		return Errorf(http.StatusTooManyRequests, KindTooManyRequests, "%s (serve --batches-per-key)", strings.TrimPrefix(err.Error(), "batch: "))
	case errors.Is(err, batch.ErrClosed):
		return Errorf(http.StatusServiceUnavailable, KindUnavailable, "the server is shutting down; retry on another replica or later")
	}
	return nil
}

// fileUploadForm documents the multipart form of POST /v1/files (OpenAPI only).
type fileUploadForm struct {
	File                string `json:"file" jsonschema:"required,format=binary,description=the batch input: JSONL with one request per line ({custom_id; method POST; url; body})"`
	Purpose             string `json:"purpose" jsonschema:"required,enum=batch,description=batch (the only purpose this server keeps for uploads)"`
	ExpiresAfterAnchor  string `json:"expires_after[anchor],omitempty" jsonschema:"enum=created_at"`
	ExpiresAfterSeconds int64  `json:"expires_after[seconds],omitempty" jsonschema:"minimum=3600,maximum=2592000,description=seconds after its creation the file is deleted (default 30 days)"`
}

// uploadFormMemory is how much of an upload's form is held in memory; the file beyond it
// waits in a temporary file (the standard library's multipart form) until it is stored.
const uploadFormMemory = 1 << 20

// batchRoutes registers the files and batches routes.
func (s *Server) batchRoutes(svc *batch.Service) {
	files := svc.Files()
	tags := []string{"Batches"}
	formLimit := files.MaxBytes() + uploadFormMemory
	s.Handle(Route{Method: "POST", Path: "/v1/files", Summary: "Upload a batch input (OpenAI's Files API; purpose batch): checked line by line, stored in the server's store",
		Tags: tags, Request: fileUploadForm{}, RequestContentType: "multipart/form-data", MaxBodyBytes: formLimit,
		MaxBodyHint: fmt.Sprintf("a file of at most %d bytes, serve --files-max-bytes, and its form", files.MaxBytes()),
		Response:    batch.File{}, VirtualKeys: true, Errors: map[int]string{
			400: "a purpose other than batch, or a line of the file that is not a batch request (the message names the line and the field)",
			413: fmt.Sprintf("the file is over the server's limit (serve --files-max-bytes) or holds more than %d requests", batch.MaxRequests),
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			f, err := s.uploadFile(r, files)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, f)
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/v1/files", Summary: "The key's files (batch inputs and outputs), newest first by default",
		Tags: tags, Response: batch.FileList{}, VirtualKeys: true, Query: []QueryParam{
			{Name: "purpose", Description: "batch or batch_output", Enum: []string{batch.PurposeBatch, batch.PurposeBatchOutput}},
			{Name: "limit", Description: "page size 1-10000 (default 10000)", Type: "integer", Minimum: Bound(1), Maximum: Bound(batch.MaxFileListLimit)},
			{Name: "after", Description: "the id of the last file of the previous page"},
			{Name: "order", Description: "desc (newest first; the default) or asc", Enum: []string{"asc", "desc"}},
		}, Errors: map[int]string{400: "a bad parameter (named)"}},
		func(w http.ResponseWriter, r *http.Request) error {
			q := r.URL.Query()
			limit, err := queryInt(q.Get("limit"), "limit")
			if err != nil {
				return err
			}
			list, err := files.List(r.Context(), responsesOwner(r), batch.FileQuery{Purpose: q.Get("purpose"), After: q.Get("after"), Limit: limit, Order: q.Get("order")})
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, list)
			return nil
		})
	notFound := map[int]string{404: "no file of this key has this id (or it expired)"}
	s.Handle(Route{Method: "GET", Path: "/v1/files/{file_id}", Summary: "One file of the key",
		Tags: tags, Response: batch.File{}, VirtualKeys: true, Errors: notFound},
		func(w http.ResponseWriter, r *http.Request) error {
			f, err := files.Get(r.Context(), responsesOwner(r), r.PathValue("file_id"))
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, f)
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/v1/files/{file_id}/content", Summary: "A file's content, as uploaded or as the batch wrote it (JSONL)",
		Tags: tags, ResponseContentTypes: []string{"application/jsonl"}, VirtualKeys: true, Errors: notFound},
		func(w http.ResponseWriter, r *http.Request) error {
			f, rc, err := files.Open(r.Context(), responsesOwner(r), r.PathValue("file_id"))
			if err != nil {
				return err
			}
			defer rc.Close()
			w.Header().Set("Content-Type", "application/jsonl")
			w.Header().Set("Content-Length", strconv.FormatInt(f.Bytes, 10))
			w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Filename}))
			w.WriteHeader(http.StatusOK)
			return copyFlushing(w, rc)
		})
	s.Handle(Route{Method: "DELETE", Path: "/v1/files/{file_id}", Summary: "Delete a file and its content",
		Tags: tags, Response: batch.FileDeletion{}, VirtualKeys: true, Errors: map[int]string{
			404: "no file of this key has this id",
			409: "the file is the input of a batch that has not ended",
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			id := r.PathValue("file_id")
			if err := files.Delete(r.Context(), responsesOwner(r), id); err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, batch.FileDeletion{ID: id, Object: "file", Deleted: true})
			return nil
		})

	s.Handle(Route{Method: "POST", Path: "/v1/batches", Summary: "Run a file of requests through the gateway as the calling key (OpenAI's Batch API), at a bounded concurrency, within 24 hours",
		Tags: tags, Request: batch.CreateRequest{}, Response: batch.Batch{}, VirtualKeys: true, Errors: map[int]string{
			400: "a bad field (named): endpoint, completion_window, metadata, output_expires_after, or an input_file_id that is not a batch input of this key or has a line whose url is not the endpoint",
			429: "the key has its limit of batches that have not ended (serve --batches-per-key)",
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			var req batch.CreateRequest
			if err := decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest, AllowUnknownFields: true}); err != nil {
				return err
			}
			b, err := svc.Create(r.Context(), responsesOwner(r), Credential(r), req)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, b)
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/v1/batches", Summary: "The key's batches, newest first",
		Tags: tags, Response: batch.BatchList{}, VirtualKeys: true, Query: []QueryParam{
			{Name: "limit", Description: "page size 1-100 (default 20)", Type: "integer", Minimum: Bound(1), Maximum: Bound(batch.MaxBatchListLimit)},
			{Name: "after", Description: "the id of the last batch of the previous page"},
		}, Errors: map[int]string{400: "a bad parameter (named)"}},
		func(w http.ResponseWriter, r *http.Request) error {
			limit, err := queryInt(r.URL.Query().Get("limit"), "limit")
			if err != nil {
				return err
			}
			list, err := svc.List(r.Context(), responsesOwner(r), r.URL.Query().Get("after"), limit)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, list)
			return nil
		})
	s.Handle(Route{Method: "GET", Path: "/v1/batches/{batch_id}", Summary: "One batch: its status, counts, usage and files",
		Tags: tags, Response: batch.Batch{}, VirtualKeys: true, Errors: map[int]string{404: "no batch of this key has this id"}},
		func(w http.ResponseWriter, r *http.Request) error {
			b, err := svc.Get(r.Context(), responsesOwner(r), r.PathValue("batch_id"))
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, b)
			return nil
		})
	s.Handle(Route{Method: "POST", Path: "/v1/batches/{batch_id}/cancel", Summary: "Cancel a batch: no more lines are sent, those in flight finish, what was answered is kept in its files",
		Tags: tags, Response: batch.Batch{}, VirtualKeys: true, Errors: map[int]string{
			404: "no batch of this key has this id",
			409: "the batch has ended",
		}},
		func(w http.ResponseWriter, r *http.Request) error {
			b, err := svc.Cancel(r.Context(), responsesOwner(r), r.PathValue("batch_id"))
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, b)
			return nil
		})
}

// queryInt reads an integer query parameter ("" is 0); another value is a 400 naming it.
func queryInt(v, name string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		// 0 is no page size, as on the other item lists (absent: the default).
		ae := Validation(http.StatusBadRequest, "%s must be a positive integer, got %q", name, v)
		ae.Param = name
		return 0, ae
	}
	return n, nil
}

// uploadFile reads POST /v1/files' form and stores its file.
func (s *Server) uploadFile(r *http.Request, files *batch.Files) (batch.File, error) {
	bad := func(param, format string, args ...any) error {
		ae := Validation(http.StatusBadRequest, format, args...)
		ae.Param = param
		return ae
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "multipart/form-data" {
		return batch.File{}, bad("file", "the body must be a multipart/form-data form with the fields file and purpose (got Content-Type %q)", r.Header.Get("Content-Type"))
	}
	err := r.ParseMultipartForm(uploadFormMemory)
	if r.MultipartForm != nil {
		// also when err is set: a bad query string is reported after the form was parsed,
		// with the file spooled to disk (as on the training upload routes)
		defer r.MultipartForm.RemoveAll()
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			ae := Errorf(http.StatusRequestEntityTooLarge, KindTooLarge, "the upload is over this route's limit of %d bytes (a file of at most %d bytes, serve --files-max-bytes, and its form)", mbe.Limit, files.MaxBytes())
			ae.Param = "file"
			return batch.File{}, ae
		}
		if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
			return batch.File{}, Errorf(http.StatusRequestTimeout, KindRequestTimeout, "the request body did not arrive in time (the server's --body-read-timeout)")
		}
		return batch.File{}, bad("file", "reading the multipart form: %v", err)
	}
	form := r.MultipartForm
	fhs := form.File["file"]
	if len(fhs) != 1 {
		return batch.File{}, bad("file", "the form must carry exactly one file in the field \"file\", got %d", len(fhs))
	}
	u := batch.Upload{Filename: fhs[0].Filename, Purpose: strings.TrimSpace(first(form.Value["purpose"]))}
	anchor, secs := first(form.Value["expires_after[anchor]"]), first(form.Value["expires_after[seconds]"])
	if anchor != "" || secs != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(secs), 10, 64)
		if err != nil {
			return batch.File{}, bad("expires_after", "expires_after[seconds] must be an integer, got %q", secs)
		}
		u.ExpiresAfter = &batch.ExpiresAfter{Anchor: anchor, Seconds: n}
	}
	content, err := fhs[0].Open()
	if err != nil {
		return batch.File{}, fmt.Errorf("server: open the uploaded file: %w", err)
	}
	defer content.Close()
	u.Content = content
	return files.Upload(r.Context(), responsesOwner(r), u)
}

// first is the first of vs, "" for none.
func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// batchLineKey marks the context of a batch line's request: dispatch takes the Principal
// it holds, resolved from the batch's credential, instead of a bearer key. Only
// executeBatchLine sets it, on requests made in this process.
type batchLineKey struct{}

// executeBatchLine is the batch service's Executor: it answers a line through the
// server's own handler chain (access log, middleware, dispatch, the endpoint's route) as a
// request of the key that created the batch, tagged batch:<id>.
func (s *Server) executeBatchLine(ctx context.Context, c batch.Call) (batch.Answer, error) {
	p, err := s.auth.PrincipalOf(ctx, c.Credential)
	if errors.Is(err, ErrNoKey) {
		return batch.Answer{}, fmt.Errorf("server: batch %s: %w", c.BatchID, batch.ErrKeyRevoked)
	}
	if errors.Is(err, ErrKeyStoreUnavailable) && ctx.Err() == nil {
		// The database restarting: the 503 a request of the key gets now, which the run
		// sends again once it answers (not an internal error kept as the line's answer).
		s.log.WarnContext(ctx, "batch: the key store does not answer; the line will be sent again", "batch", c.BatchID, "request_id", c.RequestID, "err", err)
		body, _ := json.Marshal(completions.OpenAIErrorBody{Error: completions.OpenAIErrorObject{
			Message: "the key store does not answer (its database may be restarting); retry shortly", Type: "server_error"}})
		return batch.Answer{StatusCode: http.StatusServiceUnavailable, RequestID: c.RequestID, Body: body, Retryable: true, RetryAfter: time.Second}, nil
	}
	if err != nil {
		return batch.Answer{}, fmt.Errorf("server: batch %s: %w", c.BatchID, err)
	}
	var billed, transient, timedOut atomic.Bool
	lctx := completions.WithBilledFlag(context.WithValue(ctx, batchLineKey{}, p), &billed)
	lctx = completions.WithTransientFlag(lctx, &transient)
	lctx = completions.WithTimedOutFlag(lctx, &timedOut)
	req, err := http.NewRequestWithContext(lctx, http.MethodPost, c.URL, bytes.NewReader(c.Body))
	if err != nil {
		return batch.Answer{}, fmt.Errorf("server: batch %s: %w", c.BatchID, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", c.RequestID)
	req.Header.Set("X-Switchyard-Tags", "batch:"+c.BatchID) // completions.BatchTagPrefix: not counted against MaxTags
	req.RemoteAddr = "batch"
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if ctx.Err() != nil && (rec.Code == 499 || rec.Code >= 500) && !billed.Load() {
		return batch.Answer{}, ctx.Err() // cut by a shutdown: not an answer (a billed one is kept)
	}
	ans := batch.Answer{StatusCode: rec.Code, RequestID: rec.Header().Get("X-Request-Id"), Body: rec.Body.Bytes(), Billed: billed.Load(),
		TimedOut: timedOut.Load()} // sent again fewer times (batch.Options.MaxTimeoutRetries)
	// The gateway's own final failure says x-should-retry: false (it retried and fell back
	// already, and an SDK retrying at once would only repeat it); when every model was out
	// of service for the while, a batch line, which has hours, is sent again after a
	// backoff, as LiteLLM's and OpenAI's batch users expect of a passing outage (lineRetry:
	// a bounded number of times, never once billed).
	if retryableStatus(rec.Code) && (rec.Header().Get("X-Should-Retry") != "false" || transient.Load()) {
		ans.Retryable = true
		if secs, err := strconv.Atoi(rec.Header().Get("Retry-After")); err == nil && secs > 0 {
			ans.RetryAfter = time.Duration(secs) * time.Second
		}
	}
	return ans, nil
}

// retryableStatus: a client may send a request answered with status again, as OpenAI's
// SDKs do, when the answer does not say x-should-retry: false — a 429 and the server
// errors, but 501 and 505, which no retry changes.
func retryableStatus(status int) bool {
	switch status {
	case http.StatusTooManyRequests:
		return true
	case http.StatusNotImplemented, http.StatusHTTPVersionNotSupported:
		return false
	}
	return status >= 500 && status < 600
}
