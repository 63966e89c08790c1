package client_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// The file, batch, preference and cache calls given an empty id fail like the other
// id-taking calls: no request is sent (an empty id named the collection, so DELETE
// /api/v1/cache/ or GET /v1/files/ reached the server), and the error matches
// client.ErrMissingID.
func TestReview22lEmptyIDSendsNothing(t *testing.T) {
	var calls atomic.Int64
	c := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		t.Errorf("request sent: %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	})
	ctx := context.Background()
	iterErr := func(seq func(func(*client.BatchOutputLine, error) bool)) error {
		for _, err := range seq {
			if err != nil {
				return err
			}
		}
		return nil
	}
	byName := map[string]func() error{
		"File":             func() error { _, err := c.File(ctx, ""); return err },
		"FileContent":      func() error { _, err := c.FileContent(ctx, ""); return err },
		"DeleteFile":       func() error { return c.DeleteFile(ctx, "") },
		"Batch":            func() error { _, err := c.Batch(ctx, ""); return err },
		"CancelBatch":      func() error { _, err := c.CancelBatch(ctx, ""); return err },
		"WaitBatch":        func() error { _, err := c.WaitBatch(ctx, "", 1); return err },
		"BatchOutput":      func() error { return iterErr(c.BatchOutput(ctx, "")) },
		"Preference":       func() error { _, err := c.Preference(ctx, ""); return err },
		"DeletePreference": func() error { return c.DeletePreference(ctx, "") },
		"RenamePreference": func() error { _, err := c.RenamePreference(ctx, "", "x"); return err },
		"DeleteCached":     func() error { return c.DeleteCached(ctx, "") },
	}
	for name, call := range byName {
		if err := call(); !errors.Is(err, client.ErrMissingID) {
			t.Errorf("%s(\"\"): err = %v; want one matching client.ErrMissingID", name, err)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("%d requests sent for an empty id", n)
	}
}
