package client_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// Every status the server answers has a sentinel errors.Is matches, as the Python client
// has a class per status: 403 ErrForbidden, 413 ErrTooLarge, 503 ErrUnavailable (the
// training or optimization queue full, a server shutting down), besides the earlier ones.
func TestReview22iSentinelsPerStatus(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   error
	}{
		{403, client.ErrForbidden},
		{413, client.ErrTooLarge},
		{503, client.ErrUnavailable},
		{404, client.ErrNotFound},
		{409, client.ErrConflict},
		{422, client.ErrInvalid},
		{429, client.ErrRateLimited},
	} {
		c := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(tc.status)
			w.Write([]byte(`{"error":"E","message":"m"}`))
		})
		tr := c.RouterTrainer()
		_, err := tr.Train(context.Background(), "https://example.com/a.json")
		if !errors.Is(err, tc.want) {
			t.Errorf("%d: err = %v; want it to match %v", tc.status, err, tc.want)
		}
		for _, other := range []error{client.ErrForbidden, client.ErrTooLarge, client.ErrUnavailable} {
			if other != tc.want && errors.Is(err, other) {
				t.Errorf("%d: err also matches %v", tc.status, other)
			}
		}
	}
}
