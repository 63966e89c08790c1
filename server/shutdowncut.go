package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/switchyard-ai/switchyard/completions"
)

// ErrShuttingDown is the cause to cancel the requests' contexts with when a graceful shutdown
// runs out of time (serve's --shutdown-timeout): give it to context.WithCancelCause's cancel
// function of the http.Server's BaseContext. A request cut so, and not yet answered, gets a
// 503 with Retry-After saying the server is shutting down (a client retries it on another
// replica or after the restart) instead of a connection closed without an answer; a stream
// already started ends with an error event.
var ErrShuttingDown = errors.New("server: shutting down, the request did not finish within the shutdown timeout; retry it")

// shutdownRetryAfter is the Retry-After of a request cut at shutdown: a replica behind the
// same address, or the restarted server, takes it.
const shutdownRetryAfter = "1"

// cutAtShutdown answers a request whose context was cancelled with ErrShuttingDown while its
// handler ran (err is that handler's error): a 503 with Retry-After. It reports false for any
// other request.
func (s *Server) cutAtShutdown(w http.ResponseWriter, r *http.Request, err error) bool {
	if r.Context().Err() == nil || !errors.Is(context.Cause(r.Context()), ErrShuttingDown) {
		return false
	}
	rid := requestID(r.Context())
	s.log.WarnContext(r.Context(), "request cut at shutdown: answered 503", "request_id", rid, "method", r.Method, "path", LogPath(r.URL.Path), "err", err)
	w.Header().Set("Retry-After", shutdownRetryAfter)
	e := Errorf(http.StatusServiceUnavailable, KindUnavailable, "the server is shutting down and could not finish this request in time; retry it (request id %s)", rid)
	e.Retryable = true
	s.respondError(w, r, e, nil)
	return true
}

// gatewayClosedRefusal is the answer to a request the gateway refused because it is closed
// (completions.ErrGatewayClosed; serve closes it at shutdown, after the HTTP server
// stopped): the server's shutdown refused it, so, as a request it cuts, a 503 with
// Retry-After asking to send it again.
func gatewayClosedRefusal() *APIError {
	ae := Errorf(http.StatusServiceUnavailable, KindUnavailable, "the server is shutting down and no longer takes this request; retry it")
	ae.Retryable = true
	ae.Header = http.Header{"Retry-After": {shutdownRetryAfter}}
	return ae
}

// cutRefusalContext is the context to record the refusal of a request answered err with:
// ctx, or for one the closed gateway refused (completions.ErrGatewayClosed) ctx cancelled
// with that cause, so that the gateway records it cut (RequestRecord.CutBy: outcome cut, a
// 503 failure in the metrics) as a request the shutdown cut, not a failure of its own.
func cutRefusalContext(ctx context.Context, err error) context.Context {
	if !errors.Is(err, completions.ErrGatewayClosed) {
		return ctx
	}
	cut, cancel := context.WithCancelCause(ctx)
	cancel(completions.ErrGatewayClosed)
	return cut
}
