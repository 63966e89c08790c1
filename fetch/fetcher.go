// Package fetch reads remote files (training data, optimization bundles) safely: http and
// https only (file:// when explicitly allowed), with an overall timeout, an idle timeout
// (bytes must keep arriving), a size cap, a redirect limit
// and an SSRF guard that refuses loopback, private, link-local (including cloud metadata),
// unspecified and carrier-grade NAT addresses.
//
// The guard runs at dial time on the resolved IP address (net.Dialer.Control), so neither a
// host name pointing at an internal address nor DNS rebinding between check and connect gets
// through, and every redirect hop is dialed through the same guard. Proxies from the
// environment are not used, since a proxy would hide the real destination from the guard.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// Defaults a zero Fetcher uses.
const (
	// DefaultMaxBytes caps a body at 200 MiB.
	DefaultMaxBytes int64 = 200 << 20
	// DefaultTimeout bounds a whole fetch, redirects and body included.
	DefaultTimeout = 2 * time.Minute
	// DefaultIdleTimeout bounds each wait for the server: connecting, the response headers,
	// and every gap between two reads of the body. A stalled download fails after it
	// instead of holding a worker until DefaultTimeout.
	DefaultIdleTimeout = 15 * time.Second
	// MaxRedirects is the number of redirects followed before giving up.
	MaxRedirects = 5
)

// Fetcher reads remote files. The zero value is ready to use: guarded, 2-minute timeout,
// 200 MiB cap, local addresses and file:// refused. A Fetcher must not be copied after first
// use; it is safe for concurrent use.
type Fetcher struct {
	// Client is the HTTP client to start from; nil means a fresh one. Its timeout, cookie jar
	// and (for *http.Transport) TLS settings are kept, but the Fetcher always dials through
	// its guarded dialer, ignores proxies and applies its own redirect policy. A Transport
	// that is not an *http.Transport is used as is and is trusted: the guard cannot see its
	// connections (useful in tests only).
	Client *http.Client
	// Timeout bounds each fetch; 0 means DefaultTimeout.
	Timeout time.Duration
	// IdleTimeout bounds the time without progress: until the response headers arrive, and
	// then between any two reads that return bytes; 0 means DefaultIdleTimeout. A fetch
	// that stalls fails with ErrStalled.
	IdleTimeout time.Duration
	// MaxBytes caps the body size; 0 means DefaultMaxBytes.
	MaxBytes int64
	// AllowLocal turns the SSRF guard off and permits file:// URLs (the server's
	// --allow-local-urls). Only for development and trusted deployments.
	AllowLocal bool
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver *net.Resolver

	// blocked overrides IsBlocked (tests).
	blocked func(netip.Addr) bool

	once   sync.Once
	client *http.Client

	guardOnce sync.Once
	guarded   *Fetcher
}

// Guarded returns a Fetcher with f's settings and the SSRF guard on: f itself when
// AllowLocal is off, else one made once from f's settings. A service shared by several
// processes fetches with it the work that a process without --allow-local-urls accepted,
// so that one process's development setting does not open another's jobs to local URLs.
func (f *Fetcher) Guarded() *Fetcher {
	if !f.AllowLocal {
		return f
	}
	f.guardOnce.Do(func() {
		f.guarded = &Fetcher{Client: f.Client, Timeout: f.Timeout, IdleTimeout: f.IdleTimeout, MaxBytes: f.MaxBytes,
			Resolver: f.Resolver, blocked: f.blocked}
	})
	return f.guarded
}

// Response is a fetched body with what is known about it.
type Response struct {
	// URL is the final URL after redirects.
	URL string
	// ContentType is the media type without parameters ("" when unknown or for files).
	ContentType string
	// Body is the whole body.
	Body []byte
}

// Get reads rawURL and returns its body.
func (f *Fetcher) Get(ctx context.Context, rawURL string) ([]byte, error) {
	r, err := f.Fetch(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	return r.Body, nil
}

// Fetch reads rawURL and returns its body, final URL and content type. Errors are [*Error]
// values naming rawURL and matching ErrFetch plus one of ErrInvalidURL,
// ErrUnsupportedScheme, ErrBlocked, ErrTooLarge, ErrStatus, ErrTooManyRedirects, or a
// network/context error.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (*Response, error) {
	r, err := f.fetch(ctx, rawURL)
	if err != nil {
		return nil, &Error{URL: rawURL, Err: err}
	}
	return r, nil
}

