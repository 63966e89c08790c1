package boltstore

import (
	"go/build"
	"os"
	"strings"
	"testing"
)

// bboltSystems are the systems bbolt builds for (its own files: bolt_unix.go and
// bolt_windows.go, with aix, android, linux, openbsd and solaris variants): js, wasip1
// and plan9 have no file locking or memory mapping it can use.
var bboltSystems = []string{"aix", "android", "darwin", "dragonfly", "freebsd", "illumos", "ios", "linux", "netbsd", "openbsd", "solaris", "windows"}

// TestEveryFileBuildsSomewhere: each of the package's files is compiled for at least one
// system bbolt (hence this package) builds for — a file tagged for none of them is code
// no build ever type-checks, which rots unseen.
func TestEveryFileBuildsSomewhere(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		built := false
		for _, goos := range bboltSystems {
			for _, goarch := range []string{"amd64", "arm64"} {
				ctx := build.Default
				ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = goos, goarch, false
				ok, err := ctx.MatchFile(".", name)
				if err != nil {
					t.Fatal(err)
				}
				built = built || ok
			}
		}
		if !built {
			t.Errorf("%s builds for none of the systems bbolt builds for (%v)", name, bboltSystems)
		}
	}
}
