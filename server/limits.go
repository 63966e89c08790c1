package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// Defaults of the server's own limits (Config).
const (
	// DefaultBodyReadTimeout is how long a client may take to send a request body.
	DefaultBodyReadTimeout = 30 * time.Second
	// DefaultFailedAuthPerMinute is how many failed authentications one client address may
	// make per minute (with a burst of the same size) before it is refused with 429.
	DefaultFailedAuthPerMinute = 30
	// DefaultMaxEndUsersPerKey is Config.MaxEndUsersPerKey's default.
	DefaultMaxEndUsersPerKey = 100000
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
	// pending are other processes' requests for keys this process has no bucket for yet
	// (see debit): taken from the bucket when the key's first request here makes it.
	pending map[string]pendingDebit
}

// pendingDebit is requests other processes admitted for a key, the last at at.
type pendingDebit struct {
	n  int64
	at time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
	rate   int // per minute, as last asked
}

// maxAuthBuckets bounds the addresses tracked; beyond it the full buckets are dropped.
const maxAuthBuckets = 65536

func newAuthLimiter(perMinute int) *authLimiter {
	if perMinute == 0 {
		perMinute = DefaultFailedAuthPerMinute
	}
	return &authLimiter{perMinute: perMinute, buckets: map[string]*bucket{}}
}

// newKeyLimiter returns the per-key request limiter of Config.RequestsPerMinutePerKey (a
// token bucket per key, as authLimiter's per address), nil for no bound.
func newKeyLimiter(perMinute int) *authLimiter {
	if perMinute <= 0 {
		return nil
	}
	return &authLimiter{perMinute: perMinute, buckets: map[string]*bucket{}}
}

// take takes one token from key's bucket, under one lock: ok is false (and wait how long
// until one is back) when it has none. The per-key limiter's step.
func (l *authLimiter) take(key string, now time.Time) (ok bool, wait time.Duration) {
	return l.takeAt(key, l.perMinute, now)
}

// takeAt is take for a bucket of its own rate: perMinute per minute, as much as a burst
// (virtual keys' own bounds, one limiter for all of them).
func (l *authLimiter) takeAt(key string, perMinute int, now time.Time) (ok bool, wait time.Duration) {
	ok, wait, _ = l.takeLeft(key, perMinute, now)
	return ok, wait
}

// takeLeft is takeAt that also says how many whole requests the bucket has left after it.
func (l *authLimiter) takeLeft(key string, perMinute int, now time.Time) (ok bool, wait time.Duration, left int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucketAt(key, perMinute, now)
	if b.tokens < 1 {
		return false, time.Duration((1 - b.tokens) / float64(perMinute) * float64(time.Minute)), 0
	}
	b.tokens--
	return true, 0, int(b.tokens)
}

// giveBack returns to key's bucket (refilled at perMinute) the request takeAt took.
func (l *authLimiter) giveBack(key string, perMinute int, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucketAt(key, perMinute, now)
	b.tokens = min(b.tokens+1, float64(perMinute))
}

// bucketFor returns key's bucket brought up to date, making a full one for a key not seen
// (dropping full buckets first when maxAuthBuckets are kept, and all of them when none
// is); callers hold mu.
func (l *authLimiter) bucketFor(key string, now time.Time) *bucket {
	return l.bucketAt(key, l.perMinute, now)
}

// bucketAt is bucketFor for a bucket refilled at perMinute (a bucket's rate is the one it
// is asked with: a virtual key's rate may change between its requests).
func (l *authLimiter) bucketAt(key string, perMinute int, now time.Time) *bucket {
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= maxAuthBuckets {
			for k, ob := range l.buckets {
				if refill(ob, ob.rate, now); ob.tokens >= float64(ob.rate) {
					delete(l.buckets, k)
				}
			}
			if len(l.buckets) >= maxAuthBuckets {
				clear(l.buckets) // under a flood of keys or addresses: start over rather than grow
			}
		}
		b = &bucket{tokens: float64(perMinute), last: now}
		if p, ok := l.pending[key]; ok {
			delete(l.pending, key)
			if now.Sub(p.at) <= time.Minute { // older ones would have refilled by now
				b.tokens = max(b.tokens-float64(p.n), -float64(perMinute))
			}
		}
		l.buckets[key] = b
	}
	b.rate = perMinute
	refill(b, perMinute, now)
	return b
}

