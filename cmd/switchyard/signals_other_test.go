//go:build !unix

package main

import (
	"context"
	"runtime"
	"strings"
	"testing"
)

// sendReload skips the test: there is no SIGHUP here (serve does not reload).
func sendReload(t *testing.T) {
	t.Helper()
	t.Skip("no SIGHUP on " + runtime.GOOS)
}

// sendBackup skips the test: there is no SIGUSR1 here.
func sendBackup(t *testing.T) {
	t.Helper()
	t.Skip("no SIGUSR1 on " + runtime.GOOS)
}

// serve -h on a system without SIGHUP and SIGUSR1 does not offer them, and says how to
// reload instead.
func TestServeHelpNamesNoUnixSignals(t *testing.T) {
	var out, errb strings.Builder
	if code := run(context.Background(), []string{"serve", "-h"}, &out, &errb); code != 0 {
		t.Fatalf("serve -h: %d", code)
	}
	if s := out.String(); strings.Contains(s, "\n  SIGHUP ") || strings.Contains(s, "\n  SIGUSR1 ") || !strings.Contains(s, "restart serve to read") {
		t.Errorf("serve -h signals section on %s:\n%s", runtime.GOOS, s[strings.LastIndex(s, "signals:"):])
	}
}
