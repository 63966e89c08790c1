package server

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// limitedServer is a LimitListenerWith listener on a real TCP socket whose accepted
// connections are greeted with "ok\n", drained until the client closes, then closed
// (twice: the second Close must release nothing).
type limitedServer struct {
	ll       *limitListener
	addr     string
	accepted chan struct{} // one per accepted connection
	closed   chan struct{} // one per accepted connection closed on the server side
}

func serveLimited(t *testing.T, network, laddr string, cfg LimitListenerConfig) *limitedServer {
	t.Helper()
	raw, err := net.Listen(network, laddr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", laddr, err)
	}
	ll := LimitListenerWith(raw, cfg).(*limitListener)
	s := &limitedServer{ll: ll, addr: raw.Addr().String(), accepted: make(chan struct{}, 1024), closed: make(chan struct{}, 1024)}
	t.Cleanup(func() { ll.Close() })
	go func() {
		for {
			c, err := ll.Accept()
			if err != nil {
				return
			}
			s.accepted <- struct{}{}
			go func() {
				c.Write([]byte("ok\n"))
				io.Copy(io.Discard, c)
				c.Close()
				c.Close()
				s.closed <- struct{}{}
			}()
		}
	}()
	return s
}

// counts is the listener's per-client map, as prefix → open connections.
func (s *limitedServer) counts() map[string]int {
	s.ll.mu.Lock()
	defer s.ll.mu.Unlock()
	out := map[string]int{}
	for k, cc := range s.ll.clients {
		out[k.String()] = cc.n
	}
	return out
}

// slotsAre reports whether connections hold want global slots. The serving loop's Accept
// reserves one more while it waits for the next connection (and it may not have got
// there yet), so the semaphore holds want or want+1.
func (s *limitedServer) slotsAre(want int) (bool, int) {
	n := len(s.ll.sem)
	return n == want || n == want+1, n
}

// waitClosed waits until n more accepted connections were closed on the server side.
func (s *limitedServer) waitClosed(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-s.closed:
		case <-time.After(10 * time.Second):
			t.Fatal("the server did not close a connection the client closed")
		}
	}
}

// canBind reports whether this host lets a socket bind ip (127.0.0.2 on Linux, ::1 where
// IPv6 is on).
func canBind(ip string) bool {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

func dialFrom(local, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	if local != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(local)}
	}
	return d.Dial("tcp", addr)
}

// greeting is what a client got first: accepted ("ok"), or refused with resp (its body in
// body, and closedAfter when the server closed the connection after it).
type greeting struct {
	accepted    bool
	resp        *http.Response
	body        []byte
	closedAfter bool
}