// refill brings b, refilled at perMinute, up to date; callers hold mu.
func refill(b *bucket, perMinute int, now time.Time) {
	b.tokens = min(float64(perMinute), b.tokens+now.Sub(b.last).Minutes()*float64(perMinute))
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
	refill(b, l.perMinute, now)
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
	b := l.bucketFor(addr, now)
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
// ones wait in the kernel's backlog until one closes. n <= 0 returns l unchanged. It is
// LimitListenerWith(l, LimitListenerConfig{Max: n}).
func LimitListener(l net.Listener, n int) net.Listener {
	return LimitListenerWith(l, LimitListenerConfig{Max: n})
}

// LimitListenerConfig are the bounds of a listener from LimitListenerWith.
type LimitListenerConfig struct {
	// Max is how many connections are served at once; further ones wait in the kernel's
	// backlog until one closes (<= 0: no bound).
	Max int
	// PerClient is how many of them one client may hold at once (<= 0: no bound). A client
	// is an IPv4 address, or the /64 network of an IPv6 one (one host usually holds a whole
	// /64; counting its addresses apart would let it take PerClient connections from each).
	// A connection beyond it is not served: it gets a minimal HTTP/1.1 429 in OpenAI's
	// error envelope naming --max-connections-per-client, and is closed. It never holds a
	// slot of Max, and Accept goes on to the next connection meanwhile.
	PerClient int
	// Exempt, when set, reports whether the peer address (IPv4-mapped addresses unmapped,
	// IPv6 zones dropped) is exempt from PerClient: a trusted reverse proxy's connections
	// carry many clients. Exempt connections count towards Max only.
	Exempt func(netip.Addr) bool
	// Logger, when set, gets one warning per refusal burst of a client: at its first
	// refused connection since it last held none.
	Logger *slog.Logger
	// TLS, when set, says the connections speak TLS (the listener is served by
	// http.Server.ServeTLS, which makes the handshakes above it): a refused connection
	// then gets its 429 over TLS of this configuration, HTTP/1.1 only, since a client that
	// dialled https:// could not read it written in the clear before the handshake.
	TLS *tls.Config
}

// Refusals of connections over the per-client bound.
const (
	// refusalTimeout bounds writing the 429 and waiting for the client to read it.
	refusalTimeout = 2 * time.Second
	// maxRefusing bounds the refusals being written at once; beyond it a connection over
	// its bound is closed without an answer, so a flood of them holds no more than this many
	// goroutines and descriptors.
	maxRefusing = 64
	// refusalDrain is how much of a refused client's request is read and discarded before
	// the close, so the kernel sends FIN rather than RST (which could destroy the 429
	// before the client has read it).
	refusalDrain = 64 << 10
)

// LimitListenerWith returns a listener that serves at most cfg.Max connections at once,
// at most cfg.PerClient of them from one client (see LimitListenerConfig). Every accepted
// connection releases its slots exactly once, at its first Close; a client's count is
// forgotten when it reaches zero, so the listener tracks no more clients than it serves.
// With neither bound it returns l unchanged.
func LimitListenerWith(l net.Listener, cfg LimitListenerConfig) net.Listener {
	if cfg.Max <= 0 && cfg.PerClient <= 0 {
		return l
	}
	ll := &limitListener{Listener: l, cfg: cfg}
	if cfg.Max > 0 {
		ll.sem = make(chan struct{}, cfg.Max)
	}
	if cfg.PerClient > 0 {
		ll.clients = map[netip.Prefix]*clientConns{}
		ll.refusing = make(chan struct{}, maxRefusing)
		ll.refusal = refusalResponse(cfg.PerClient)
		ll.requestRefusal = requestRefusalBody(cfg.PerClient)
		if cfg.TLS != nil {
			// The 429 is HTTP/1.1: a client offered h2 too must not pick it.
			ll.refusalTLS = cfg.TLS.Clone()
			ll.refusalTLS.NextProtos = []string{"http/1.1"}
		}
	}
	return ll
}

type limitListener struct {
	net.Listener
	cfg      LimitListenerConfig
	sem      chan struct{} // nil: no global bound
	refusing chan struct{} // refusals being written
	refusal  []byte        // the 429, whole
	// requestRefusal: the body of the 429 a request over the bound gets
	// (LimitRequestsPerClient).
	requestRefusal []byte
	// refusalTLS: the TLS configuration the 429 is written in (nil: in the clear).
	refusalTLS *tls.Config

	mu      sync.Mutex
	clients map[netip.Prefix]*clientConns // nil: no per-client bound
}

// clientConns is one client's count of open connections, and of its requests in flight
// on them (LimitRequestsPerClient).
type clientConns struct {
	n int
	// requests: its requests in flight (counted only under LimitRequestsPerClient).
	requests int
	// warnedRequests: its refused requests were logged (until it has none in flight).
	warnedRequests bool
	// warned: this client's refusals were logged (until its count is back to zero).
	warned bool
}

// refusalResponse is the whole 429 a connection over the per-client bound gets.
func refusalResponse(perClient int) []byte {
	code := "rate_limit_exceeded"
	body, _ := json.Marshal(completions.OpenAIErrorBody{Error: completions.OpenAIErrorObject{
		Message: fmt.Sprintf("too many connections from this address: the server serves at most %d at once per client (--max-connections-per-client); close one or retry later", perClient),
		Type:    "rate_limit_error",
		Code:    &code,
	}})
	return fmt.Appendf(nil, "HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: %d\r\nRetry-After: 1\r\n\r\n%s", len(body), body)
}

// requestRefusalBody is the body of the 429 a request over the per-client bound of
// requests in flight gets (LimitRequestsPerClient).
func requestRefusalBody(perClient int) []byte {
	code := "rate_limit_exceeded"
	body, _ := json.Marshal(completions.OpenAIErrorBody{Error: completions.OpenAIErrorObject{
		Message: fmt.Sprintf("too many requests in flight from this address: the server serves at most %d at once per client (--max-connections-per-client, which bounds the requests of an HTTP/2 connection too); wait for one to finish or retry later", perClient),
		Type:    "rate_limit_error",
		Code:    &code,
	}})
	return body
}

// clientKey is the unit of the per-client bound for the peer a (see PerClient), and the
// address Exempt is asked about; ok is false for a peer that is not an IP address.
func clientKey(a net.Addr) (ip netip.Addr, key netip.Prefix, ok bool) {
	var ap netip.AddrPort
	if ta, isTCP := a.(*net.TCPAddr); isTCP {
		ap = ta.AddrPort()
	} else if p, err := netip.ParseAddrPort(a.String()); err == nil {
		ap = p
	} else {
		return netip.Addr{}, netip.Prefix{}, false
	}
	ip = ap.Addr().Unmap().WithZone("")
	if !ip.IsValid() {
		return netip.Addr{}, netip.Prefix{}, false
	}
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	key, err := ip.Prefix(bits)
	return ip, key, err == nil
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		if l.sem != nil {
			l.sem <- struct{}{}
		}
		c, err := l.Listener.Accept()
		if err != nil {
			l.releaseSlot()
			return nil, err
		}
		key, counted, ok := l.admit(c)
		if !ok {
			l.releaseSlot()
			l.refuse(c)
			continue
		}
		return &limitConn{Conn: c, l: l, key: key, counted: counted}, nil
	}
}

