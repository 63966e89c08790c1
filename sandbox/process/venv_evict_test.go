//go:build linux

package process

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestEvictVenvs: beyond the bound, the least recently used dependency-set virtualenvs go,
// but only those no run can still be using; bases, builds in progress and a use that
// refreshes a virtualenv keep theirs.
func TestEvictVenvs(t *testing.T) {
	now := time.Now()
	dir := t.TempDir()
	mk := func(name string, used time.Time, complete bool) {
		if err := os.MkdirAll(filepath.Join(dir, name, "lib"), 0o755); err != nil {
			t.Fatal(err)
		}
		if complete {
			marker := filepath.Join(dir, name, ".complete")
			if err := os.WriteFile(marker, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(marker, used, used)
		}
	}
	mk("aaaa", now.Add(-10*time.Hour), true)
	mk("bbbb", now.Add(-9*time.Hour), true)
	mk("cccc", now.Add(-8*time.Hour), true)
	mk("dddd", now.Add(-time.Hour), true) // a run may still use it
	mk("eeee", now, true)
	mk("ffff", now.Add(-20*time.Hour), false)          // never completed: not a cached venv
	mk("base-0123", now.Add(-30*time.Hour), true)      // the base of every build
	mk("abcd.build-1", now.Add(-30*time.Hour), false)  // a build in progress
	mk("9999.evicted-x", now.Add(-30*time.Hour), true) // a removal cut short

	// Used a moment ago through the cache: no longer the least recently used.
	if !cachedVenv(filepath.Join(dir, "aaaa"), now) || cachedVenv(filepath.Join(dir, "ffff"), now) {
		t.Fatal("cachedVenv")
	}
	left := func() []string {
		es, _ := os.ReadDir(dir)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return names
	}
	r := &Runner{cacheDir: dir, maxVenvs: 1, log: slog.New(slog.DiscardHandler)}
	r.evictVenvs(now)
	if want := []string{"aaaa", "abcd.build-1", "base-0123", "dddd", "eeee", "ffff"}; !slices.Equal(left(), want) {
		t.Errorf("left %v, want %v (over the bound of 1: the ones used within %s stay)", left(), want, venvIdle)
	}
	r.evictVenvs(now.Add(venvIdle + time.Minute)) // all idle by then: down to the bound
	if want := []string{"abcd.build-1", "base-0123", "eeee", "ffff"}; !slices.Equal(left(), want) {
		t.Errorf("later, left %v, want %v", left(), want)
	}
	r.maxVenvs = -1
	r.evictVenvs(now.Add(100 * time.Hour))
	if len(left()) != 4 {
		t.Errorf("unbounded: %v", left())
	}
}
