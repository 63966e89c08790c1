package alerting_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/alerting"
)

// fakeReceiver is a test webhook: it records every body and header it gets and answers
// with the statuses of script in turn (then 200).
type fakeReceiver struct {
	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
	script  []int
	got     chan struct{} // one value per request, when not nil
	hold    chan struct{} // when not nil, requests wait for it to close
}

func (f *fakeReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, b)
	f.headers = append(f.headers, r.Header.Clone())
	status := http.StatusOK
	if len(f.script) > 0 {
		status, f.script = f.script[0], f.script[1:]
	}
	f.mu.Unlock()
	if f.got != nil {
		f.got <- struct{}{}
	}
	if f.hold != nil {
		<-f.hold
	}
	w.WriteHeader(status)
}

func (f *fakeReceiver) requests() ([][]byte, []http.Header) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.bodies...), append([]http.Header(nil), f.headers...)
}

func newAlerter(t *testing.T, opts alerting.Options) *alerting.Alerter {
	t.Helper()
	if opts.Backoff == 0 {
		opts.Backoff = time.Millisecond
	}
	a, err := alerting.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func closeAlerter(t *testing.T, a *alerting.Alerter) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

var down = alerting.OutageEvent("openai/gpt-4o", true, 5, "server_error", time.Unix(1_700_000_000, 0))

func TestSignatureVerifies(t *testing.T) {
	rec := &fakeReceiver{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	a := newAlerter(t, alerting.Options{Webhooks: []alerting.Webhook{{URL: srv.URL}}, Secret: "s3cret"})
	if err := a.Send(down); err != nil {
		t.Fatal(err)
	}
	closeAlerter(t, a)
	bodies, headers := rec.requests()
	if len(bodies) != 1 {
		t.Fatalf("got %d deliveries, want 1", len(bodies))
	}
	sig, ts := headers[0].Get(alerting.HeaderSignature), headers[0].Get(alerting.HeaderTimestamp)
	if err := alerting.Verify("s3cret", sig, ts, bodies[0], 5*time.Minute, time.Now()); err != nil {
		t.Fatalf("signature %q at %s does not verify: %v", sig, ts, err)
	}
	if err := alerting.Verify("other", sig, ts, bodies[0], 0, time.Now()); !errors.Is(err, alerting.ErrSignature) {
		t.Fatalf("wrong secret: err %v, want ErrSignature", err)
	}
	tampered := []byte(strings.Replace(string(bodies[0]), "gpt-4o", "gpt-4x", 1))
	if err := alerting.Verify("s3cret", sig, ts, tampered, 0, time.Now()); !errors.Is(err, alerting.ErrSignature) {
		t.Fatalf("tampered body: err %v, want ErrSignature", err)
	}
	if err := alerting.Verify("s3cret", sig, ts, bodies[0], time.Minute, time.Now().Add(time.Hour)); !errors.Is(err, alerting.ErrSignature) {
		t.Fatalf("an hour-old delivery: err %v, want ErrSignature", err)
	}
	var e alerting.Event
	if err := json.Unmarshal(bodies[0], &e); err != nil {
		t.Fatal(err)
	}
	if e.Type != alerting.EventDeploymentDown || e.Subject != "openai/gpt-4o" || e.Figures["failures"] != 5 || e.Details["error_class"] != "server_error" {
		t.Fatalf("event %+v", e)
	}
}

func TestUnsignedWithoutSecret(t *testing.T) {
	rec := &fakeReceiver{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	a := newAlerter(t, alerting.Options{Webhooks: []alerting.Webhook{{URL: srv.URL}}})
	_ = a.Send(down)
	closeAlerter(t, a)
	_, headers := rec.requests()
	if len(headers) != 1 || headers[0].Get(alerting.HeaderSignature) != "" {
		t.Fatalf("headers %v: want one unsigned delivery", headers)
	}
}

func TestRetriesOn503ThenSucceeds(t *testing.T) {
	rec := &fakeReceiver{script: []int{503, 503}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	var mu sync.Mutex
	outcomes := map[string]int{}
	a := newAlerter(t, alerting.Options{Webhooks: []alerting.Webhook{{URL: srv.URL}},
		Observe: func(event, outcome string) { mu.Lock(); outcomes[event+"/"+outcome]++; mu.Unlock() }})
	_ = a.Send(down)
	closeAlerter(t, a)
	bodies, _ := rec.requests()
	if len(bodies) != 3 {
		t.Fatalf("got %d attempts, want 3 (two 503s then 200)", len(bodies))
	}
	if s := a.Stats(); s.Sent != 1 || s.Failed != 0 {
		t.Fatalf("stats %+v, want one sent", s)
	}
	if outcomes["deployment_down/sent"] != 1 || len(outcomes) != 1 {
		t.Fatalf("observed %v", outcomes)
	}
}

func TestGivesUpAfterAttemptsAndOn4xx(t *testing.T) {
	rec := &fakeReceiver{script: []int{500, 500, 500, 400}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	a := newAlerter(t, alerting.Options{Webhooks: []alerting.Webhook{{URL: srv.URL}}, Attempts: 3, Workers: 1})
	_ = a.Send(down) // 500 ×3: failed
	_ = a.Send(down) // 400: failed without retry
	closeAlerter(t, a)
	bodies, _ := rec.requests()
	if len(bodies) != 4 {
		t.Fatalf("got %d attempts, want 4", len(bodies))
	}
	if s := a.Stats(); s.Failed != 2 || s.Sent != 0 {
		t.Fatalf("stats %+v, want two failed", s)
	}
}

func TestFullQueueDropsWithoutBlocking(t *testing.T) {
	rec := &fakeReceiver{got: make(chan struct{}, 10), hold: make(chan struct{})}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	a := newAlerter(t, alerting.Options{Webhooks: []alerting.Webhook{{URL: srv.URL}}, Workers: 1, QueueSize: 1})
	if err := a.Send(down); err != nil { // taken by the worker, held by the receiver
		t.Fatal(err)
	}
	<-rec.got
	if err := a.Send(down); err != nil { // waits in the queue
		t.Fatal(err)
	}
	for range 5 { // no room: dropped at once
		if err := a.Send(down); !errors.Is(err, alerting.ErrQueueFull) {
			t.Fatalf("Send on a full queue: %v, want ErrQueueFull", err)
		}
	}
	close(rec.hold)
	closeAlerter(t, a)
	if s := a.Stats(); s.Sent != 2 || s.Dropped != 5 {
		t.Fatalf("stats %+v, want 2 sent and 5 dropped", s)
	}
	if err := a.Send(down); !errors.Is(err, alerting.ErrClosed) {
		t.Fatalf("Send after Close: %v, want ErrClosed", err)
	}
}

func TestCloseCutsWhenContextEnds(t *testing.T) {
	rec := &fakeReceiver{got: make(chan struct{}, 10), hold: make(chan struct{})}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	defer close(rec.hold)
	a := newAlerter(t, alerting.Options{Webhooks: []alerting.Webhook{{URL: srv.URL}}, Workers: 1})
	_ = a.Send(down)
	_ = a.Send(down)
	<-rec.got
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close: %v, want context.Canceled", err)
	}
	if s := a.Stats(); s.Sent != 0 || s.Failed+s.Dropped != 2 {
		t.Fatalf("stats %+v: want both cut", s)
	}
}

func TestSlackFormat(t *testing.T) {
	rec := &fakeReceiver{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	hook, err := alerting.ParseWebhook("slack:"+srv.URL, alerting.FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	a := newAlerter(t, alerting.Options{Webhooks: []alerting.Webhook{hook}})
	_ = a.Send(alerting.BudgetEvent("vk_1234", alerting.ThresholdMax, 10.5, 0, 10, time.Time{}, time.Now()))
	closeAlerter(t, a)
	bodies, _ := rec.requests()
	if len(bodies) != 1 {
		t.Fatalf("got %d deliveries", len(bodies))
	}
	var body map[string]any
	if err := json.Unmarshal(bodies[0], &body); err != nil {
		t.Fatal(err)
	}
	text, _ := body["text"].(string)
	if len(body) != 1 || !strings.Contains(text, "Budget reached") || !strings.Contains(text, "vk_1234") || !strings.Contains(text, "$10.0000") {
		t.Fatalf("slack body %s: want only a text naming the key and its budget", bodies[0])
	}
}

func TestParseWebhook(t *testing.T) {
	for _, c := range []struct {
		in     string
		def    alerting.Format
		url    string
		format alerting.Format
		bad    bool
	}{
		{in: "https://example.com/h", url: "https://example.com/h", format: alerting.FormatJSON},
		{in: "https://example.com/h", def: alerting.FormatSlack, url: "https://example.com/h", format: alerting.FormatSlack},
		{in: "slack:https://hooks.slack.com/x", url: "https://hooks.slack.com/x", format: alerting.FormatSlack},
		{in: "json:http://h/x", def: alerting.FormatSlack, url: "http://h/x", format: alerting.FormatJSON},
		{in: "ftp://h/x", bad: true},
		{in: "slack:", bad: true},
		{in: "https://h/x", def: "xml", bad: true},
	} {
		w, err := alerting.ParseWebhook(c.in, c.def)
		if c.bad {
			if !errors.Is(err, alerting.ErrInvalidWebhook) {
				t.Errorf("%q: err %v, want ErrInvalidWebhook", c.in, err)
			}
			continue
		}
		if err != nil || w.URL != c.url || w.Format != c.format {
			t.Errorf("%q: %+v %v, want %s %s", c.in, w, err, c.url, c.format)
		}
	}
}