// admit counts c towards its client's bound; ok is false when the client already holds
// PerClient connections (c is then not counted). counted says whether c was.
func (l *limitListener) admit(c net.Conn) (key netip.Prefix, counted, ok bool) {
	if l.clients == nil {
		return key, false, true
	}
	ip, key, valid := clientKey(c.RemoteAddr())
	if !valid || (l.cfg.Exempt != nil && l.cfg.Exempt(ip)) {
		return key, false, true
	}
	l.mu.Lock()
	cc := l.clients[key]
	if cc == nil {
		cc = &clientConns{}
		l.clients[key] = cc
	}
	if cc.n < l.cfg.PerClient {
		cc.n++
		l.mu.Unlock()
		return key, true, true
	}
	warn := !cc.warned
	cc.warned = true
	l.mu.Unlock()
	if warn && l.cfg.Logger != nil {
		l.cfg.Logger.Warn("per-client connection limit reached: further connections from this client get 429 until it has closed all of them",
			"client", key.String(), "limit", l.cfg.PerClient, "flag", "--max-connections-per-client")
	}
	return key, false, false
}

// refuse answers c with the 429 and closes it, in the background (bounded by maxRefusing;
// beyond it c is closed at once).
func (l *limitListener) refuse(c net.Conn) {
	select {
	case l.refusing <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-l.refusing }()
		defer c.Close()
		c.SetDeadline(time.Now().Add(refusalTimeout))
		if l.refusalTLS != nil {
			// The handshake is made by the first Write, within the same deadline.
			c = tls.Server(c, l.refusalTLS)
		}
		if _, err := c.Write(l.refusal); err != nil {
			return
		}
		if cw, ok := c.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
			io.CopyN(io.Discard, c, refusalDrain) // until the client closes, or the deadline
		}
	}()
}

