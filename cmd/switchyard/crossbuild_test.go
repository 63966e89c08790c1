package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// crossTargets are the systems Switchyard builds for besides the one running the tests
// (README "Platforms"). Each stands for a different set of build-tagged files: Windows (not
// Unix), macOS (Unix, not Linux; amd64, where a file tagged only by architecture would
// leak Linux code in) and Linux on arm64 (no seccomp filter).
var crossTargets = []string{"windows/amd64", "darwin/amd64", "darwin/arm64", "linux/arm64", "linux/amd64"}

// TestCrossPlatformVet type-checks every package of the module, tests included, for each
// other target with go vet (cheaper than go build: it links nothing), so that Linux-only
// code outside a build-tagged file fails here and not on a user's Mac or Windows machine.
// It runs with SWITCHYARD_CROSS_VET=1 only: with a cold build cache each target compiles
// every dependency again (minutes each on 2 cores), more than the suite's time allows.
func TestCrossPlatformVet(t *testing.T) {
	if os.Getenv("SWITCHYARD_CROSS_VET") == "" {
		t.Skip("skipping: set SWITCHYARD_CROSS_VET=1 to type-check the module for macOS, Windows and linux/arm64 (compiles every dependency for each; minutes with a cold cache)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goBin); err != nil {
			t.Skip("no go command to cross-compile with")
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range crossTargets {
		goos, goarch, _ := strings.Cut(target, "/")
		if goos == runtime.GOOS && goarch == runtime.GOARCH {
			continue // the CI's own go vet ./... covers it
		}
		t.Run(goos+"_"+goarch, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), goBin, "vet", "./...")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0", "GOFLAGS=")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("GOOS=%s GOARCH=%s go vet ./...: %v\n%s", goos, goarch, err, out)
			}
		})
	}
}
