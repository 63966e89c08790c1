package client_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// TestModelAccessDeniedIsForbidden: the /v1/ routes' 401 of type key_model_access_denied
// (LiteLLM's answer to a model outside the key's models) matches ErrForbidden, as the 403
// it was, not ErrUnauthorized; another 401 still matches ErrUnauthorized only.
func TestModelAccessDeniedIsForbidden(t *testing.T) {
	for _, tc := range []struct {
		body      string
		want, not error
	}{
		{`{"error":{"message":"model not allowed for this key: x","type":"key_model_access_denied","param":"model","code":"401"}}`, client.ErrForbidden, client.ErrUnauthorized},
		{`{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}`, client.ErrUnauthorized, client.ErrForbidden},
	} {
		c := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(tc.body))
		})
		_, err := c.RouterTrainer().Train(context.Background(), "https://example.com/a.json")
		if !errors.Is(err, tc.want) || errors.Is(err, tc.not) {
			t.Errorf("%s: err = %v; want it to match %v and not %v", tc.body, err, tc.want, tc.not)
		}
	}
}
