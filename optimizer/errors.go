package optimizer

import (
	"errors"
	"fmt"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/validation"
)

// Errors returned by the package. Compare with errors.Is.
var (
	// ErrInvalid means a request is malformed; the error is a *ValidationError naming the
	// field.
	ErrInvalid = errors.New("optimizer: invalid request")
	// ErrNotFound means the job (or artifact) does not exist or belongs to another owner.
	ErrNotFound = errors.New("optimizer: not found")
	// ErrNotFinished means results were asked for a job that is still queued or running;
	// the error is a *NotFinishedError carrying the status.
	ErrNotFinished = errors.New("optimizer: job not finished")
	// ErrFinished means a cancel was asked for a job that already ended; the error is a
	// *FinishedError carrying the status.
	ErrFinished = errors.New("optimizer: job already finished")
	// ErrQueueFull means too many jobs are waiting; retry later.
	ErrQueueFull = errors.New("optimizer: too many queued jobs")
	// ErrClosed means the service was closed.
	ErrClosed = errors.New("optimizer: service closed")
	// ErrTooManyJobs means the owner already has the per-owner number of jobs queued or
	// running; a *JobLimitError matches it.
	ErrTooManyJobs = errors.New("optimizer: too many optimization jobs for this key")
	// ErrStillRunning means a delete cancelled a running job that has not stopped within
	// DeleteWait; the job is not deleted yet (retry the delete).
	ErrStillRunning = errors.New("optimizer: job still stopping")
	// ErrBundle means the bundle (ZIP, agent.py, eval.py or dataset.json) is unusable; the
	// error is a *BundleError naming the file and the problem.
	ErrBundle = errors.New("optimizer: invalid bundle")
	// ErrProposal means the proposer returned nothing usable.
	ErrProposal = errors.New("optimizer: unusable proposal")
	// ErrStarted means Start was called on a service already started.
	ErrStarted = errors.New("optimizer: already started")
)

// ValidationError is the field and rule a bad input broke ([validation.Error]); the ones
// this package returns match ErrInvalid (and validation.ErrInvalid) via errors.Is.
type ValidationError = validation.Error

func invalid(field, format string, args ...any) error {
	return validation.New(ErrInvalid, field, format, args...)
}

// BundleError is a problem with one file of the bundle (File is "bundle" for the ZIP
// itself). It matches ErrBundle.
type BundleError struct {
	File    string
	Problem string
}

// Error implements error.
func (e *BundleError) Error() string { return e.File + ": " + e.Problem }

// Is reports whether target is ErrBundle.
func (e *BundleError) Is(target error) bool { return target == ErrBundle }

func bundleErr(file, format string, args ...any) error {
	return &BundleError{File: file, Problem: fmt.Sprintf(format, args...)}
}

// SubmitError is Submit's answer to a bundle that could not be fetched or is unusable: the
// submission's input_url is at fault, for the reason Err gives (File "bundle" for the fetch
// or the ZIP itself). It matches ErrBundle; no job was made.
type SubmitError struct {
	Err *BundleError
}

// Field is the submission field at fault: input_url.
func (e *SubmitError) Field() string { return "input_url" }

// Error implements error: "input_url: invalid bundle: dataset.json: row 3 (counting from 0) has no ...".
func (e *SubmitError) Error() string {
	if e.Err.File == "bundle" {
		return "input_url: the bundle " + e.Err.Problem
	}
	return "input_url: invalid bundle: " + e.Err.Error()
}

// Unwrap returns the *BundleError.
func (e *SubmitError) Unwrap() error { return e.Err }

// NotFinishedError is returned by Results for a job that is still queued or running. It
// matches ErrNotFinished.
type NotFinishedError struct {
	JobID  string
	Status Status
}

// Error implements error.
func (e *NotFinishedError) Error() string {
	return fmt.Sprintf("optimization job %s is %s; results are available once it is completed, failed or interrupted", e.JobID, e.Status)
}

// Is reports whether target is ErrNotFinished.
func (e *NotFinishedError) Is(target error) bool { return target == ErrNotFinished }

// FinishedError is Cancel's answer for a job that has already ended. It matches
// ErrFinished.
type FinishedError struct {
	JobID  string
	Status Status
}

// Error implements error.
func (e *FinishedError) Error() string {
	return fmt.Sprintf("optimization job %s has already ended (%s); only a queued or running job can be cancelled", e.JobID, e.Status)
}

// Is reports whether target is ErrFinished.
func (e *FinishedError) Is(target error) bool { return target == ErrFinished }

// JobLimitError is Submit's answer to an owner who already has Limit jobs queued or
// running ([jobqueue.LimitError]). The ones this package returns match ErrTooManyJobs.
type JobLimitError = jobqueue.LimitError

func jobLimit(limit, active int) *JobLimitError {
	return &JobLimitError{Limit: limit, Active: active, Jobs: "optimization", Kind: ErrTooManyJobs}
}
