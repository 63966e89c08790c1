package validation_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/switchyard-ai/switchyard/validation"
)

var (
	errRouting = errors.New("routing: invalid request")
	errTrainer = errors.New("trainer: invalid request")
)

func TestErrorMatchesItsKindOnly(t *testing.T) {
	err := fmt.Errorf("select: %w", validation.New(errRouting, "messages[0].role", "must be one of %s", "user, assistant"))
	if !errors.Is(err, errRouting) || !errors.Is(err, validation.ErrInvalid) {
		t.Errorf("%v does not match its kind and validation.ErrInvalid", err)
	}
	if errors.Is(err, errTrainer) {
		t.Errorf("%v matches another package's sentinel", err)
	}
	var ve *validation.Error
	if !errors.As(err, &ve) || ve.Field != "messages[0].role" || ve.Message != "must be one of user, assistant" {
		t.Errorf("errors.As = %+v", ve)
	}
}

func TestErrorText(t *testing.T) {
	for _, c := range []struct {
		e    *validation.Error
		want string
	}{
		{validation.New(errTrainer, "Data_URLs", "at most %d URLs", 100), "Data_URLs: at most 100 URLs"},
		{validation.New(errTrainer, "n_iterations", "n_iterations must be 1-50"), "n_iterations must be 1-50"},
		{validation.New(errTrainer, "", "body must be a JSON object"), "body must be a JSON object"},
		{&validation.Error{Field: "x", Message: "bad"}, "x: bad"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
	if errors.Is(&validation.Error{Field: "x", Message: "bad"}, errTrainer) {
		t.Error("an Error without a Kind matches a package sentinel")
	}
}
