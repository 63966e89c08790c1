package trainer

import (
	"errors"
	"fmt"

	"github.com/switchyard-ai/switchyard/fetch"
)

// Errors returned by this package. Compare with errors.Is; the HTTP server maps them to
// statuses (ErrInvalid → 422, ErrNotFound → 404, ErrQueueFull → 503, ErrClosed → 503).
var (
	// ErrInvalid means a request is invalid on its face. A *ValidationError matches it.
	ErrInvalid = errors.New("trainer: invalid request")
	// ErrNotFound means the job or model does not exist or belongs to another owner.
	ErrNotFound = errors.New("trainer: not found")
	// ErrArchived means the router model was archived after a year without use. It also
	// matches ErrNotFound: an archived model no longer answers predictions.
	ErrArchived = errors.New("trainer: router model archived")
	// ErrQueueFull means the training queue is at capacity; retry later.
	ErrQueueFull = errors.New("trainer: training queue is full, retry later")
	// ErrClosed means the service was closed.
	ErrClosed = errors.New("trainer: service closed")
)

// ValidationError names the request field that broke a rule. It matches ErrInvalid.
type ValidationError struct {
	// Field is the wire name of the offending field, e.g. "Data_URLs" or "inputs[3]".
	Field string
	// Message states the rule.
	Message string
}

// Error implements error.
func (e *ValidationError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Message) }

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// archivedError is returned for an archived model; it matches ErrArchived and ErrNotFound.
type archivedError struct{ modelID string }

func (e *archivedError) Error() string {
	return fmt.Sprintf("router model %s was archived after a year without use; train a new router", e.modelID)
}

func (e *archivedError) Is(target error) bool { return target == ErrArchived || target == ErrNotFound }

// DatasetError is why a training job failed on its data: the file (URL), the row when
// one is to blame, and the rule broken. It ends up in the job's error_message.
type DatasetError struct {
	// URL is the dataset file as given in Data_URLs ("" for errors about the combined data).
	// Error prints it through fetch.Redact, without user info or query values.
	URL string
	// Row locates the offending row ("line 7", "record 3"), or "" for file-level errors.
	Row string
	// Message states the problem.
	Message string
}

// Error implements error.
func (e *DatasetError) Error() string {
	s := e.Message
	if e.Row != "" {
		s = e.Row + ": " + s
	}
	if e.URL != "" {
		s = fetch.Redact(e.URL) + ": " + s
	}
	return s
}

// notFoundError names what was not found; it matches ErrNotFound.
type notFoundError struct{ what, id string }

func notFound(what, id string) error { return &notFoundError{what: what, id: id} }

func (e *notFoundError) Error() string { return fmt.Sprintf("%s %q not found", e.what, e.id) }

func (e *notFoundError) Is(target error) bool { return target == ErrNotFound }
