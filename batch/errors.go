package batch

import (
	"errors"
	"fmt"
	"strings"
)

// The errors of package batch, for the server to map onto statuses. Compare with errors.Is
// and errors.As.
var (
	// ErrNotFound means the file or batch does not exist, is another owner's, or expired
	// (404). A *NotFoundError matches it.
	ErrNotFound = errors.New("batch: not found")
	// ErrInvalid means a request or an uploaded file breaks a rule (400). A
	// *ValidationError matches it.
	ErrInvalid = errors.New("batch: invalid request")
	// ErrTooLarge means an uploaded file is over the size bound (413). A *ValidationError
	// with TooLarge set matches it.
	ErrTooLarge = errors.New("batch: file too large")
	// ErrConflict means the request does not fit the record's state: cancelling a batch
	// that has ended, deleting the input file of a running batch (409). A *ConflictError
	// matches it.
	ErrConflict = errors.New("batch: conflict with the record's state")
	// ErrTooManyBatches means the owner already has its limit of batches that have not
	// ended (429). A *LimitError matches it.
	ErrTooManyBatches = errors.New("batch: too many unfinished batches")
	// ErrClosed means the service was closed.
	ErrClosed = errors.New("batch: service closed")
	// ErrNoExecutor means Start was called before an Executor was set.
	ErrNoExecutor = errors.New("batch: no Executor (set one with Options.Executor or SetExecutor before Start)")
	// ErrKeyRevoked is what an Executor returns, wrapped, when the key that created the
	// batch no longer authenticates (deleted, revoked, expired or retired): the batch's
	// remaining lines fail with code api_key_revoked.
	ErrKeyRevoked = errors.New("the API key that created this batch no longer exists (deleted, revoked, expired or retired)")
)

// ValidationError names the request field (OpenAI's param) or the line of an uploaded file
// that breaks a rule. It matches ErrInvalid, and ErrTooLarge when TooLarge is set.
type ValidationError struct {
	// Param is the request field: "purpose", "file", "input_file_id", "metadata", ….
	Param string
	// Line is the 1-based line of the file at fault; 0 when the error is not about a line.
	Line int
	// Message says what is wrong and what is accepted.
	Message string
	// TooLarge marks a size bound (413).
	TooLarge bool
}

// Error is the message, prefixed with the line when there is one.
func (e *ValidationError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Message)
	}
	return e.Message
}

// Is matches ErrInvalid, and ErrTooLarge for a size bound.
func (e *ValidationError) Is(target error) bool {
	return target == ErrInvalid || (e.TooLarge && target == ErrTooLarge)
}

func invalid(param, format string, args ...any) *ValidationError {
	return &ValidationError{Param: param, Message: fmt.Sprintf(format, args...)}
}

func invalidLine(line int, format string, args ...any) *ValidationError {
	return &ValidationError{Param: "file", Line: line, Message: fmt.Sprintf(format, args...)}
}

// NotFoundError names what was not found. It matches ErrNotFound.
type NotFoundError struct {
	// What is "file" or "batch"; ID the id asked for; Param the request field that named it
	// ("" for a path parameter).
	What, ID, Param string
}

// Error says which object was not found.
func (e *NotFoundError) Error() string {
	plural := e.What + "s"
	if strings.HasSuffix(e.What, "h") {
		plural = e.What + "es" // batches
	}
	return fmt.Sprintf("no %s with id %q (this key's %s only)", e.What, e.ID, plural)
}

// Is matches ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// ConflictError says why the record's state refuses the request. It matches ErrConflict.
type ConflictError struct{ Message string }

// Error is the message.
func (e *ConflictError) Error() string { return e.Message }

// Is matches ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// DefaultMaxUnfinishedPerOwner is how many batches that have not ended an owner may have by
// default (Options.MaxUnfinishedPerOwner).
const DefaultMaxUnfinishedPerOwner = 100

// LimitError is Create's answer to an owner who has Limit batches that have not ended.
type LimitError struct {
	Limit, Active int
}

// Error says how many batches the key has, the limit, and what to do.
func (e *LimitError) Error() string {
	return fmt.Sprintf("batch: this key already has %d batches that have not ended; the limit is %d per key: wait for one to end or cancel one", e.Active, e.Limit)
}

// Is reports whether target is ErrTooManyBatches.
func (e *LimitError) Is(target error) bool { return target == ErrTooManyBatches }
