// Package validation holds the one error type every Switchyard package returns for a
// request or input that breaks a rule: the field it is about and the rule, tied to the
// raising package's own ErrInvalid sentinel so that errors.Is keeps telling packages apart
// (the HTTP server answers routing's with 400 and the others' with 422).
//
// Each package exposes the type under its own name (routing.ValidationError,
// completions.ValidationError, …) as an alias of [Error]; errors.As with any of them finds
// the first validation error in a chain whatever package raised it, so check
// errors.Is(err, pkg.ErrInvalid) when the package matters.
package validation

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is matched by every *Error, whatever package raised it: errors.Is(err,
// validation.ErrInvalid) asks "was this refused as invalid input?" across packages.
var ErrInvalid = errors.New("invalid input")

// Error is one broken rule: the field and what is wrong with it.
type Error struct {
	// Field is the path of the offending field as the caller wrote it, e.g.
	// "messages[2].role", "Data_URLs", "inputs[3]" or "opts.Embedder"; "" when the error is
	// about the request as a whole.
	Field string
	// Message states the rule that was broken. It may already name the field (the spec's
	// messages do, e.g. "n_iterations must be 1-50").
	Message string
	// Kind is the raising package's sentinel (routing.ErrInvalid, trainer.ErrInvalid, …);
	// errors.Is(err, Kind) is true. Nil for an Error not raised by a package.
	Kind error
	// Err is the underlying cause when there is one (e.g. providers.ErrUnknownProvider for an
	// unknown provider name); Unwrap returns it.
	Err error
}

// New returns an Error of kind about field, its message formatted as by fmt.Sprintf.
func New(kind error, field, format string, args ...any) *Error {
	return &Error{Field: field, Message: fmt.Sprintf(format, args...), Kind: kind}
}

// Error returns "<field>: <message>", or the message alone when there is no field or the
// message already starts with it.
func (e *Error) Error() string {
	if e.Field == "" || strings.HasPrefix(e.Message, e.Field) {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Is reports whether target is ErrInvalid or the raising package's sentinel.
func (e *Error) Is(target error) bool {
	return target == ErrInvalid || (e.Kind != nil && target == e.Kind)
}

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.Err }
