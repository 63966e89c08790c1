package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestReview20bAlertWebhookNeverPrinted: a webhook's URL may hold its secret (user:password,
// a query token, a Slack /services/T/B/<secret> path): serve refusing a bad one, from a
// flag or the environment, and serve starting with a good one, print its scheme and host
// at most.
func TestReview20bAlertWebhookNeverPrinted(t *testing.T) {
	secrets := []string{"SECRETTOKEN", "hunter2", "ops:"}
	bad := "ftp://ops:hunter2@hooks.example.com/services/T0/B0/SECRETTOKEN?token=SECRETTOKEN"
	for name, setup := range map[string]func() []string{
		"flag": func() []string { return []string{"--alert-webhook", "slack:" + bad} },
		"env": func() []string {
			t.Setenv("SWITCHYARD_ALERT_WEBHOOK", "hooks.slack.com/services/T0/B0/SECRETTOKEN")
			return nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, setup()...)
			stdout, stderr := &syncBuffer{}, &syncBuffer{}
			if code := run(context.Background(), args, stdout, stderr); code == 0 {
				t.Fatal("serve accepted a bad --alert-webhook")
			}
			out := stdout.String() + stderr.String()
			if !strings.Contains(out, "alert-webhook") {
				t.Fatalf("the error does not name the flag: %s", out)
			}
			for _, s := range secrets {
				if strings.Contains(out, s) {
					t.Errorf("serve printed the webhook's secret %q: %s", s, out)
				}
			}
		})
	}

	t.Run("start-up", func(t *testing.T) {
		rec := newFakeAlertReceiver(t)
		good := strings.Replace(rec.serve.URL, "http://", "http://ops:hunter2@", 1) + "/services/T0/B0/SECRETTOKEN?token=SECRETTOKEN"
		t.Setenv("SWITCHYARD_API_KEYS", "k")
		ctx, cancel := context.WithCancel(context.Background())
		stderr := &syncBuffer{}
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--alert-webhook", "slack:" + good}, &syncBuffer{}, stderr)
		}()
		for !addrRe.MatchString(stderr.String()) {
			select {
			case code := <-done:
				t.Fatalf("serve exited with %d: %s", code, stderr.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
		cancel()
		<-done
		out := stderr.String()
		host := strings.TrimPrefix(rec.serve.URL, "http://")
		if !strings.Contains(out, "alerts on") || !strings.Contains(out, "slack:http://"+host+"/…") {
			t.Fatalf("the start-up message does not name the webhook's host: %s", out)
		}
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("serve printed the webhook's secret %q: %s", s, out)
			}
		}
	})
}
