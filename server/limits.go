package server

import (
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Defaults of the server's own limits (Config).
const (
	// DefaultBodyReadTimeout is how long a client may take to send a request body.
	DefaultBodyReadTimeout = 30 * time.Second
	// DefaultFailedAuthPerMinute is how many failed authentications one client address may
	// make per minute (with a burst of the same size) before it is refused with 429.
	DefaultFailedAuthPerMinute = 30
	// MinAPIKeyLength is the length below which an operator key draws a warning.
	MinAPIKeyLength = 32
)

// deadlineBody sets a read deadline for the whole body on the connection and lifts it once
// the body has been read, so a client that sends one byte and stops is cut off, while the
// response (a long stream) is not.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func withBodyDeadline(w http.ResponseWriter, r *http.Request, d time.Duration) {
	if d <= 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(d)) != nil {
		return // the writer cannot (HTTP/2 test recorders): nothing to lift either
	}
	r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// authLimiter counts failed authentications per client address: a token bucket per
// address, refilled at perMinute per minute up to perMinute. An address out of tokens is
// refused before its key is even checked, so guessing keys from it stops.
type authLimiter struct {
	perMinute int
	mu        sync.Mutex
	buckets   map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// maxAuthBuckets bounds the addresses tracked; beyond it the full buckets are dropped.
const maxAuthBuckets = 65536

func newAuthLimiter(perMinute int) *authLimiter {
	if perMinute == 0 {
		perMinute = DefaultFailedAuthPerMinute
	}
	return &authLimiter{perMinute: perMinute, buckets: map[string]*bucket{}}
}

// refill brings b up to date; callers hold mu.
func (l *authLimiter) refill(b *bucket, now time.Time) {
	b.tokens = min(float64(l.perMinute), b.tokens+now.Sub(b.last).Minutes()*float64(l.perMinute))
	b.last = now
}

// blocked reports whether addr is out of failures, and when it may try again.
func (l *authLimiter) blocked(addr string, now time.Time) (bool, time.Duration) {
	if l.perMinute < 0 {
		return false, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[addr]
	if b == nil {
		return false, 0
	}
	l.refill(b, now)
	if b.tokens >= 1 {
		return false, 0
	}
	return true, time.Duration((1 - b.tokens) / float64(l.perMinute) * float64(time.Minute))
}

// fail takes one token from addr's bucket; exhausted reports that this failure used its
// last one (addr is locked out from now on, until the bucket refills).
func (l *authLimiter) fail(addr string, now time.Time) (exhausted bool) {
	if l.perMinute < 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[addr]
	if b == nil {
		if len(l.buckets) >= maxAuthBuckets {
			for a, ob := range l.buckets {
				if l.refill(ob, now); ob.tokens >= float64(l.perMinute) {
					delete(l.buckets, a)
				}
			}
			if len(l.buckets) >= maxAuthBuckets {
				clear(l.buckets) // under a flood of addresses: start over rather than grow
			}
		}
		b = &bucket{tokens: float64(l.perMinute), last: now}
		l.buckets[addr] = b
	}
	l.refill(b, now)
	had := b.tokens >= 1
	b.tokens = max(0, b.tokens-1)
	return had && b.tokens < 1
}

// clientAddr is the unit of the auth limit: the client's IPv4 address, or the /64 network
// of an IPv6 one (one host usually holds a whole /64, and counting its addresses apart would
// let it cycle through them, and through maxAuthBuckets, to reset the limit). The client is
// the connection's peer, or behind Config.TrustedProxies the last X-Forwarded-For entry
// that is not a trusted proxy.
func (s *Server) clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	if s.trusted(ip) {
		ip = s.forwardedClient(r, ip)
	}
	ip = ip.Unmap()
	if ip.Is6() {
		if p, err := ip.Prefix(64); err == nil {
			return p.String()
		}
	}
	return ip.String()
}

// trusted reports whether ip is one of Config.TrustedProxies.
func (s *Server) trusted(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// forwardedClient walks X-Forwarded-For from the right (the entries the trusted proxies
// appended) to the first address that is not a trusted proxy; peer when there is none.
func (s *Server) forwardedClient(r *http.Request, peer netip.Addr) netip.Addr {
	var hops []string
	for _, h := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(h, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		ip, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer // a malformed entry: trust nothing left of it
		}
		if !s.trusted(ip) {
			return ip
		}
	}
	return peer
}

// LimitListener returns a listener that accepts at most n connections at once; further
// ones wait in the kernel's backlog until one closes. n <= 0 returns l unchanged.
func LimitListener(l net.Listener, n int) net.Listener {
	if n <= 0 {
		return l
	}
	return &limitListener{Listener: l, sem: make(chan struct{}, n)}
}

type limitListener struct {
	net.Listener
	sem chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.sem <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
