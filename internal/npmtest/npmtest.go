// Package npmtest installs npm packages for the tests that run official JavaScript SDKs and
// agent CLIs against Switchyard (the client and server packages' tests).
package npmtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Install installs the npm package spec into a temporary directory of its own (so tests
// installing in parallel never share one; npm's cache makes a repeated install quick) and
// returns node's path and the directory. It skips the test, saying why, under -short,
// without node and npm, or when the package cannot be installed (what names it).
func Install(t testing.TB, spec, what string) (node, dir string) {
	t.Helper()
	return InstallAll(t, what, spec)
}

// InstallAll is Install for several packages into one directory.
func InstallAll(t testing.TB, what string, specs ...string) (node, dir string) {
	t.Helper()
	spec := strings.Join(specs, " ")
	if testing.Short() {
		t.Skipf("skipping: -short (installs the npm package %s)", spec)
	}
	node, err1 := exec.LookPath("node")
	npm, err2 := exec.LookPath("npm")
	if err1 != nil || err2 != nil {
		t.Skipf("skipping: node and npm are needed to install and run %s", what)
	}
	dir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := append([]string{"install", "--silent", "--no-audit", "--no-fund", "--prefix", dir}, specs...)
	install := exec.CommandContext(ctx, npm, args...)
	if out, err := install.CombinedOutput(); err != nil {
		t.Skipf("skipping: npm install %s failed (no registry?): %v\n%s", spec, err, out)
	}
	return node, dir
}

// Unpack puts the npm package spec into dir/node_modules/name without its dependencies
// (npm pack, then tar), for a test that runs only the part of a package that needs none of
// its heavy dependencies. It skips the test as Install does when npm cannot fetch it.
func Unpack(t testing.TB, dir, spec, name string) {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skipf("skipping: npm is needed to fetch %s", spec)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pack := exec.CommandContext(ctx, npm, "pack", "--silent", "--pack-destination", dir, spec)
	out, err := pack.Output()
	if err != nil {
		t.Skipf("skipping: npm pack %s failed (no registry?): %v", spec, err)
	}
	tgz := filepath.Join(dir, strings.TrimSpace(string(out)))
	dst := filepath.Join(dir, "node_modules", name)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(ctx, "tar", "xzf", tgz, "-C", dst, "--strip-components", "1").CombinedOutput(); err != nil {
		t.Fatalf("unpacking %s: %v\n%s", tgz, err, out)
	}
}