func (l *limitListener) releaseSlot() {
	if l.sem != nil {
		<-l.sem
	}
}

// release gives back what an admitted connection held: its client's count (forgotten at
// zero) and its slot.
func (l *limitListener) release(key netip.Prefix, counted bool) {
	if counted {
		l.mu.Lock()
		if cc := l.clients[key]; cc != nil {
			if cc.n--; cc.n <= 0 && cc.requests <= 0 {
				delete(l.clients, key)
			}
		}
		l.mu.Unlock()
	}
	l.releaseSlot()
}

// connKey carries, in the context of a connection of a listener from LimitListenerWith
// counted towards its client's bound, that connection (LimitRequestsPerClient).
type connKey struct{}

// LimitRequestsPerClient bounds, on hs, how many requests each client of l has in flight at
// once, across all of its connections, at l's PerClient (l a listener from LimitListenerWith
// that hs serves). Over HTTP/2 (served with TLS) one connection carries many requests at
// once — up to hs.HTTP2's MaxConcurrentStreams, 250 by default — so bounding a client's
// connections alone would not bound its requests. A request beyond the bound is answered 429 in OpenAI's error envelope
// naming --max-connections-per-client, with Retry-After: 1 (the SDKs retry it); only that
// stream is refused, the connection stays. Over HTTP/1.1 a connection carries one request
// at a time, so the connection bound already holds and no request is refused. Requests on
// connections of another listener hs serves, and on connections exempt from PerClient
// (Exempt), are not counted. It wraps hs.Handler and hs.ConnContext: call it before hs
// serves. When l is no such listener, or has no PerClient, hs is left unchanged.
func LimitRequestsPerClient(hs *http.Server, l net.Listener) {
	ll, ok := l.(*limitListener)
	if !ok || ll.clients == nil {
		return
	}
	prevCtx := hs.ConnContext
	hs.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prevCtx != nil {
			ctx = prevCtx(ctx, c)
		}
		if lc := limitConnOf(c); lc != nil && lc.l == ll && lc.counted {
			ctx = context.WithValue(ctx, connKey{}, lc)
		}
		return ctx
	}
	next := hs.Handler
	if next == nil {
		next = http.DefaultServeMux
	}
	hs.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lc, _ := r.Context().Value(connKey{}).(*limitConn)
		if lc == nil {
			next.ServeHTTP(w, r)
			return
		}
		if !ll.startRequest(lc.key) {
			h := w.Header()
			h.Set("Content-Type", "application/json")
			h.Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write(ll.requestRefusal)
			return
		}
		defer ll.endRequest(lc.key)
		next.ServeHTTP(w, r)
	})
}

