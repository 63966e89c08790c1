package alerting

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	neturl "net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Outcomes of a delivery, as Options.Observe and switchyard_alerts_total report them.
const (
	// OutcomeSent: the webhook answered 2xx.
	OutcomeSent = "sent"
	// OutcomeFailed: every attempt failed, or the webhook refused it with a 4xx.
	OutcomeFailed = "failed"
	// OutcomeDropped: the queue was full (or the Alerter closed) and it was not sent.
	OutcomeDropped = "dropped"
)

// Options configure an Alerter. Zero values take the defaults.
type Options struct {
	// Webhooks are where every event goes (at least one).
	Webhooks []Webhook
	// Secret, when set, signs every delivery (HeaderSignature and HeaderTimestamp).
	Secret string
	// Timeout bounds one POST; default 10s.
	Timeout time.Duration
	// Attempts is how many times a delivery is tried on a network error, a 429 or a 5xx;
	// default 4.
	Attempts int
	// Backoff is the wait before the first retry, doubled for each next one up to 30s;
	// default 1s.
	Backoff time.Duration
	// QueueSize bounds the deliveries waiting to be sent (one per event and webhook);
	// default 256. Send drops what does not fit.
	QueueSize int
	// Workers is how many deliveries are sent at once; default 2.
	Workers int
	// Client sends the POSTs; default a client of its own.
	Client *http.Client
	// Logger logs failed and dropped deliveries; default slog.Default().
	Logger *slog.Logger
	// Observe, when set, is told the outcome of every delivery (OutcomeSent and so on) with
	// its event's type: the metric switchyard_alerts_total. It must not block.
	Observe func(event, outcome string)
	// Now is the clock of the signature's timestamp; default time.Now.
	Now func() time.Time
}

// Stats are an Alerter's delivery counts since it started.
type Stats struct {
	Sent, Failed, Dropped int64
}

// Alerter posts events to webhooks in the background. Create it with New; it is safe for
// concurrent use.
type Alerter struct {
	opts  Options
	queue chan delivery

	mu     sync.RWMutex // guards closed against the close of queue
	closed bool

	abort   context.Context // cancelled when Close runs out of time
	cancel  context.CancelFunc
	workers sync.WaitGroup

	sent, failed, dropped atomic.Int64
}

// delivery is one event for one webhook.
type delivery struct {
	event Event
	hook  Webhook
}

// New checks opts and starts the workers; Close stops them.
func New(opts Options) (*Alerter, error) {
	if len(opts.Webhooks) == 0 {
		return nil, fmt.Errorf("%w: no webhook", ErrInvalidWebhook)
	}
	for i, w := range opts.Webhooks {
		if _, err := ParseWebhook(w.URL, w.Format); err != nil {
			return nil, fmt.Errorf("webhook %d: %w", i, err)
		}
		if w.Format == "" {
			opts.Webhooks[i].Format = FormatJSON
		}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.Attempts <= 0 {
		opts.Attempts = 4
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 256
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	a := &Alerter{opts: opts, queue: make(chan delivery, opts.QueueSize)}
	a.abort, a.cancel = context.WithCancel(context.Background())
	for range opts.Workers {
		a.workers.Add(1)
		go a.work()
	}
	return a, nil
}

// Send queues e for every webhook and returns at once. When the queue has no room for a
// delivery it is dropped and counted, and Send returns ErrQueueFull; after Close it returns
// ErrClosed.
func (a *Alerter) Send(e Event) error {
	a.mu.RLock()
	defer a.mu.RUnlock()
	var err error
	for _, w := range a.opts.Webhooks {
		if a.closed {
			a.count(e.Type, OutcomeDropped)
			err = ErrClosed
			continue
		}
		select {
		case a.queue <- delivery{event: e, hook: w}:
		default:
			a.count(e.Type, OutcomeDropped)
			a.opts.Logger.Warn("alerting: queue full, alert dropped", "event", e.Type, "subject", e.Subject)
			err = ErrQueueFull
		}
	}
	return err
}

// Stats returns the delivery counts so far.
func (a *Alerter) Stats() Stats {
	return Stats{Sent: a.sent.Load(), Failed: a.failed.Load(), Dropped: a.dropped.Load()}
}

// Close stops taking events and waits for the queued ones to be delivered (retries
// included). When ctx ends first, deliveries under way are cut, what is still queued is
// dropped, and Close returns ctx's error.
func (a *Alerter) Close(ctx context.Context) error {
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		close(a.queue)
	}
	a.mu.Unlock()
	done := make(chan struct{})
	go func() {
		a.workers.Wait()
		close(done)
	}()
	select {
	case <-done:
		a.cancel()
		return nil
	case <-ctx.Done():
		a.cancel()
		<-done
		return fmt.Errorf("alerting: close: %w", context.Cause(ctx))
	}
}

// work delivers queued deliveries until the queue is closed and empty.
func (a *Alerter) work() {
	defer a.workers.Done()
	for d := range a.queue {
		if a.abort.Err() != nil {
			a.count(d.event.Type, OutcomeDropped)
			continue
		}
		if err := a.deliver(a.abort, d); err != nil {
			a.count(d.event.Type, OutcomeFailed)
			a.opts.Logger.Warn("alerting: delivery failed", "event", d.event.Type, "subject", d.event.Subject, "err", err)
			continue
		}
		a.count(d.event.Type, OutcomeSent)
	}
}

func (a *Alerter) count(event, outcome string) {
	switch outcome {
	case OutcomeSent:
		a.sent.Add(1)
	case OutcomeFailed:
		a.failed.Add(1)
	default:
		a.dropped.Add(1)
	}
	if a.opts.Observe != nil {
		a.opts.Observe(event, outcome)
	}
}

// errPermanent marks a failure not worth retrying (a 4xx other than 429).
var errPermanent = errors.New("not retried")

// deliver posts d, retrying with backoff, until it is sent, fails for good or ctx ends.
func (a *Alerter) deliver(ctx context.Context, d delivery) error {
	body, err := d.hook.Format.body(d.event)
	if err != nil {
		return fmt.Errorf("%w: encoding: %w", ErrDelivery, err)
	}
	wait := a.opts.Backoff
	for attempt := 1; ; attempt++ {
		err = a.post(ctx, d.hook.URL, body)
		if err == nil || errors.Is(err, errPermanent) || attempt >= a.opts.Attempts {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: %w (after %d attempts)", ErrDelivery, context.Cause(ctx), attempt)
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// post makes one attempt at sending body to url.
func (a *Alerter) post(ctx context.Context, url string, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, a.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil { // its error quotes the URL, which may hold the secret
		return fmt.Errorf("%w: %w: %s: bad URL", ErrDelivery, errPermanent, RedactURL(url))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "switchyard-alerts")
	if a.opts.Secret != "" {
		ts := a.opts.Now().Unix()
		req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
		req.Header.Set(HeaderSignature, Sign(a.opts.Secret, ts, body))
	}
	resp, err := a.opts.Client.Do(req)
	if err != nil {
		// The URL's path may be its secret (a Slack webhook's): the error names the host.
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = fmt.Errorf("%s %s://%s: %w", ue.Op, req.URL.Scheme, req.URL.Host, ue.Err)
		}
		return fmt.Errorf("%w: %w", ErrDelivery, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return fmt.Errorf("%w: status %d", ErrDelivery, resp.StatusCode)
	default:
		return fmt.Errorf("%w: %w: status %d", ErrDelivery, errPermanent, resp.StatusCode)
	}
}
