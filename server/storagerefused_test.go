package server

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// fakeFullDiskDriver is a test fake of a database whose disk is full: while full, every write
// fails as boltstore's does (store.ErrUnwritable wrapping the system's ENOSPC); reads work.
type fakeFullDiskDriver struct {
	store.Driver
	full atomic.Bool
}

func (d *fakeFullDiskDriver) refused() error {
	if !d.full.Load() {
		return nil
	}
	return fmt.Errorf("boltstore: %w: %w", store.ErrUnwritable,
		&fs.PathError{Op: "write", Path: "/data/switchyard.db", Err: syscall.ENOSPC})
}

func (d *fakeFullDiskDriver) Put(ctx context.Context, c store.Collection, key string, v []byte) error {
	if err := d.refused(); err != nil {
		return err
	}
	return d.Driver.Put(ctx, c, key, v)
}

func (d *fakeFullDiskDriver) Delete(ctx context.Context, c store.Collection, key string) error {
	if err := d.refused(); err != nil {
		return err
	}
	return d.Driver.Delete(ctx, c, key)
}

func (d *fakeFullDiskDriver) Update(ctx context.Context, fn func(store.Tx) error) error {
	if err := d.refused(); err != nil {
		return err
	}
	return d.Driver.Update(ctx, fn)
}

// TestStorageFullIs503: with the data directory's disk full (or its file system read-only),
// a request that writes was an anonymous 500 "internal error"; it is a 503 with Retry-After
// saying the server's storage cannot be written (model selection keeps the spec's 500, with
// the same message), a virtual key's chat, whose spend cannot be recorded, is that 503 too,
// and the same request succeeds
// once space is freed, without a restart.
func TestStorageFullIs503(t *testing.T) {
	d := &fakeFullDiskDriver{Driver: newTestDriver(t)}
	hs, s := keysServer(t, store.New(d), 0)
	g := litellmGenerate(t, s, `{"key_alias":"before"}`)
	d.full.Store(true)
	resp, b := post(t, hs.URL+"/key/generate", testKey, `{"key_alias":"during"}`)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(string(b), "storage cannot be written") || resp.Header.Get("X-Should-Retry") == "false" {
		t.Errorf("POST /key/generate with the disk full: %d Retry-After %q x-should-retry %q %s", resp.StatusCode,
			resp.Header.Get("Retry-After"), resp.Header.Get("X-Should-Retry"), b)
	}
	resp, b = post(t, hs.URL+"/api/v1/model-select", testKey,
		`{"messages":[{"role":"user","content":"hi"}],"llm_providers":[{"provider":"openai","model":"gpt-4o"},{"provider":"openai","model":"gpt-4o-mini"}]}`)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(b), "storage cannot be written") {
		t.Errorf("model selection with the disk full: %d %s (the spec's 500, naming the cause)", resp.StatusCode, b)
	}
	// A virtual key's spend must be recorded before its call: a 503 too, not an unbilled answer.
	if st, b := chatStatus(t, hs.URL, g.Key, "openai/ok"); st != http.StatusServiceUnavailable || !strings.Contains(string(b), "storage cannot be written") {
		t.Errorf("a virtual key's chat with the disk full: %d %s", st, b)
	}
	d.full.Store(false)
	if resp, b := post(t, hs.URL+"/key/generate", testKey, `{"key_alias":"during"}`); resp.StatusCode != http.StatusOK {
		t.Errorf("once space is freed: %d %s", resp.StatusCode, b)
	}
}
