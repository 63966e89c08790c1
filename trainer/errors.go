package trainer

import (
	"errors"
	"fmt"

	"github.com/switchyard-ai/switchyard/fetch"
)

// Errors returned by this package. Compare with errors.Is; the HTTP server maps them to
// statuses (ErrInvalid → 422, ErrNotFound → 404, ErrQueueFull → 503, ErrClosed → 503,
// ErrTooManyJobs → 429, ErrFinished → 409, ErrStillRunning → 409).
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
	// ErrTooManyJobs means the owner already has the per-owner number of jobs queued or
	// running; a *JobLimitError matches it.
	ErrTooManyJobs = errors.New("trainer: too many training jobs for this key")
	// ErrFinished means a cancel was asked for a job that already ended.
	ErrFinished = errors.New("trainer: job already finished")
	// ErrStillRunning means a delete cancelled a running job that has not stopped within
	// DeleteWait; the job is not deleted yet (retry the delete).
	ErrStillRunning = errors.New("trainer: job still stopping")
)

// errCancelled is the cause a running job's context ends with when the caller cancels it.
var errCancelled = errors.New("cancelled by the caller")

// errShutdown is the cause a running job's context ends with when Close stops the service.
var errShutdown = errors.New("service shutting down")

// Error messages of cancelled jobs.
const (
	cancelledBeforeStart  = "cancelled by the caller before it started"
	cancelledWhileRunning = "cancelled by the caller while it was running; no router was saved"
)

// JobLimitError is Submit's answer to an owner who already has Limit jobs queued or
// running. It matches ErrTooManyJobs.
type JobLimitError struct {
	// Limit is the per-owner maximum of queued plus running jobs.
	Limit int
	// Active is how many the owner has.
	Active int
}

// Error implements error.
func (e *JobLimitError) Error() string {
	return fmt.Sprintf("this key already has %d training jobs queued or running; the limit is %d per key: wait for one to finish or cancel one", e.Active, e.Limit)
}

// Is makes errors.Is(err, ErrTooManyJobs) true.
func (e *JobLimitError) Is(target error) bool { return target == ErrTooManyJobs }

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
