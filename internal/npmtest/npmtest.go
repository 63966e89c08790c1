// Package npmtest installs npm packages for the tests that run official JavaScript SDKs and
// agent CLIs against Switchyard (the client and server packages' tests).
package npmtest

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// Install installs the npm package spec into a temporary directory of its own (so tests
// installing in parallel never share one; npm's cache makes a repeated install quick) and
// returns node's path and the directory. It skips the test, saying why, under -short,
// without node and npm, or when the package cannot be installed (what names it).
func Install(t testing.TB, spec, what string) (node, dir string) {
	t.Helper()
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
	install := exec.CommandContext(ctx, npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix", dir, spec)
	if out, err := install.CombinedOutput(); err != nil {
		t.Skipf("skipping: npm install %s failed (no registry?): %v\n%s", spec, err, out)
	}
	return node, dir
}