// limitConnOf is the connection of a limitListener under c (a *tls.Conn over it, say);
// nil when there is none.
func limitConnOf(c net.Conn) *limitConn {
	for c != nil {
		switch v := c.(type) {
		case *limitConn:
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// startRequest counts a request of the client key; false (not counted) when the client
// already has PerClient requests in flight.
func (l *limitListener) startRequest(key netip.Prefix) bool {
	l.mu.Lock()
	cc := l.clients[key]
	if cc == nil {
		// Its connections all closed while the request was on its way (HTTP/2 runs a
		// stream's handler apart from its connection): it is counted all the same.
		cc = &clientConns{}
		l.clients[key] = cc
	}
	if cc.requests < l.cfg.PerClient {
		cc.requests++
		l.mu.Unlock()
		return true
	}
	warn := !cc.warnedRequests
	cc.warnedRequests = true
	l.mu.Unlock()
	if warn && l.cfg.Logger != nil {
		l.cfg.Logger.Warn("per-client limit of requests in flight reached (HTTP/2 streams): further requests from this client get 429 until it has none in flight",
			"client", key.String(), "limit", l.cfg.PerClient, "flag", "--max-connections-per-client")
	}
	return false
}

// endRequest uncounts a request startRequest counted.
func (l *limitListener) endRequest(key netip.Prefix) {
	l.mu.Lock()
	if cc := l.clients[key]; cc != nil {
		if cc.requests--; cc.requests <= 0 {
			cc.warnedRequests = false
			if cc.n <= 0 {
				delete(l.clients, key)
			}
		}
	}
	l.mu.Unlock()
}

type limitConn struct {
	net.Conn
	l       *limitListener
	key     netip.Prefix
	counted bool
	once    sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.key, c.counted) })
	return err
}

// The keys of the request rates in Config.SharedLimits: a key's bucket of
// RequestsPerMinutePerKey, and a virtual key's own (with its rate, which the other
// processes need to make the bucket when they have not seen the key).
const (
	sharedKeyRate     = "rpm/key/"
	sharedVirtualRate = "rpm/virtual/"
)

// shareRates subscribes the per-key request buckets to c (nil: not shared): the requests
// other processes admitted are taken from this process's buckets.
func (s *Server) shareRates(c *store.Counters) {
	if c == nil {
		return
	}
	s.shared = c
	s.shareEndUserChanges(c)
	if s.keyRL != nil {
		c.Subscribe(sharedKeyRate, func(key string, n int64, now time.Time) {
			s.keyRL.debit(strings.TrimPrefix(key, sharedKeyRate), s.keyRL.perMinute, n, now)
		})
	}
	c.Subscribe(sharedVirtualRate, func(key string, n int64, now time.Time) {
		rate, id, ok := strings.Cut(strings.TrimPrefix(key, sharedVirtualRate), "/")
		if r, err := strconv.Atoi(rate); ok && err == nil && r > 0 {
			s.vkRL.debit(id, r, n, now)
		}
	})
}

// debit takes n tokens from key's bucket (refilled at perMinute): requests another process
// admitted. The bucket may go below zero — down to a minute's worth of requests — so that
// this process waits for the others' requests too. A key this process has no bucket for
// gets none (the others' keys would crowd out its own, maxAuthBuckets): the requests wait
// in pending, bounded as the buckets are, for the key's first request here.
func (l *authLimiter) debit(key string, perMinute int, n int64, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.buckets[key]; b != nil {
		b.rate = perMinute
		refill(b, perMinute, now)
		b.tokens = max(b.tokens-float64(n), -float64(perMinute))
		return
	}
	if l.pending == nil {
		l.pending = map[string]pendingDebit{}
	}
	p, ok := l.pending[key]
	if !ok && len(l.pending) >= maxAuthBuckets {
		for k, op := range l.pending {
			if now.Sub(op.at) > time.Minute {
				delete(l.pending, k)
			}
		}
		if len(l.pending) >= maxAuthBuckets {
			return // a flood of keys: their first requests here are not held back
		}
	}
	if now.Sub(p.at) > time.Minute {
		p.n = 0
	}
	l.pending[key] = pendingDebit{n: p.n + n, at: now}
}

