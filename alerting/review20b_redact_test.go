package alerting_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/alerting"
)

// TestReview20bParseWebhookErrorsRedacted: a refused webhook's error never quotes its URL
// (credentials, query token, a Slack path secret), valid or not.
func TestReview20bParseWebhookErrorsRedacted(t *testing.T) {
	for _, raw := range []string{
		"ftp://ops:hunter2@hooks.example.com/services/T0/B0/SECRETTOKEN?token=SECRETTOKEN",
		"hooks.slack.com/services/T0/B0/SECRETTOKEN",
		"http://ops:hunter2@hooks.example.com:bad/SECRETTOKEN",
		"http://hooks.example.com/%zzSECRETTOKEN",
		"slack:mailto:ops:hunter2@SECRETTOKEN",
	} {
		_, err := alerting.ParseWebhook(raw, alerting.FormatJSON)
		if !errors.Is(err, alerting.ErrInvalidWebhook) {
			t.Fatalf("%s: err %v, want ErrInvalidWebhook", raw, err)
		}
		for _, secret := range []string{"SECRETTOKEN", "hunter2", "ops:"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%s: error %q shows %q", raw, err, secret)
			}
		}
	}
	_, err := alerting.ParseWebhook("ftp://ops:pw@hooks.example.com/x", "")
	if err == nil || !strings.Contains(err.Error(), "ftp://hooks.example.com/…") {
		t.Errorf("error %v does not name the scheme and host", err)
	}
}

// TestReview20bRedactURL: what a webhook shows of itself.
func TestReview20bRedactURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://hooks.slack.com/services/T0/B0/SECRET": "https://hooks.slack.com/…",
		"https://u:p@ops.example.com":                   "https://ops.example.com",
		"https://ops.example.com/":                      "https://ops.example.com",
		"https://ops.example.com?token=SECRET":          "https://ops.example.com/…",
		"https://ops.example.com:8443/#SECRET":          "https://ops.example.com:8443/…",
		"not a url %zz":                                 "(URL not shown)",
	} {
		if got := alerting.RedactURL(raw); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", raw, got, want)
		}
	}
	w := alerting.Webhook{URL: "https://u:p@hooks.slack.com/services/T0/B0/SECRET", Format: alerting.FormatSlack}
	if got := fmt.Sprint(w) + fmt.Sprintf("%v %+v", w, []alerting.Webhook{w}); strings.Contains(got, "SECRET") || strings.Contains(got, "u:p") {
		t.Errorf("a printed Webhook shows its secret: %s", got)
	}
}

// TestReview20bSlackTextEscaped: a key's or team's id in a Slack alert cannot make a link
// or a mention: &, < and > are escaped as Slack asks.
func TestReview20bSlackTextEscaped(t *testing.T) {
	var mu sync.Mutex
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = b
		mu.Unlock()
	}))
	defer srv.Close()
	a, err := alerting.New(alerting.Options{Webhooks: []alerting.Webhook{{URL: srv.URL, Format: alerting.FormatSlack}}})
	if err != nil {
		t.Fatal(err)
	}
	evil := "<!channel> <https://evil.example|click> & co"
	_ = a.Send(alerting.TeamBudgetEvent(evil, alerting.ThresholdMax, 2, 0, 1, time.Time{}, time.Now()))
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var body struct{ Text string }
	if err := json.Unmarshal(got, &body); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if strings.ContainsAny(body.Text, "<>") || strings.Contains(body.Text, "& co") {
		t.Fatalf("Slack text not escaped: %q", body.Text)
	}
	if !strings.Contains(body.Text, "&lt;!channel&gt; &lt;https://evil.example|click&gt; &amp; co") {
		t.Fatalf("Slack text %q does not hold the escaped name", body.Text)
	}
}
