package wasm_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/sandbox/sandboxtest"
	"github.com/switchyard-ai/switchyard/sandbox/wasm"
)

// shared is the package's Runner, compiled once: compiling python.wasm is most of a
// small job's cost (seconds on a quiet machine, a minute on a loaded one), and a test's
// deadline is for its job, not for the compilation.
var shared struct {
	once    sync.Once
	runner  *wasm.Runner
	workDir string
	err     error
}

// TestMain closes the shared Runner and removes its work directory.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared.runner != nil {
		shared.runner.Close(context.Background())
	}
	if shared.workDir != "" {
		os.RemoveAll(shared.workDir)
	}
	os.Exit(code)
}

// newRunner returns the shared Runner, with python.wasm compiled for the default memory
// cap before any test's deadline starts. It skips the test only when python.wasm is absent
// (CI installs it with scripts/install-python-wasi.sh); any other problem fails.
func newRunner(t testing.TB) *wasm.Runner {
	t.Helper()
	shared.once.Do(func() {
		if shared.workDir, shared.err = os.MkdirTemp("", "switchyard-wasm-test-"); shared.err != nil {
			return
		}
		if shared.runner, shared.err = wasm.New(wasm.Options{WorkDir: shared.workDir}); shared.err != nil {
			return
		}
		shared.err = shared.runner.Precompile(context.Background(), 0)
	})
	if errors.Is(shared.err, fs.ErrNotExist) {
		t.Skipf("wasm backend skipped: %v", shared.err)
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.runner
}

func TestConformance(t *testing.T) {
	sandboxtest.Run(t, newRunner(t))
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