// Limit is the most bytes one fetched body may hold (MaxBytes, else DefaultMaxBytes); a
// caller taking the same data by other means (an upload) applies the same bound.
func (f *Fetcher) Limit() int64 { return f.maxBytes() }

func (f *Fetcher) maxBytes() int64 {
	if f.MaxBytes > 0 {
		return f.MaxBytes
	}
	return DefaultMaxBytes
}

func (f *Fetcher) fetch(ctx context.Context, rawURL string) (*Response, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		// url.Parse's message quotes the whole URL; keep only the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return nil, fmt.Errorf("%w: no host", ErrInvalidURL)
		}
		return f.fetchHTTP(ctx, u)
	case "file":
		if !f.AllowLocal {
			return nil, fmt.Errorf("%w: file:// is only allowed when local URLs are allowed", ErrUnsupportedScheme)
		}
		return f.readFile(u)
	case "":
		return nil, fmt.Errorf("%w: missing scheme, want http or https", ErrInvalidURL)
	default:
		return nil, fmt.Errorf("%w %q, want http or https", ErrUnsupportedScheme, u.Scheme)
	}
}

func (f *Fetcher) readFile(u *url.URL) (*Response, error) {
	path := u.Path
	if u.Host != "" && u.Host != "localhost" {
		return nil, fmt.Errorf("%w: file URL with host %q", ErrInvalidURL, u.Host)
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	body, err := readCapped(file, f.maxBytes())
	if err != nil {
		return nil, err
	}
	return &Response{URL: u.String(), Body: body}, nil
}

func (f *Fetcher) fetchHTTP(ctx context.Context, u *url.URL) (*Response, error) {
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	idle := f.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	ctx, stall := context.WithCancelCause(ctx)
	defer stall(nil)
	watchdog := time.AfterFunc(idle, func() {
		stall(fmt.Errorf("%w: no data from the server for %s", ErrStalled, idle))
	})
	defer watchdog.Stop()
	stalled := func(err error) error {
		if cause := context.Cause(ctx); errors.Is(cause, ErrStalled) {
			return cause
		}
		return err
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message quotes the URL
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	req.Header.Set("Accept", "application/json, text/csv, application/x-ndjson, application/zip, */*;q=0.5")
	resp, err := f.httpClient().Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// The URL is named (redacted) by *Error already; a redirect hop's URL, which may
			// carry its own signature, is dropped here.
			err = ue.Err
		}
		return nil, stalled(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%w %s", ErrStatus, resp.Status)
	}
	max := f.maxBytes()
	if resp.ContentLength > max {
		return nil, fmt.Errorf("%w: Content-Length %d exceeds the %d-byte limit", ErrTooLarge, resp.ContentLength, max)
	}
	watchdog.Reset(idle)
	body, err := readCapped(&progressReader{r: resp.Body, progress: func() { watchdog.Reset(idle) }}, max)
	if err != nil {
		return nil, stalled(err)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return &Response{URL: resp.Request.URL.String(), ContentType: ct, Body: body}, nil
}

// progressReader calls progress after every read that returned bytes.
type progressReader struct {
	r        io.Reader
	progress func()
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.progress()
	}
	return n, err
}

func readCapped(r io.Reader, max int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > max {
		return nil, fmt.Errorf("%w: more than the %d-byte limit", ErrTooLarge, max)
	}
	return body, nil
}

// httpClient builds (once) the client with the guarded dialer and redirect policy.
func (f *Fetcher) httpClient() *http.Client {
	f.once.Do(func() {
		c := &http.Client{}
		if f.Client != nil {
			*c = *f.Client
		}
		var t *http.Transport
		switch base := c.Transport.(type) {
		case nil:
			t = http.DefaultTransport.(*http.Transport).Clone()
		case *http.Transport:
			t = base.Clone()
		}
		if t != nil {
			d := &net.Dialer{Resolver: f.Resolver, Timeout: 30 * time.Second}
			if !f.AllowLocal {
				blocked := f.blocked
				if blocked == nil {
					blocked = IsBlocked
				}
				d = dialerFor(f.Resolver, blocked)
				t.Proxy = nil
			}
			t.DialContext = d.DialContext
			t.DialTLSContext = nil
			c.Transport = t
		}
		c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return fmt.Errorf("%w: more than %d", ErrTooManyRedirects, MaxRedirects)
			}
			if s := req.URL.Scheme; s != "http" && s != "https" {
				return fmt.Errorf("%w %q in redirect to %s", ErrUnsupportedScheme, s, Redact(req.URL.String()))
			}
			return nil
		}
		f.client = c
	})
	return f.client
}