// greet reads the server's first words on c. The read deadline only keeps a broken
// listener from hanging the test; nothing is asserted about time.
func greet(c net.Conn) (greeting, error) {
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	br := bufio.NewReader(c)
	first, err := br.Peek(3)
	if err != nil {
		return greeting{}, fmt.Errorf("nothing from the server: %w", err)
	}
	if string(first) == "ok\n" {
		return greeting{accepted: true}, nil
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return greeting{}, fmt.Errorf("not a response: %w", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return greeting{}, fmt.Errorf("body: %w", err)
	}
	_, err = br.ReadByte()
	return greeting{resp: resp, body: body, closedAfter: errors.Is(err, io.EOF)}, nil
}

func mustDial(t *testing.T, local, addr string) net.Conn {
	t.Helper()
	c, err := dialFrom(local, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func mustBeAccepted(t *testing.T, c net.Conn) {
	t.Helper()
	g, err := greet(c)
	if err != nil || !g.accepted {
		t.Fatalf("%s: want accepted, got %v %v %s", c.LocalAddr(), err, g.resp, g.body)
	}
}

func mustBeRefused(t *testing.T, c net.Conn, perClient int) {
	t.Helper()
	g, err := greet(c)
	if err != nil || g.accepted {
		t.Fatalf("%s: want a 429, got accepted=%v err=%v", c.LocalAddr(), g.accepted, err)
	}
	if g.resp.StatusCode != http.StatusTooManyRequests || !g.resp.Close ||
		g.resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("refusal: %d %v", g.resp.StatusCode, g.resp.Header)
	}
	var body struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(g.body, &body); err != nil {
		t.Fatalf("refusal body %s: %v", g.body, err)
	}
	if !strings.Contains(body.Error.Message, "--max-connections-per-client") || !strings.Contains(body.Error.Message, fmt.Sprint(perClient)) ||
		body.Error.Type != "rate_limit_error" || body.Error.Code == nil || *body.Error.Code != "rate_limit_exceeded" {
		t.Fatalf("refusal body: %s", g.body)
	}
	if !g.closedAfter {
		t.Fatal("the refused connection was not closed after the 429")
	}
}

// lockedBuffer is a log destination safe to read while the listener writes to it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestPerClientLimit: a client holding PerClient connections gets a 429 naming the flag on
// the next, and that connection is closed; it holds no slot of the global bound; another
// address is still served; closing a connection frees the client's slot; the refusals of
// one burst are logged once; and the per-client map is empty once everything closed.
func TestPerClientLimit(t *testing.T) {
	var logs lockedBuffer
	s := serveLimited(t, "tcp", "127.0.0.1:0", LimitListenerConfig{Max: 100, PerClient: 2,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	a1, a2 := mustDial(t, "127.0.0.1", s.addr), mustDial(t, "127.0.0.1", s.addr)
	mustBeAccepted(t, a1)
	mustBeAccepted(t, a2)
	mustBeRefused(t, mustDial(t, "127.0.0.1", s.addr), 2)
	mustBeRefused(t, mustDial(t, "127.0.0.1", s.addr), 2)
	if ok, n := s.slotsAre(2); !ok {
		t.Errorf("semaphore at %d with 2 connections; the refused ones must hold none", n)
	}
	if n := strings.Count(logs.String(), "per-client connection limit reached"); n != 1 || !strings.Contains(logs.String(), "127.0.0.1/32") {
		t.Errorf("%d warnings for one burst:\n%s", n, logs.String())
	}
	open := []net.Conn{a1, a2}
	if canBind("127.0.0.2") {
		b := mustDial(t, "127.0.0.2", s.addr)
		mustBeAccepted(t, b)
		open = append(open, b)
	} else {
		t.Log("127.0.0.2 cannot be bound here: another address is not tried")
	}

	a1.Close()
	s.waitClosed(t, 1)
	if got := s.counts()["127.0.0.1/32"]; got != 1 {
		t.Fatalf("after a close the client holds %d", got)
	}
	a3 := mustDial(t, "127.0.0.1", s.addr)
	mustBeAccepted(t, a3)
	if got := s.counts()["127.0.0.1/32"]; got != 2 {
		t.Fatalf("the client holds %d, want 2", got)
	}
	open = append(open[1:], a3)

	for _, c := range open {
		c.Close()
	}
	s.waitClosed(t, len(open))
	if m := s.counts(); len(m) != 0 {
		t.Fatalf("after every connection closed: clients %v", m)
	}
	if ok, n := s.slotsAre(0); !ok {
		t.Fatalf("after every connection closed the semaphore is at %d", n)
	}
	// A new burst after the client held none is logged again.
	b1 := mustDial(t, "127.0.0.1", s.addr)
	b2 := mustDial(t, "127.0.0.1", s.addr)
	mustBeAccepted(t, b1)
	mustBeAccepted(t, b2)
	mustBeRefused(t, mustDial(t, "127.0.0.1", s.addr), 2)
	if n := strings.Count(logs.String(), "per-client connection limit reached"); n != 2 {
		t.Errorf("%d warnings for two bursts:\n%s", n, logs.String())
	}
}

// TestPerClientLimitKeepsGlobalBound: refused connections take no slot of Max (a second
// address still gets the last one), and Max still holds: a connection beyond it waits,
// neither refused nor served, until one closes.
func TestPerClientLimitKeepsGlobalBound(t *testing.T) {
	if !canBind("127.0.0.2") {
		t.Skip("127.0.0.2 cannot be bound here")
	}
	s := serveLimited(t, "tcp", "127.0.0.1:0", LimitListenerConfig{Max: 3, PerClient: 2})
	a1, a2 := mustDial(t, "127.0.0.1", s.addr), mustDial(t, "127.0.0.1", s.addr)
	mustBeAccepted(t, a1)
	mustBeAccepted(t, a2)
	mustBeRefused(t, mustDial(t, "127.0.0.1", s.addr), 2)
	mustBeRefused(t, mustDial(t, "127.0.0.1", s.addr), 2)
	mustBeAccepted(t, mustDial(t, "127.0.0.2", s.addr)) // the third and last slot
	for range 3 {
		<-s.accepted
	}
	waiting := mustDial(t, "127.0.0.2", s.addr)
	select {
	case <-s.accepted:
		t.Fatal("a fourth connection was served with Max 3")
	case <-time.After(100 * time.Millisecond): // only a window to catch a wrong accept
	}
	a1.Close()
	mustBeAccepted(t, waiting)
	if m := s.counts(); m["127.0.0.1/32"] != 1 || m["127.0.0.2/32"] != 2 || len(m) != 2 {
		t.Fatalf("counts %v", m)
	}
}

// TestPerClientLimitExempt: an exempt address (a trusted proxy) is not bounded per client
// and not tracked, while the global bound still counts it.
func TestPerClientLimitExempt(t *testing.T) {
	var asked atomic.Value
	s := serveLimited(t, "tcp", "127.0.0.1:0", LimitListenerConfig{Max: 10, PerClient: 1, Exempt: func(a netip.Addr) bool {
		asked.Store(a)
		return a == netip.MustParseAddr("127.0.0.1")
	}})
	var conns []net.Conn
	for range 5 {
		c := mustDial(t, "127.0.0.1", s.addr)
		mustBeAccepted(t, c)
		conns = append(conns, c)
	}
	if ok, n := s.slotsAre(5); !ok || len(s.counts()) != 0 {
		t.Fatalf("exempt connections: clients %v, semaphore at %d", s.counts(), n)
	}
	if a, _ := asked.Load().(netip.Addr); a != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("Exempt was asked about %v", a)
	}
	for _, c := range conns {
		c.Close()
	}
	s.waitClosed(t, len(conns))
	if ok, n := s.slotsAre(0); !ok {
		t.Fatalf("after every connection closed the semaphore is at %d", n)
	}
}

// TestPerClientLimitIPv6: over ::1 the bound works the same, counted for the /64.
func TestPerClientLimitIPv6(t *testing.T) {
	if !canBind("::1") {
		t.Skip("no IPv6 loopback")
	}
	s := serveLimited(t, "tcp6", "[::1]:0", LimitListenerConfig{PerClient: 1})
	c := mustDial(t, "", s.addr)
	mustBeAccepted(t, c)
	mustBeRefused(t, mustDial(t, "", s.addr), 1)
	if m := s.counts(); m["::/64"] != 1 || len(m) != 1 {
		t.Fatalf("counts %v", m)
	}
	c.Close()
	s.waitClosed(t, 1)
	if m := s.counts(); len(m) != 0 {
		t.Fatalf("counts after close %v", m)
	}
}

// TestClientKey: IPv4 clients are counted per address, IPv6 ones per /64; IPv4-mapped
// addresses are their IPv4 address and zones are dropped; a peer that is not an IP address
// is not bounded per client.
func TestClientKey(t *testing.T) {
	for in, want := range map[string][2]string{
		"192.0.2.7:5000":              {"192.0.2.7", "192.0.2.7/32"},
		"[2001:db8:1:2:aaaa::1]:443":  {"2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"},
		"[2001:db8:1:2:bbbb::9]:443":  {"2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"},
		"[2001:db8:1:3::1]:443":       {"2001:db8:1:3::1", "2001:db8:1:3::/64"},
		"[::ffff:192.0.2.7]:80":       {"192.0.2.7", "192.0.2.7/32"},
		"[fe80::1%eth0]:80":           {"fe80::1", "fe80::/64"},
		"[::ffff:10.1.2.3%lo]:80":     {"10.1.2.3", "10.1.2.3/32"},
		"[2001:db8::ffff:1:2:3]:8080": {"2001:db8::ffff:1:2:3", "2001:db8::/64"},
	} {
		ap := netip.MustParseAddrPort(in)
		ip, key, ok := clientKey(net.TCPAddrFromAddrPort(ap))
		if !ok || ip.String() != want[0] || key.String() != want[1] {
			t.Errorf("clientKey(%s) = %v %v %v, want %v", in, ip, key, ok, want)
		}
	}
	if _, _, ok := clientKey(&net.UnixAddr{Name: "/tmp/s", Net: "unix"}); ok {
		t.Error("a unix socket peer has a client key")
	}
}

// TestPerClientLimitConcurrent: clients on several addresses (one exempt) connect, are
// served or refused, and close, all at once, with both bounds tight; afterwards nothing is
// held. Run with -race.
func TestPerClientLimitConcurrent(t *testing.T) {
	addrs := []string{"127.0.0.1"}
	if canBind("127.0.0.2") && canBind("127.0.0.3") {
		addrs = append(addrs, "127.0.0.2", "127.0.0.3")
	}
	s := serveLimited(t, "tcp", "127.0.0.1:0", LimitListenerConfig{Max: 8, PerClient: 3,
		Exempt: func(a netip.Addr) bool { return a == netip.MustParseAddr("127.0.0.3") },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	var served, refused atomic.Int64
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				c, err := dialFrom(addrs[g%len(addrs)], s.addr)
				if err != nil {
					t.Error(err)
					return
				}
				gr, err := greet(c)
				c.Close()
				switch {
				case err != nil:
					t.Error(err)
					return
				case gr.accepted:
					served.Add(1)
				case gr.resp.StatusCode == http.StatusTooManyRequests:
					refused.Add(1)
				default:
					t.Errorf("got %d", gr.resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	s.waitClosed(t, int(served.Load()))
	t.Logf("%d served, %d refused", served.Load(), refused.Load())
	if m := s.counts(); len(m) != 0 {
		t.Fatalf("after every connection closed: clients %v", m)
	}
	if ok, n := s.slotsAre(0); !ok {
		t.Fatalf("after every connection closed the semaphore is at %d", n)
	}
}

// TestLimitListenerUnchanged: LimitListener keeps its contract: no bound returns the
// listener itself, and a bound is global only (one address may take every slot).
func TestLimitListenerUnchanged(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if LimitListener(raw, 0) != raw || LimitListenerWith(raw, LimitListenerConfig{}) != raw {
		t.Fatal("no bound wraps the listener")
	}
	ll := LimitListener(raw, 3).(*limitListener)
	if ll.clients != nil {
		t.Fatal("LimitListener bounds clients")
	}
}

// TestPerClientLimitOverTLS: on a listener served with TLS (serve --tls-cert) a connection
// over the per-client bound gets its 429 over TLS, which an https:// client (offering h2
// too) reads as the answer, where a 429 in the clear before the handshake was a handshake
// error to it.
func TestPerClientLimitOverTLS(t *testing.T) {
	certs := httptest.NewUnstartedServer(http.NotFoundHandler())
	certs.EnableHTTP2 = true
	certs.StartTLS() // only for its certificate, and a client trusting it
	certs.Close()
	client := certs.Client()
	defer client.CloseIdleConnections()

	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{
		Handler:   http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }),
		TLSConfig: &tls.Config{Certificates: certs.TLS.Certificates, NextProtos: []string{"h2", "http/1.1"}},
	}
	go hs.ServeTLS(LimitListenerWith(raw, LimitListenerConfig{Max: 10, PerClient: 1, TLS: hs.TLSConfig}), "", "")
	defer hs.Close()

	held, err := tls.Dial("tcp", raw.Addr().String(), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	resp, err := client.Get("https://" + raw.Addr().String() + "/")
	if err != nil {
		t.Fatalf("the connection over the bound: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.ProtoMajor != 1 || !strings.Contains(string(body), "--max-connections-per-client") {
		t.Fatalf("over the bound: %d %s %s", resp.StatusCode, resp.Proto, body)
	}
	held.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := client.Get("https://" + raw.Addr().String() + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 && resp.ProtoMajor == 2 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the held connection closed: %v", err)
		}
	}
}

// TestPerClientLimitBoundsHTTP2Streams: over HTTP/2 (serve --tls-cert) one connection
// carries many requests at once, so the per-client bound counts a client's requests in
// flight too (LimitRequestsPerClient): with PerClient 2, of five requests sent at once on
// one HTTP/2 connection two are served and three get the 429 naming
// --max-connections-per-client, over HTTP/2, the connection staying up. Requests on
// another listener the server serves (serve's agents' loopback) are not counted.
func TestPerClientLimitBoundsHTTP2Streams(t *testing.T) {
	certs := httptest.NewUnstartedServer(http.NotFoundHandler())
	certs.EnableHTTP2 = true
	certs.StartTLS() // only for its certificate, and a client trusting it
	certs.Close()
	client := certs.Client()
	defer client.CloseIdleConnections()

	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var entered, most, inFlight atomic.Int32
	hs := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/quick" {
				io.WriteString(w, "ok")
				return
			}
			entered.Add(1)
			n := inFlight.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			<-release
			inFlight.Add(-1)
			io.WriteString(w, "ok")
		}),
		TLSConfig: &tls.Config{Certificates: certs.TLS.Certificates, NextProtos: []string{"h2", "http/1.1"}},
	}
	ll := LimitListenerWith(raw, LimitListenerConfig{Max: 100, PerClient: 2, TLS: hs.TLSConfig})
	LimitRequestsPerClient(hs, ll)
	go hs.ServeTLS(ll, "", "")
	go hs.Serve(other)
	defer hs.Close()
	base := "https://" + raw.Addr().String()

	// One connection, HTTP/2, before the requests go out together on it.
	resp, err := client.Get(base + "/quick")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("not HTTP/2: %s", resp.Proto)
	}
	type result struct {
		code, proto int
		body        string
		err         error
	}
	results := make(chan result, 8)
	get := func(c *http.Client, url string) {
		resp, err := c.Get(url)
		if err != nil {
			results <- result{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		results <- result{code: resp.StatusCode, proto: resp.ProtoMajor, body: string(b)}
	}
	for range 5 {
		go get(client, base+"/slow")
	}
	timeout := time.After(30 * time.Second) // a hang guard, not a measure
	for refused := 0; refused < 3; {
		select {
		case r := <-results:
			if r.err != nil || r.code != http.StatusTooManyRequests || r.proto != 2 || !strings.Contains(r.body, "--max-connections-per-client") {
				t.Fatalf("a request while two were in flight: %d HTTP/%d %v %s", r.code, r.proto, r.err, r.body)
			}
			refused++
		case <-timeout:
			t.Fatalf("only %d of the requests over the bound were refused", refused)
		}
	}
	// The other listener's requests are not the client's: three more are served there.
	plain := &http.Client{}
	for range 3 {
		go get(plain, "http://"+other.Addr().String()+"/slow")
	}
	for entered.Load() < 5 {
		select {
		case r := <-results:
			t.Fatalf("a request answered before release: %+v", r)
		case <-timeout:
			t.Fatalf("%d requests entered, want 2 over TLS and 3 on the other listener", entered.Load())
		case <-time.After(10 * time.Millisecond):
		}
	}
	close(release)
	for range 5 {
		if r := <-results; r.err != nil || r.code != 200 {
			t.Fatalf("a request in flight: %d %v %s", r.code, r.err, r.body)
		}
	}
	if most.Load() != 5 {
		t.Errorf("%d in flight at most, want 5 (2 over TLS, 3 on the other listener)", most.Load())
	}
	// The requests are uncounted when they end: the client is served again.
	resp, err = client.Get(base + "/quick")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the requests ended: %v %v", err, resp)
	}
	resp.Body.Close()
	l := ll.(*limitListener)
	l.mu.Lock()
	for key, cc := range l.clients {
		if cc.requests != 0 {
			t.Errorf("client %s still counts %d requests", key, cc.requests)
		}
	}
	l.mu.Unlock()
}
