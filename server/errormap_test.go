package server

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/optimizer"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/trainer"
	"github.com/switchyard-ai/switchyard/validation"
)

// Every package's validation error is one type (validation.Error); each capability's mapper
// must still answer only its own package's, with its own status (routing's is a 400).
func TestEachMapperAnswersOnlyItsOwnValidationErrors(t *testing.T) {
	mappers := []struct {
		name   string
		kind   error
		m      ErrorMapper
		status int
		// The optimizer answers the spec's messages verbatim: its messages name their field.
		message string
	}{
		{"routing", routing.ErrInvalid, modelSelectionError, http.StatusBadRequest, "some_field: must be 1-5"},
		{"completions", completions.ErrInvalid, completionsError, http.StatusUnprocessableEntity, "some_field: must be 1-5"},
		{"trainer", trainer.ErrInvalid, trainerError, http.StatusUnprocessableEntity, "some_field: must be 1-5"},
		{"optimizer", optimizer.ErrInvalid, optimizerError, http.StatusUnprocessableEntity, "must be 1-5"},
	}
	for _, raised := range mappers {
		err := fmt.Errorf("wrapped: %w", validation.New(raised.kind, "some_field", "must be %d-%d", 1, 5))
		for _, m := range mappers {
			ae := m.m(err)
			if m.name != raised.name {
				if ae != nil && ae.Status != http.StatusInternalServerError {
					t.Errorf("%s's mapper answered %s's validation error with %d %q", m.name, raised.name, ae.Status, ae.Message)
				}
				continue
			}
			if ae == nil || ae.Status != m.status || ae.Message != m.message {
				t.Errorf("%s's own validation error mapped to %+v, want %d %q", m.name, ae, m.status, m.message)
			}
		}
	}
	if errors.Is(validation.New(routing.ErrInvalid, "f", "x"), trainer.ErrInvalid) {
		t.Error("a routing validation error matches trainer.ErrInvalid")
	}
}
