//go:build unix

package main

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
)

// sendReload sends this process SIGHUP: the serve under test reads its files again.
func sendReload(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
}

// sendBackup sends this process SIGUSR1: the serve under test writes a backup.
func sendBackup(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
}

// serve -h lists the signals serve handles here: Unix has SIGHUP and SIGUSR1.
func TestServeHelpNamesUnixSignals(t *testing.T) {
	var out, errb strings.Builder
	if code := run(context.Background(), []string{"serve", "-h"}, &out, &errb); code != 0 {
		t.Fatalf("serve -h: %d", code)
	}
	for _, want := range []string{"SIGINT, SIGTERM", "\n  SIGHUP ", "\n  SIGUSR1 "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("serve -h does not list %q", want)
		}
	}
}
