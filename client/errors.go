package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Error is a failure answered by the server: its HTTP status and the "error" (kind) and
// "message" fields of the uniform error body. Fields beyond those two (e.g. the gateway's
// "attempts") are kept raw in Extra. Answers of the OpenAI-compatible endpoint carry
// OpenAI's envelope {"error": {"message", "type", "param", "code"}}: Kind is then its
// "type" (e.g. "invalid_request_error") and Extra holds "param" and "code" when set.
type Error struct {
	// Status is the HTTP status code.
	Status int
	// Kind is the "error" field, e.g. "Validation Error", "Not Found", "Unauthorized".
	Kind string
	// Message is the "message" field, naming the field and rule for validation failures.
	Message string
	// RetryAfter is the server's Retry-After hint, given in seconds or as an HTTP date
	// (0 when absent).
	RetryAfter time.Duration
	// Code and Param are OpenAI's error code (e.g. "model_not_found", "invalid_api_key")
	// and the offending field, from the OpenAI envelope the /v1/ routes answer with; empty
	// otherwise.
	Code, Param string
	// RequestID is the x-request-id the server answered with: the id under which the
	// request is in the usage history (GET /api/v1/usage/requests, /spend/logs?request_id=) and
	// the server's logs; quote it when reporting a failure. Empty when the answer had none.
	RequestID string
	// NoRetry is true when the server said the request must not be resent
	// (x-should-retry: false): it already retried and fell back, or retrying cannot help.
	NoRetry bool
	// Extra holds any other fields of the error body.
	Extra map[string]json.RawMessage
}

// Error is "switchyard: <status> <kind>: <message>", followed by " (request id <id>)" when
// the answer carried one.
func (e *Error) Error() string {
	kind := e.Kind
	if kind == "" {
		kind = http.StatusText(e.Status)
	}
	var s string
	if e.Message == "" {
		s = fmt.Sprintf("switchyard: %d %s", e.Status, kind)
	} else {
		s = fmt.Sprintf("switchyard: %d %s: %s", e.Status, kind, e.Message)
	}
	if e.RequestID != "" {
		s += " (request id " + e.RequestID + ")"
	}
	return s
}

// Is lets errors.Is match an *Error against the sentinel errors of this package by status.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrInvalid:
		return e.Status == http.StatusBadRequest || e.Status == http.StatusUnprocessableEntity
	case ErrConflict:
		return e.Status == http.StatusConflict
	case ErrPreconditionFailed:
		return e.Status == http.StatusPreconditionFailed
	case ErrRateLimited:
		return e.Status == http.StatusTooManyRequests
	case ErrForbidden:
		// The /v1/ routes refuse a model outside the key's as LiteLLM does: a 401 whose
		// type is key_model_access_denied; still a refusal of the call, not of the key.
		return e.Status == http.StatusForbidden || e.Status == http.StatusUnauthorized && e.Kind == modelAccessDenied
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized && e.Kind != modelAccessDenied
	case ErrTooLarge:
		return e.Status == http.StatusRequestEntityTooLarge
	case ErrUnavailable:
		return e.Status == http.StatusServiceUnavailable
	case ErrGuardrailBlocked:
		return e.Status == http.StatusBadRequest && (e.Kind == "Guardrail Violation" || e.Code == "guardrail_violation")
	}
	return false
}

// modelAccessDenied is the OpenAI error type (Error.Kind) of the /v1/ routes' 401 for a
// model the key may not call (LiteLLM's).
const modelAccessDenied = "key_model_access_denied"

// Sentinels matched by errors.Is against an *Error's status.
var (
	// ErrNotFound matches 404 answers.
	ErrNotFound = errors.New("not found")
	// ErrUnauthorized matches 401 answers (missing or wrong key), not the /v1/ routes' 401
	// key_model_access_denied of a model the key may not call (ErrForbidden matches that).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrInvalid matches 400 and 422 answers (the request was rejected as invalid).
	ErrInvalid = errors.New("invalid request")
	// ErrConflict matches 409 answers (e.g. results of an optimization not finished).
	ErrConflict = errors.New("conflict")
	// ErrPreconditionFailed matches a 412: a conditional request (RotateKeyIfMatch,
	// KeyUpdate.IfMatch) whose resource changed since the version given; nothing changed.
	ErrPreconditionFailed = errors.New("precondition failed")
	// ErrRateLimited matches 429 answers.
	ErrRateLimited = errors.New("rate limited")
	// ErrForbidden matches 403 answers (a virtual key outside its models or routes), and the
	// /v1/ routes' 401 of type key_model_access_denied (LiteLLM's answer to a model outside
	// the key's models).
	ErrForbidden = errors.New("forbidden")
	// ErrTooLarge matches 413 answers (a request body over the server's limit).
	ErrTooLarge = errors.New("request too large")
	// ErrUnavailable matches 503 answers (a training or optimization queue full, a server
	// shutting down); the *Error's RetryAfter says when to try again.
	ErrUnavailable = errors.New("service unavailable")
	// ErrGuardrailBlocked matches the 400 of a request or answer a server's guardrail
	// refused (its message names the guardrail).
	ErrGuardrailBlocked = errors.New("blocked by a guardrail")
)

// readError builds an *Error from a non-2xx response.
func readError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	e := &Error{Status: resp.StatusCode, NoRetry: strings.EqualFold(resp.Header.Get("X-Should-Retry"), "false"),
		RequestID: resp.Header.Get("X-Request-Id")}
	e.RetryAfter, _ = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	var body map[string]json.RawMessage
	if json.Unmarshal(b, &body) == nil {
		var envelope map[string]json.RawMessage
		if json.Unmarshal(body["error"], &envelope) == nil && envelope != nil {
			// OpenAI's envelope (POST /v1/chat/completions): {"error": {"message", "type", ...}}.
			body = envelope
			_ = json.Unmarshal(body["type"], &e.Kind)
			_ = json.Unmarshal(body["code"], &e.Code)
			_ = json.Unmarshal(body["param"], &e.Param)
			delete(body, "type")
			delete(body, "code")
			delete(body, "param")
		} else {
			_ = json.Unmarshal(body["error"], &e.Kind)
			delete(body, "error")
		}
		_ = json.Unmarshal(body["message"], &e.Message)
		delete(body, "message")
		for k, v := range body {
			if string(v) == "null" {
				delete(body, k)
			}
		}
		if len(body) > 0 {
			e.Extra = body
		}
	} else {
		e.Message = strings.TrimSpace(string(b))
		if len(e.Message) > 200 {
			e.Message = e.Message[:200] + "…"
		}
	}
	if e.Kind == "" {
		e.Kind = http.StatusText(resp.StatusCode)
	}
	return e
}
