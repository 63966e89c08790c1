package trainer

import (
	"errors"
	"fmt"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/validation"
)

// Errors returned by this package. Compare with errors.Is; the HTTP server maps them to
// statuses (ErrInvalid → 422, ErrNotFound → 404, ErrQueueFull → 503, ErrClosed → 503,
// ErrTooManyJobs → 429, ErrFinished → 409, ErrStillRunning → 409, ErrTooLarge → 413).
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
	// ErrDataset means training data is unusable (a format, a row, a limit): a *DatasetError
	// from ParseDataset or DetectFormat matches it. A job failed this way reports the same
	// text as its ErrorMessage; retrying it with the same data fails again.
	ErrDataset = errors.New("trainer: unusable training data")
	// ErrTooLarge means an uploaded dataset is over MaxUploadBytes. The *ValidationError
	// naming upload that reports it wraps it (and matches ErrInvalid too); the HTTP server
	// answers it with 413.
	ErrTooLarge = errors.New("trainer: uploaded dataset too large")
	// ErrNoStore means New was given no store.
	ErrNoStore = errors.New("trainer: nil store")
	// ErrStarted means Start was called on a service already started.
	ErrStarted = errors.New("trainer: already started")
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
// running ([jobqueue.LimitError]). The ones this package returns match ErrTooManyJobs.
type JobLimitError = jobqueue.LimitError

func jobLimit(limit, active int) *JobLimitError {
	return &JobLimitError{Limit: limit, Active: active, Jobs: "training", Kind: ErrTooManyJobs}
}

// ValidationError is the field and rule a bad input broke ([validation.Error]); the ones
// this package returns match ErrInvalid (and validation.ErrInvalid) via errors.Is.
type ValidationError = validation.Error

func invalid(field, format string, args ...any) error {
	return validation.New(ErrInvalid, field, format, args...)
}

// archivedError is returned for an archived model; it matches ErrArchived and ErrNotFound.
type archivedError struct{ modelID string }

func (e *archivedError) Error() string {
	return fmt.Sprintf("model_id: router model %s was archived after a year without use; train a new router", e.modelID)
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

// Is makes errors.Is(err, ErrDataset) true.
func (e *DatasetError) Is(target error) bool { return target == ErrDataset }

// notFoundError names what was not found, after the request field that named it (task_id
// for a training job, model_id for a router model, as the spec's operations call them);
// it matches ErrNotFound.
type notFoundError struct{ what, id string }

func notFound(what, id string) error { return &notFoundError{what: what, id: id} }

func (e *notFoundError) Error() string {
	field := "model_id"
	if e.what == "training job" {
		field = "task_id"
	}
	return fmt.Sprintf("%s: %s %q not found", field, e.what, e.id)
}

func (e *notFoundError) Is(target error) bool { return target == ErrNotFound }

// Kinds of a failed job's error (JobStatus.ErrorKind), so a caller can tell data that will
// fail again from a failure worth a retry without parsing ErrorMessage.
const (
	// ErrorKindInvalidData: the training data is unusable (its format, a row, a limit;
	// ErrDataset). Submitting the same data again fails again.
	ErrorKindInvalidData = "invalid_data"
	// ErrorKindFetch: the data's URL could not be fetched (refused, unreachable, an HTTP
	// error, too large, stalled). It may answer later.
	ErrorKindFetch = "fetch_failed"
	// ErrorKindCancelled: the caller cancelled the job.
	ErrorKindCancelled = "cancelled"
	// ErrorKindInterrupted: the job's worker stopped or died while running it too often.
	ErrorKindInterrupted = "interrupted"
	// ErrorKindInternal: the server failed (storage, a bug); submitting again may work.
	ErrorKindInternal = "internal"
)

// errorKind classifies a job's failure.
func errorKind(err error) string {
	switch {
	case errors.Is(err, ErrDataset):
		return ErrorKindInvalidData
	case errors.Is(err, fetch.ErrFetch):
		return ErrorKindFetch
	}
	return ErrorKindInternal
}
