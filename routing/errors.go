package routing

import (
	"errors"
	"fmt"
	"strings"

	"github.com/switchyard-ai/switchyard/validation"
)

// Errors returned by the routing package. Compare with errors.Is.
var (
	// ErrInvalid means the request is malformed or breaks a rule; the HTTP server answers 400.
	// Every such error is a *ValidationError naming the field.
	ErrInvalid = errors.New("routing: invalid request")
	// ErrNotFound means a referenced object (preference_id, previous_session, a session id)
	// does not exist for this owner; the HTTP server answers 404.
	ErrNotFound = errors.New("routing: not found")
	// ErrTimeout means the selection did not finish within the request's timeout and the
	// request named no default; the HTTP server answers 504.
	ErrTimeout = errors.New("routing: selection did not finish within the request's timeout")
)

// ValidationError is the field and rule a bad input broke ([validation.Error]); the ones
// this package returns match ErrInvalid (and validation.ErrInvalid) via errors.Is.
type ValidationError = validation.Error

// ErrZeroSelector answers calls on a Selector not made by NewSelector.
var ErrZeroSelector = errors.New("routing: the Selector was not made by NewSelector")

func invalid(field, format string, args ...any) *ValidationError {
	return validation.New(ErrInvalid, field, format, args...)
}

// NotFoundError reports a reference that names nothing this owner can see. It matches
// ErrNotFound via errors.Is.
type NotFoundError struct {
	// Field is the request field holding the reference, e.g. "preference_id".
	Field string
	// ID is the identifier that was not found.
	ID string
	// Err is the underlying cause, if any.
	Err error
}

// Error returns "<field>: no such <thing> \"<id>\"".
func (e *NotFoundError) Error() string {
	what := "object"
	switch e.Field {
	case "preference_id":
		what = "router model (preference)"
		if strings.HasPrefix(e.ID, PreferencePrefix) {
			what = "preference"
		}
	case "router_model_id":
		what = "router model"
	case "previous_session", "session_id":
		what = "session"
	}
	return fmt.Sprintf("%s: no %s with id %q", e.Field, what, e.ID)
}

// Is reports whether target is ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// Unwrap returns the underlying cause.
func (e *NotFoundError) Unwrap() error { return e.Err }
