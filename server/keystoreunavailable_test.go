package server

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// fakeUnreachableKeysDriver is a test fake of a database that stops answering (a
// PostgreSQL restart under a replica): while down, every read of the keys fails.
type fakeUnreachableKeysDriver struct {
	store.Driver
	down atomic.Bool
}

func (d *fakeUnreachableKeysDriver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	if d.down.Load() && (c == store.APIKeys || c == store.ScopedKeys) {
		return nil, errors.New("failed to connect: dial unix /tmp/pg/.s.PGSQL.5432: connect: no such file or directory")
	}
	return d.Driver.Get(ctx, c, key)
}

// TestKeyStoreUnavailableIs503: while the database restarted, a virtual key's requests were
// a 500 "internal error", which Switchyard's own client does not retry; they are a 503 with
// Retry-After now, on the OpenAI-compatible and native routes, and the key works again once
// the store answers.
func TestKeyStoreUnavailableIs503(t *testing.T) {
	d := &fakeUnreachableKeysDriver{Driver: newTestDriver(t)}
	hs, s := keysServer(t, store.New(d), 0)
	g := litellmGenerate(t, s, `{"key_alias":"bot"}`)
	d.down.Store(true)
	for _, path := range []string{"/v1/chat/completions", "/api/v1/chat/completions"} {
		resp, b := post(t, hs.URL+path, g.Key, `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" || resp.Header.Get("X-Should-Retry") == "false" {
			t.Errorf("POST %s with the store down: %d Retry-After %q x-should-retry %q %s", path, resp.StatusCode,
				resp.Header.Get("Retry-After"), resp.Header.Get("X-Should-Retry"), b)
		}
	}
	d.down.Store(false)
	if st, b := chatStatus(t, hs.URL, g.Key, "openai/ok"); st != http.StatusOK {
		t.Errorf("once the store answers: %d %s", st, b)
	}
}
