//go:build linux

package process_test

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/sandbox/process"
	"github.com/switchyard-ai/switchyard/sandbox/sandboxtest"
)

func newRunner(t testing.TB, opts process.Options) *process.Runner {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r, err := process.New(opts)
	if err != nil {
		t.Fatalf("process backend unavailable (CI must install the Debian package bubblewrap and run as a user allowed to create user namespaces): %v", err)
	}
	return r
}

// workDir returns a work directory the sandbox's unprivileged host uid can reach
// (t.TempDir() is private to the test's user).
func workDir(t testing.TB) string {
	dir, err := os.MkdirTemp("", "switchyard-sandbox-test-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestConformance(t *testing.T) {
	work := workDir(t)
	// Nothing outside the index is reachable: DEPENDENCIES fail with a clear error.
	r := newRunner(t, process.Options{WorkDir: work, CacheDir: workDir(t), PackageIndex: "http://127.0.0.1:1/simple"})
	sandboxtest.Run(t, r)
	entries, err := os.ReadDir(work)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("workspaces left behind: %d", len(entries))
	}
}

func TestUnreachableWorkDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root drops to an unprivileged host uid")
	}
	_, err := process.New(process.Options{WorkDir: t.TempDir()}) // 0700, not reachable by uid 65534
	if !errors.Is(err, sandbox.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}

// TestNoNamespacesRefuses: when bubblewrap cannot create namespaces (a stand-in that fails
// the way bwrap does without user namespaces), New refuses instead of running unsandboxed.
func TestNoNamespacesRefuses(t *testing.T) {
	fake := filepath.Join(workDir(t), "bwrap") // reachable by the unprivileged host uid
	script := "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := process.New(process.Options{Bwrap: fake, WorkDir: workDir(t)})
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "non-privileged user namespaces") {
		t.Fatalf("err = %v, want ErrUnavailable quoting bubblewrap", err)
	}
}

func TestMissingBubblewrap(t *testing.T) {
	_, err := process.New(process.Options{Bwrap: "/nonexistent/bwrap"})
	if !errors.Is(err, sandbox.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}

// TestExampleBundle: the shipped example bundle runs in the process sandbox.
func TestExampleBundle(t *testing.T) {
	sandboxtest.RunExampleBundle(t, newRunner(t, process.Options{WorkDir: workDir(t)}), "../../examples/agent-bundle")
}
