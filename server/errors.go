package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Error kinds written in the "error" field of every failure body.
const (
	KindBadRequest     = "Bad Request"
	KindUnauthorized   = "Unauthorized"
	KindForbidden      = "Forbidden"
	KindNotFound       = "Not Found"
	KindMethodNotAllow = "Method Not Allowed"
	KindConflict       = "Conflict"
	// KindPreconditionFailed is a conditional request (If-Match) whose condition no longer
	// holds (412).
	KindPreconditionFailed = "Precondition Failed"
	KindTooLarge           = "Payload Too Large"
	KindRequestTimeout     = "Request Timeout"
	KindValidation         = "Validation Error"
	KindTooManyRequests    = "Too Many Requests"
	KindInternal           = "Internal Server Error"
	KindBadGateway         = "Bad Gateway"
	KindGatewayTimeout     = "Gateway Timeout"
	KindContentFiltered    = "Content Filtered"
	// KindGuardrail is a request or answer a configured guardrail refused (400).
	KindGuardrail   = "Guardrail Violation"
	KindUnavailable = "Service Unavailable"
)

// APIError is a failure with its HTTP status and the body {"error": Kind, "message": Message}.
// Handlers return it (or a capability error that an ErrorMapper turns into one).
type APIError struct {
	Status  int    `json:"-"`
	Kind    string `json:"error"`
	Message string `json:"message"`
	// Extra fields merged into the body (e.g. "attempts" for a 502 from the gateway).
	Extra map[string]any `json:"-"`
	// Header values to set on the response (e.g. Retry-After).
	Header http.Header `json:"-"`
	// Param is the request field a decoding error is about, for the OpenAI envelope's
	// "param" ("" when none).
	Param string `json:"-"`
	// Retryable: the OpenAI envelope leaves out x-should-retry: false (a limit that clears
	// with time, which the SDKs may wait out).
	Retryable bool `json:"-"`
}

// Error is "<status> <kind>: <message>".
func (e *APIError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Kind, e.Message) }

// Errorf builds an APIError.
func Errorf(status int, kind, format string, args ...any) *APIError {
	return &APIError{Status: status, Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Validation builds a validation failure with the given status (422 for most endpoints, 400
// for model selection, as the spec says).
func Validation(status int, format string, args ...any) *APIError {
	kind := KindValidation
	if status == http.StatusBadRequest {
		kind = KindBadRequest
	}
	return Errorf(status, kind, format, args...)
}

// paramError is a 400 about field, named in the answer's param.
func paramError(field, format string, args ...any) *APIError {
	e := Validation(http.StatusBadRequest, format, args...)
	e.Param = field
	return e
}

// forbiddenParam is a 403 about field, named in the answer's param.
func forbiddenParam(field, format string, args ...any) *APIError {
	e := Errorf(http.StatusForbidden, KindForbidden, format, args...)
	e.Param = field
	return e
}

// NotFound builds a 404.
func NotFound(format string, args ...any) *APIError {
	return Errorf(http.StatusNotFound, KindNotFound, format, args...)
}

// ErrorMapper turns a capability's typed error into an APIError, or returns nil when the
// error is not one of its own. Each capability's option registers one.
type ErrorMapper func(err error) *APIError

func (s *Server) toAPIError(err error) *APIError {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae
	}
	for _, m := range s.mappers {
		if ae := m(err); ae != nil {
			return ae
		}
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return Errorf(http.StatusRequestEntityTooLarge, KindTooLarge, "request body exceeds the limit of %d bytes (serve --max-body-bytes)", mbe.Limit)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeAPIError(w http.ResponseWriter, e *APIError) {
	for k, vs := range e.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	body := map[string]any{"error": e.Kind, "message": e.Message}
	for k, v := range e.Extra {
		if k != "error" && k != "message" {
			body[k] = v
		}
	}
	writeJSON(w, e.Status, body)
}
