package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy says how a Client resends a request that failed in a way that may pass on a
// second try: an answer with status 429, 502, 503 or 504, or a connection error before
// any response arrived (except Switchyard's own 502 listing the attempts of a completion
// whose every model failed: the server has retried those already). Every request of the client is safe to resend in that sense: its
// body is built from Go values and kept, so each attempt sends the same bytes. Note that a
// POST which failed with a connection error or a 502/504 may still have been carried out
// by the server.
//
// Between attempts the client waits the Retry-After the server asked for (seconds or an
// HTTP date), or else an exponential backoff with jitter: attempt n (from 0) waits a
// random duration between half and all of min(Initial·2ⁿ, Max). A Retry-After longer than
// MaxRetryAfter ends the retries at once: the answer is returned rather than waited for.
// Waits end when the request's context is cancelled.
//
// Zero fields take the defaults of DefaultRetryPolicy, so WithRetry(RetryPolicy{MaxRetries: 5})
// changes only the number of retries. A negative MaxRetries disables retrying (see
// WithoutRetry); a negative MaxRetryAfter means no Retry-After above zero is waited for.
type RetryPolicy struct {
	// MaxRetries is the number of retries after the first attempt (0: the default, 2;
	// negative: none).
	MaxRetries int
	// Initial is the backoff before the first retry (0: the default, 250ms).
	Initial time.Duration
	// Max bounds each backoff (0: the default, 4s).
	Max time.Duration
	// MaxRetryAfter is the longest Retry-After honoured (0: the default, 30s; negative:
	// only "Retry-After: 0").
	MaxRetryAfter time.Duration
}

// DefaultRetryPolicy returns the policy of a client built without WithRetry: 2 retries,
// backoff from 250ms doubling up to 4s, and a Retry-After of at most 30s honoured. Three
// attempts within about a second ride out a restart or a brief overload without hiding a
// real outage for long; 30s covers the server's own "queue full, retry in 30s" answers.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxRetries: 2, Initial: 250 * time.Millisecond, Max: 4 * time.Second, MaxRetryAfter: 30 * time.Second}
}

// WithRetry sets the retry policy for every call of the client (default: DefaultRetryPolicy).
func WithRetry(p RetryPolicy) Option { return func(c *config) { c.retry = p } }

// WithoutRetry disables retries: every failure is returned as it happens. It is the same
// as WithRetry(RetryPolicy{MaxRetries: -1}).
func WithoutRetry() Option { return WithRetry(RetryPolicy{MaxRetries: -1}) }

// withDefaults fills zero fields from DefaultRetryPolicy.
func (p RetryPolicy) withDefaults() RetryPolicy {
	d := DefaultRetryPolicy()
	if p.MaxRetries == 0 {
		p.MaxRetries = d.MaxRetries
	}
	if p.MaxRetries < 0 {
		p.MaxRetries = 0
	}
	if p.Initial <= 0 {
		p.Initial = d.Initial
	}
	if p.Max <= 0 {
		p.Max = d.Max
	}
	if p.Max < p.Initial {
		p.Max = p.Initial
	}
	if p.MaxRetryAfter == 0 {
		p.MaxRetryAfter = d.MaxRetryAfter
	}
	return p
}

// backoff returns the wait before retry n (from 0): a random duration in [b/2, b] with
// b = min(Initial·2ⁿ, Max).
func (p RetryPolicy) backoff(n int) time.Duration {
	b := p.Initial
	for i := 0; i < n && b < p.Max; i++ {
		b *= 2
	}
	b = min(b, p.Max)
	half := b / 2
	return half + rand.N(b-half+1)
}

// retryableStatus reports whether an answer with this status may succeed when resent.
func retryableStatus(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// gatewayExhausted reports whether err is Switchyard's own 502 for a completion whose every
// model and fallback failed (the server already retried each upstream; its body lists the
// attempts), or any answer carrying x-should-retry: false. Resending would repeat (and pay
// for) all of them, so it is not retried.
func gatewayExhausted(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	if e.NoRetry {
		return true // x-should-retry: false
	}
	if e.Status != http.StatusBadGateway {
		return false
	}
	_, ok := e.Extra["attempts"]
	return ok
}

// retryableTransport reports whether a transport error (no response received) may pass on
// a second try: not when the context ended, nor when the server's certificate was refused,
// nor when the request's own content failed to be read (an upload's file: contentReadError).
func retryableTransport(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var cv *tls.CertificateVerificationError
	var ce *contentReadError // the request's own body failed to be read
	return !errors.As(err, &cv) && !errors.As(err, &ce)
}

// parseRetryAfter reads a Retry-After value given in seconds or as an HTTP date (a date in
// the past is 0). ok is false when the value is absent or unreadable.
func parseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		if n > int64(365*24*time.Hour/time.Second) {
			n = int64(365 * 24 * time.Hour / time.Second)
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// sleepContext waits d or until ctx ends, whichever comes first, and returns ctx.Err() in
// the latter case.
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// send performs the request and returns the response when its status is 2xx; otherwise it
// reads the error body and returns an *Error. Transient failures are retried under the
// client's RetryPolicy; only the response status is looked at, so a streamed body is never
// resent once it is handed to the caller. After the last attempt the error returned is the
// last one seen (an *Error for an answer, a wrapped transport error otherwise); a context
// ending during a wait returns an error matching both the context's error and the last one.
func (c *Client) send(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	p := c.retry
	// maybeDone is an earlier attempt's failure after which the server may have carried the
	// request out (no answer, or a 502/504): a 412 to a conditional request resent after
	// it may refuse the change that attempt made, and says so.
	var maybeDone error
	for attempt := 0; ; attempt++ {
		r := req
		if attempt > 0 {
			r = req.Clone(ctx)
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return nil, fmt.Errorf("client: %s %s: rewinding body: %w", req.Method, req.URL.Path, err)
				}
				r.Body = body
			}
		}
		resp, err := c.hc.Do(r)
		var wait time.Duration
		if err != nil {
			err = fmt.Errorf("client: %s %s: %w", req.Method, req.URL.Path, err)
			if attempt >= p.MaxRetries || !retryableTransport(ctx, err) || (req.Body != nil && req.GetBody == nil) {
				return nil, err
			}
			wait = p.backoff(attempt)
			maybeDone = err
		} else {
			if resp.StatusCode/100 == 2 {
				return resp, nil
			}
			ra, hasRA := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
			err = readError(resp)
			resp.Body.Close()
			if resp.StatusCode == http.StatusPreconditionFailed && maybeDone != nil && req.Header.Get("If-Match") != "" {
				err = fmt.Errorf("client: %s %s: %w (sent again after an earlier attempt failed, %v, which may have been carried out by the server: the change this If-Match refuses may be this call's own)",
					req.Method, req.URL.Path, err, maybeDone)
			}
			if resp.StatusCode == http.StatusBadGateway || resp.StatusCode == http.StatusGatewayTimeout {
				maybeDone = err
			}
			if attempt >= p.MaxRetries || !retryableStatus(resp.StatusCode) || (req.Body != nil && req.GetBody == nil) || gatewayExhausted(err) {
				return nil, err
			}
			switch {
			case hasRA && ra > 0 && (p.MaxRetryAfter < 0 || ra > p.MaxRetryAfter):
				return nil, err // the server asks for a longer wait than we honour
			case hasRA:
				wait = ra
			default:
				wait = p.backoff(attempt)
			}
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return nil, fmt.Errorf("client: %s %s: waiting to retry: %w (last failure: %w)", req.Method, req.URL.Path, serr, err)
		}
	}
}
