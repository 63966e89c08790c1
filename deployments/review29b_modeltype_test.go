package deployments

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestReview29bModelNotString: a litellm_params.model that is not a string (a number, a
// list) is a FieldError naming litellm_params.model that says it must be a string, not
// that it is missing; one absent or null is still "is required".
func TestReview29bModelNotString(t *testing.T) {
	svc, _ := review27cService(t, memstore.New(), providers.FromEnv(func(string) string { return "" }, providers.Options{}), nil)
	for _, model := range []any{123.0, []any{"openai/gpt-4o"}} {
		_, err := svc.Add(context.Background(), Input{ModelName: "team", LiteLLMParams: map[string]any{"model": model}})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "litellm_params.model" || !strings.Contains(fe.Message, "must be a string") {
			t.Errorf("model %v: %v, want a FieldError naming litellm_params.model: must be a string", model, err)
		}
	}
	for _, params := range []map[string]any{{"api_key": "k"}, {"model": nil}} {
		_, err := svc.Add(context.Background(), Input{ModelName: "team", LiteLLMParams: params})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "litellm_params.model" || !strings.Contains(fe.Message, "is required") {
			t.Errorf("params %v: %v, want a FieldError naming litellm_params.model: is required", params, err)
		}
	}
}
