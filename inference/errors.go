package inference

import (
	"errors"

	"github.com/switchyard-ai/switchyard/validation"
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

// ValidationError is the field and rule a bad input broke ([validation.Error]); the ones
// this package returns match ErrInvalid (and validation.ErrInvalid) via errors.Is.
type ValidationError = validation.Error

func invalid(field, format string, args ...any) error {
	return validation.New(ErrInvalid, field, format, args...)
}
