package alerting_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/alerting"
)

// TestReview19eWebhookURLNotLogged: a Slack incoming webhook's path is its secret (and a
// URL may carry user:password): a failed delivery's log line names the host, never the
// path or credentials.
func TestReview19eWebhookURLNotLogged(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens: every attempt is a connection error
	var logs bytes.Buffer
	a, err := alerting.New(alerting.Options{
		Webhooks: []alerting.Webhook{{URL: "http://ops:hunter2@" + addr + "/services/T000/B000/SECRETTOKEN", Format: alerting.FormatSlack}},
		Attempts: 1, Backoff: time.Millisecond, Timeout: time.Second,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = a.Send(alerting.OutageEvent("a/m", true, 5, "overloaded", time.Now()))
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := a.Stats(); s.Failed != 1 {
		t.Fatalf("stats %+v, want one failed delivery", s)
	}
	out := logs.String()
	if !strings.Contains(out, "delivery failed") || !strings.Contains(out, addr) {
		t.Fatalf("the failure is not logged with its host: %s", out)
	}
	for _, secret := range []string{"SECRETTOKEN", "hunter2", "ops:"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds the webhook's secret %q: %s", secret, out)
		}
	}
}
