package inference

import (
	"errors"
	"fmt"
)

// Errors returned by this package. Compare with errors.Is.
var (
	// ErrInvalid means the input cannot be used: too few classes or usable rows, an empty
	// text, an unknown embedder, a corrupt model, and so on. A *ValidationError matches it.
	ErrInvalid = errors.New("inference: invalid input")
	// ErrUnavailable means a backend could not be loaded or run (for example the ONNX
	// model directory is missing or the runtime failed).
	ErrUnavailable = errors.New("inference: backend unavailable")
)

// ValidationError describes which field broke which rule. It matches ErrInvalid.
type ValidationError struct {
	// Field names the offending field, e.g. "examples[3].text" or "opts.Embedder".
	Field string
	// Message states the rule that was broken.
	Message string
}

// Error implements error.
func (e *ValidationError) Error() string {
	return fmt.Sprintf("inference: %s: %s", e.Field, e.Message)
}

// Is makes errors.Is(err, ErrInvalid) true for a *ValidationError.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Message: fmt.Sprintf(format, args...)}
}
