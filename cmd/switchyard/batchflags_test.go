package main

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
)

// --batch-expire-interval reaches batch.Options: its default is the package's, 0 turns the
// periodic check off (batch.Options reads 0 as "default", so it must become negative), and a
// negative flag is refused.
func TestBatchExpireIntervalFlag(t *testing.T) {
	parse := func(t *testing.T, env map[string]string) (*serveConfig, error) {
		t.Helper()
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		c := serveFlags(fs)
		if err := parseFlags(fs, nil, func(k string) string { return env[k] }); err != nil {
			t.Fatal(err)
		}
		return c, c.Batches.check()
	}
	for _, tc := range []struct {
		env  string
		want time.Duration // < 0: off
	}{{"", batch.DefaultExpireInterval}, {"90s", 90 * time.Second}, {"0", -1}} {
		c, err := parse(t, map[string]string{"SWITCHYARD_BATCH_EXPIRE_INTERVAL": tc.env})
		if err != nil {
			t.Fatalf("%q: %v", tc.env, err)
		}
		got := c.Batches.options().ExpireInterval
		if (tc.want < 0 && got >= 0) || (tc.want >= 0 && got != tc.want) {
			t.Errorf("SWITCHYARD_BATCH_EXPIRE_INTERVAL=%q: ExpireInterval %v, want %v", tc.env, got, tc.want)
		}
	}
	if _, err := parse(t, map[string]string{"SWITCHYARD_BATCH_EXPIRE_INTERVAL": "-1s"}); err == nil || !strings.Contains(err.Error(), "--batch-expire-interval") {
		t.Fatalf("negative interval: %v", err)
	}
}

// --batch-timeout-retries reaches batch.Options.MaxTimeoutRetries: its default is the
// package's, 0 is never (negative there), and values outside 0..6 are refused naming it.
func TestBatchTimeoutRetriesFlag(t *testing.T) {
	parse := func(t *testing.T, v string) (*serveConfig, error) {
		t.Helper()
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		c := serveFlags(fs)
		if err := parseFlags(fs, nil, func(k string) string { return map[string]string{"SWITCHYARD_BATCH_TIMEOUT_RETRIES": v}[k] }); err != nil {
			t.Fatal(err)
		}
		return c, c.Batches.check()
	}
	for _, tc := range []struct {
		env  string
		want int
	}{{"", batch.DefaultMaxTimeoutRetries}, {"3", 3}, {"0", -1}} {
		c, err := parse(t, tc.env)
		if err != nil {
			t.Fatalf("%q: %v", tc.env, err)
		}
		if got := c.Batches.options().MaxTimeoutRetries; got != tc.want {
			t.Errorf("SWITCHYARD_BATCH_TIMEOUT_RETRIES=%q: MaxTimeoutRetries %d, want %d", tc.env, got, tc.want)
		}
	}
	for _, bad := range []string{"-1", "7"} {
		if _, err := parse(t, bad); err == nil || !strings.Contains(err.Error(), "--batch-timeout-retries") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
