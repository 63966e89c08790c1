package server

import (
	"errors"
	"net/http"

	"github.com/switchyard-ai/switchyard/store"
)

// storageRetryAfter is the Retry-After of an answer to a write the store refused (disk full,
// read-only file system): long enough for an operator's alert to be acted on, short enough
// that a client resumes soon after the space is freed.
const storageRetryAfter = "30"

// modelSelectionPaths are the spec's model selection routes, whose failures the spec lists as
// 400, 404 and 500: a refused write keeps the 500 there, with the same message.
var modelSelectionPaths = map[string]bool{
	"/api/v1/model-select":        true,
	"/v1/modelSelect":             true,
	"/v2/modelRouter/modelSelect": true,
}

// storageRefused answers a request whose write the store refused for want of space or
// because its file system is read-only (store.ErrUnwritable): the operator gets an error log
// naming the cause (the file and the system's error), the client a 503 with Retry-After that
// says the fault is the server's and passes, instead of an anonymous 500. Nothing was
// written, and the same request succeeds once the fault clears, without a restart. It
// reports false when err is not such a failure.
func (s *Server) storageRefused(w http.ResponseWriter, r *http.Request, err error) bool {
	var ae *APIError
	if !errors.Is(err, store.ErrUnwritable) || errors.As(err, &ae) {
		return false
	}
	rid := requestID(r.Context())
	s.log.ErrorContext(r.Context(), "the store refuses writes (disk full or read-only file system): free space or make the data directory writable; writes succeed again without a restart",
		"request_id", rid, "method", r.Method, "path", LogPath(r.URL.Path), "err", err)
	status := http.StatusServiceUnavailable
	kind := KindUnavailable
	if modelSelectionPaths[r.URL.Path] {
		status, kind = http.StatusInternalServerError, KindInternal
	}
	w.Header().Set("Retry-After", storageRetryAfter)
	e := Errorf(status, kind, "the server's storage cannot be written right now (disk full or read-only file system); retry later (request id %s)", rid)
	e.Retryable = true
	s.respondError(w, r, e, nil)
	return true
}
