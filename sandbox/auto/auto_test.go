package auto_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/sandbox/auto"
	"github.com/switchyard-ai/switchyard/sandbox/process"
	"github.com/switchyard-ai/switchyard/sandbox/wasm"
)

func TestPrefersProcess(t *testing.T) {
	dir, err := os.MkdirTemp("", "switchyard-auto-*")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := auto.New(auto.Options{Process: process.Options{WorkDir: dir}})
	if err != nil {
		t.Fatalf("New: %v (CI installs bubblewrap)", err)
	}
	if r.Name() != "process" {
		t.Fatalf("backend = %s, want process", r.Name())
	}
}

func TestFallsBackToWasm(t *testing.T) {
	if _, err := os.Stat(wasm.DefaultPath()); err != nil {
		t.Skipf("wasm backend skipped: python.wasm absent at %s", wasm.DefaultPath())
	}
	r, err := auto.New(auto.Options{Process: process.Options{Bwrap: "/nonexistent/bwrap"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Name() != "wasm" {
		t.Fatalf("backend = %s, want wasm", r.Name())
	}
}

func TestNeitherIsUnavailable(t *testing.T) {
	_, err := auto.New(auto.Options{
		Process: process.Options{Bwrap: "/nonexistent/bwrap"},
		Wasm:    wasm.Options{WasmPath: "/nonexistent/python.wasm"},
	})
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "bubblewrap") || !strings.Contains(err.Error(), "python.wasm") {
		t.Fatalf("err = %v, want ErrUnavailable naming both backends", err)
	}
}
