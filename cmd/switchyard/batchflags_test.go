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
