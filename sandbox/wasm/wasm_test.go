package wasm_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/sandbox/sandboxtest"
	"github.com/switchyard-ai/switchyard/sandbox/wasm"
)

// newRunner skips the test only when python.wasm is absent (CI installs it with
// scripts/install-python-wasi.sh); any other problem fails.
func newRunner(t testing.TB) *wasm.Runner {
	t.Helper()
	r, err := wasm.New(wasm.Options{WorkDir: t.TempDir()})
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("wasm backend skipped: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(context.Background()) })
	return r
}

func TestConformance(t *testing.T) {
	r := newRunner(t)
	if err := r.Precompile(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	sandboxtest.Run(t, r)
}

// TestExampleBundle: the shipped example bundle (a thread pool, urllib, a (score, feedback)
// scorer) runs under WASI.
func TestExampleBundle(t *testing.T) {
	sandboxtest.RunExampleBundle(t, newRunner(t), "../../examples/agent-bundle")
}

func TestWrongChecksum(t *testing.T) {
	path := t.TempDir() + "/python.wasm"
	if err := os.WriteFile(path, []byte("\x00asm not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := wasm.New(wasm.Options{WasmPath: path})
	if !errors.Is(err, sandbox.ErrUnavailable) || errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want ErrUnavailable for a bad checksum", err)
	}
}

func TestMissingFile(t *testing.T) {
	_, err := wasm.New(wasm.Options{WasmPath: t.TempDir() + "/absent.wasm"})
	if !errors.Is(err, sandbox.ErrUnavailable) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want ErrUnavailable and fs.ErrNotExist", err)
	}
}
