package routing

import (
	"errors"
	"fmt"
)

// Errors returned by the routing package. Compare with errors.Is.
var (
	// ErrInvalid means the request is malformed or breaks a rule; the HTTP server answers 400.
	// Every such error is a *ValidationError naming the field.
	ErrInvalid = errors.New("routing: invalid request")
	// ErrNotFound means a referenced object (preference_id, previous_session, a session id)
	// does not exist for this owner; the HTTP server answers 404.
	ErrNotFound = errors.New("routing: not found")
)

// ValidationError reports one broken rule of a model selection request. It matches
// ErrInvalid via errors.Is.
type ValidationError struct {
	// Field is the JSON path of the offending field, e.g. "messages[2].role" or "body".
	Field string
	// Message states the rule that was broken.
	Message string
}

// Error returns "<field>: <message>".
func (e *ValidationError) Error() string { return e.Field + ": " + e.Message }

// Is reports whether target is ErrInvalid.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Message: fmt.Sprintf(format, args...)}
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
	case "previous_session", "session_id":
		what = "session"
	}
	return fmt.Sprintf("%s: no %s with id %q", e.Field, what, e.ID)
}

// Is reports whether target is ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// Unwrap returns the underlying cause.
func (e *NotFoundError) Unwrap() error { return e.Err }
