package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestRetentionFlags: serve documents the retention flags with their environment
// variables, reads them from the environment, keeps forever by default (0 and negative
// reach the libraries as negative), and refuses a spend retention under a day.
func TestRetentionFlags(t *testing.T) {
	var out, errb strings.Builder
	if code := run(context.Background(), []string{"serve", "-h"}, &out, &errb); code != 0 {
		t.Fatalf("serve -h: %d", code)
	}
	for _, want := range []string{"-conversation-retention", "SWITCHYARD_CONVERSATION_RETENTION", "-openai-conversation-retention",
		"SWITCHYARD_OPENAI_CONVERSATION_RETENTION", "-spend-retention", "SWITCHYARD_SPEND_RETENTION"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("serve -h does not name %s", want)
		}
	}

	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c := serveFlags(fs)
	env := map[string]string{"SWITCHYARD_CONVERSATION_RETENTION": "2160h", "SWITCHYARD_SPEND_RETENTION": "-1s"}
	if err := parseFlags(fs, nil, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	r := c.Retention
	if r.Conversations != 2160*time.Hour || r.OpenAIConversations != 0 || r.Spend != -time.Second {
		t.Fatalf("from the environment: %+v", r)
	}
	if got := libraryRetention(r.Conversations); got != 2160*time.Hour {
		t.Errorf("library retention of 2160h: %v", got)
	}
	for _, forever := range []time.Duration{0, -time.Second} {
		if got := libraryRetention(forever); got >= 0 {
			t.Errorf("library retention of %v: %v, want negative (forever)", forever, got)
		}
	}
	if err := r.check(); err != nil {
		t.Errorf("check: %v", err)
	}
	if err := (&retentionFlags{Spend: time.Hour}).check(); err == nil || !strings.Contains(err.Error(), "--spend-retention") {
		t.Errorf("--spend-retention 1h: err %v, want a refusal naming the flag", err)
	}
}

// TestSweepEveryStopsAndCounts: the periodic sweep runs at once, counts and logs what it
// deleted, and returns when its context ends.
func TestSweepEveryStopsAndCounts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	counted := map[string]int{}
	calls := 0
	var logs strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		sweepEvery(ctx, "things", "things", func(context.Context, time.Time) (int, error) {
			calls++
			cancel() // the first run ends the loop
			return 7, nil
		}, time.Hour, slog.New(slog.NewTextHandler(&logs, nil)), func(kind string, n int) { counted[kind] += n })
	}()
	<-done
	if calls != 1 || counted["things"] != 7 {
		t.Errorf("calls %d, counted %v; want 1 and 7", calls, counted)
	}
	if !strings.Contains(logs.String(), "deleted=7") {
		t.Errorf("log %q does not say what was deleted", logs.String())
	}
}