// withinRate applies the per-key request bounds to a POST request of p: a virtual key's own
// requests_per_minute, else the server's RequestsPerMinutePerKey (a virtual key counted
// apart from the key that issued it); job keys have their budgets instead. Over the bound it
// sets Retry-After on w and returns the 429 to answer; nil within it.
func (s *Server) withinRate(w http.ResponseWriter, p Principal, vk virtualKeyScope, virtual bool) *APIError {
	var (
		ok   = true
		wait time.Duration
		rate int
		how  string
	)
	now := time.Now()
	orgTook, teamTook := false, false
	if virtual && vk.OrgRPM > 0 {
		// The organization's rate, shared by every key of its teams, before the team's;
		// its request is given back below when a later bound refuses.
		rate, how = vk.OrgRPM, "the organization's rpm_limit"
		ok, wait = s.vkRL.takeAt(vk.Org, rate, now)
		orgTook = ok
	}
	if ok && virtual && vk.TeamRPM > 0 {
		// The team's rate, shared by every key of the team, before the key's own; its
		// request is given back below when the key's own bound refuses.
		rate, how = vk.TeamRPM, "the team's rpm_limit"
		ok, wait = s.vkRL.takeAt(vk.Team, rate, now)
		teamTook = ok
	}
	keyRate, left := 0, 0 // the key's own bound, for the x-ratelimit headers
	switch {
	case !ok:
	case virtual && vk.RequestsPerMinute > 0:
		rate, how = vk.RequestsPerMinute, "the virtual key's requests_per_minute"
		if ok, wait, left = s.vkRL.takeLeft(vk.KeyID, rate, now); ok {
			s.shared.Add(sharedVirtualRate+strconv.Itoa(rate)+"/"+vk.KeyID, 1, now)
		}
		keyRate = rate
	case s.keyRL == nil:
	case virtual:
		rate, how = s.keyRL.perMinute, "serve --requests-per-minute-per-key"
		if ok, wait, left = s.keyRL.takeLeft(vk.KeyID, rate, now); ok {
			s.shared.Add(sharedKeyRate+vk.KeyID, 1, now)
		}
		keyRate = rate
	case p.Scope == nil:
		rate, how = s.keyRL.perMinute, "serve --requests-per-minute-per-key"
		if ok, wait, left = s.keyRL.takeLeft(p.Owner, rate, now); ok {
			s.shared.Add(sharedKeyRate+p.Owner, 1, now)
		}
		keyRate = rate
	}
	if keyRate > 0 {
		// OpenAI's and LiteLLM's rate limit headers, of the key's own bound (LiteLLM's
		// "if the key has rate limits set").
		h := w.Header()
		h["X-Ratelimit-Limit-Requests"] = []string{strconv.Itoa(keyRate)}
		h["X-Ratelimit-Remaining-Requests"] = []string{strconv.Itoa(left)}
	}
	if virtual && s.tokensLeft != nil {
		if limit, left := s.tokensLeft(vk.Budget); limit > 0 {
			// The key's own tokens_per_minute, as LiteLLM's limiter reports it.
			h := w.Header()
			h["X-Ratelimit-Limit-Tokens"] = []string{strconv.FormatInt(limit, 10)}
			h["X-Ratelimit-Remaining-Tokens"] = []string{strconv.FormatInt(left, 10)}
		}
	}
	if teamTook {
		if ok {
			s.shared.Add(sharedVirtualRate+strconv.Itoa(vk.TeamRPM)+"/"+vk.Team, 1, now)
		} else {
			s.vkRL.giveBack(vk.Team, vk.TeamRPM, now)
		}
	}
	if orgTook {
		if ok {
			s.shared.Add(sharedVirtualRate+strconv.Itoa(vk.OrgRPM)+"/"+vk.Org, 1, now)
		} else {
			s.vkRL.giveBack(vk.Org, vk.OrgRPM, now)
		}
	}
	if ok {
		return nil
	}
	secs := int(wait/time.Second) + 1
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	ae := Errorf(http.StatusTooManyRequests, KindTooManyRequests,
		"this key's request limit (%d per minute, %s) is reached; retry after %d s", rate, how, secs)
	ae.Retryable = true
	return ae
}
