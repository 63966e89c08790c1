package completions

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of the gateway. Compare with errors.Is / errors.As. The HTTP server maps them:
// ErrInvalid (and *ValidationError) → 422, ErrNotFound → 404, ErrModelNotAllowed → 403,
// ErrBudgetExceeded → 429, *AllFailedError → 502.
var (
	// ErrInvalid means the request is malformed; errors of type *ValidationError match it.
	ErrInvalid = errors.New("completions: invalid request")
	// ErrNotFound means the conversation does not exist or belongs to another caller.
	ErrNotFound = errors.New("completions: conversation not found")
	// ErrBudgetExceeded means the caller's Budget has no calls or tokens left.
	ErrBudgetExceeded = errors.New("completions: budget exceeded")
	// ErrModelNotAllowed means the caller's Budget does not allow a requested model.
	ErrModelNotAllowed = errors.New("completions: model not allowed for this key")
	// ErrAllFailed is matched by *AllFailedError.
	ErrAllFailed = errors.New("completions: all models failed")
	// ErrStreamFailed is matched by *StreamError.
	ErrStreamFailed = errors.New("completions: stream failed after it started")
)

// ValidationError names the offending request field and the rule it breaks.
type ValidationError struct {
	Field   string
	Message string
}

// Error returns "field: message".
func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Is makes a *ValidationError match ErrInvalid.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// AllFailedError reports that every attempt (every model, every retry) failed.
type AllFailedError struct {
	Attempts []Attempt
}

// Error lists every attempt's model and failure.
func (e *AllFailedError) Error() string {
	var b strings.Builder
	b.WriteString("all models failed: ")
	for i, a := range e.Attempts {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(a.Model)
		b.WriteString(": ")
		b.WriteString(a.Error)
	}
	return b.String()
}

// Is makes an *AllFailedError match ErrAllFailed.
func (e *AllFailedError) Is(target error) bool { return target == ErrAllFailed }

// StreamError reports that a stream failed after fragments had been delivered; the
// delivered text is incomplete and must not be taken as an answer.
type StreamError struct {
	// Model is the "provider/model" that was streaming.
	Model string
	// Kind is the failure's providers.ErrorKind name.
	Kind string
	// Err is the cause.
	Err error
}

// Error names the model and the kind of failure.
func (e *StreamError) Error() string {
	return fmt.Sprintf("stream from %s failed after it started (%s): %v", e.Model, e.Kind, e.Err)
}

// Unwrap returns the cause.
func (e *StreamError) Unwrap() error { return e.Err }

// Is makes a *StreamError match ErrStreamFailed.
func (e *StreamError) Is(target error) bool { return target == ErrStreamFailed }
