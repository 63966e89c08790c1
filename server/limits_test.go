package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestWeakOperatorKeyWarns: a key shorter than MinAPIKeyLength draws one warning naming its
// index and length, never the key.
func TestWeakOperatorKeyWarns(t *testing.T) {
	var buf bytes.Buffer
	testServer(t, Config{APIKeys: []string{"x", strings.Repeat("k", MinAPIKeyLength)}}, &buf)
	out := buf.String()
	if strings.Count(out, "weak operator API key") != 1 || !strings.Contains(out, `"key_index":0`) || strings.Contains(out, `"x"`) {
		t.Fatalf("log: %s", out)
	}
}

// TestFailedAuthIsRateLimited: an address that keeps sending wrong keys is refused with 429
// and Retry-After, even with the right key, while another address is not affected.
func TestFailedAuthIsRateLimited(t *testing.T) {
	var logs bytes.Buffer
	s := testServer(t, Config{FailedAuthPerMinute: 5}, &logs)
	req := func(addr, key string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/api/v1/test/echo", strings.NewReader(`{"name":"x"}`))
		r.RemoteAddr = addr + ":1234"
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w
	}
	for i := range 5 {
		if w := req("10.0.0.1", fmt.Sprintf("guess-%d", i)); w.Code != 401 {
			t.Fatalf("guess %d: %d", i, w.Code)
		}
	}
	w := req("10.0.0.1", "guess-6")
	if w.Code != 429 || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "failed authentications") {
		t.Fatalf("after 5 failures: %d %s %q", w.Code, w.Body, w.Header().Get("Retry-After"))
	}
	if w := req("10.0.0.1", testKey); w.Code != 429 {
		t.Fatalf("the right key from a blocked address: %d (the key must not be checked)", w.Code)
	}
	// The operator learns once which address was locked out, and access lines name it.
	if n := strings.Count(logs.String(), "failed-auth limit reached"); n != 1 || !strings.Contains(logs.String(), `"remote":"10.0.0.1"`) {
		t.Errorf("%d lockout warnings, remote address in the log: %v\n%s", n, strings.Contains(logs.String(), `"remote":"10.0.0.1"`), logs.String())
	}
	if w := req("10.0.0.2", testKey); w.Code != 200 {
		t.Fatalf("another address: %d %s", w.Code, w.Body)
	}
	for range 20 {
		if w := req("10.0.0.3", testKey); w.Code != 200 {
			t.Fatalf("successful requests are throttled: %d", w.Code)
		}
	}
	// /v1/ gets OpenAI's envelope.
	r := httptest.NewRequest("GET", "/v1/models", nil)
	r.RemoteAddr = "10.0.0.1:1"
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	if rec.Code != 429 || !strings.Contains(rec.Body.String(), `"message"`) || !strings.Contains(rec.Body.String(), `{"error":{`) {
		t.Fatalf("/v1/: %d %s", rec.Code, rec.Body)
	}
}

// servedOverTCP runs s on a real listener with the given http.Server settings.
func servedOverTCP(t *testing.T, s http.Handler, configure func(*http.Server), ln net.Listener) string {
	t.Helper()
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: time.Second}
	configure(hs)
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String()
}

func errorAs(err error, target *net.Error) bool {
	ne, ok := err.(net.Error)
	if ok {
		*target = ne
	}
	return ok
}

// TestStalledBodyIsCutOff: a client that sends one byte of its body and stops gets an error
// and its connection closed after the body-read timeout.
func TestStalledBodyIsCutOff(t *testing.T) {
	s := testServer(t, Config{BodyReadTimeout: 100 * time.Millisecond}, nil)
	addr := servedOverTCP(t, s, func(*http.Server) {}, nil)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /api/v1/test/echo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", testKey)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout || strings.Contains(string(body), "127.0.0.1") {
			t.Fatalf("a stalled body got %d %s; want 408 without socket addresses", resp.StatusCode, body)
		}
	}
	var ne net.Error
	if err != nil && errorAs(err, &ne) && ne.Timeout() {
		t.Fatal("the server kept the stalled request open for 5 s")
	}
}

// TestLongStreamOutlivesBodyTimeout: a response that takes longer than the body-read
// timeout (a stream) is not cut once the body was read.
func TestLongStreamOutlivesBodyTimeout(t *testing.T) {
	s := testServer(t, Config{BodyReadTimeout: 50 * time.Millisecond}, nil)
	s.Handle(Route{Method: "POST", Path: "/api/v1/test/slow"}, func(w http.ResponseWriter, r *http.Request) error {
		io.ReadAll(r.Body)
		for i := range 5 {
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(40 * time.Millisecond)
		}
		return nil
	})
	s.handler = s.withAccessLog(withCORS(nil, s.withRecover(http.HandlerFunc(s.dispatch))))
	addr := servedOverTCP(t, s, func(*http.Server) {}, nil)
	req, _ := http.NewRequest("POST", "http://"+addr+"/api/v1/test/slow", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || strings.Count(string(b), "data:") != 5 {
		t.Fatalf("stream cut: %q %v", b, err)
	}
}

// TestIdleKeepAliveClosed: an idle keep-alive connection is closed after the idle timeout
// serve sets.
func TestIdleKeepAliveClosed(t *testing.T) {
	s := testServer(t, Config{}, nil)
	addr := servedOverTCP(t, s, func(hs *http.Server) { hs.IdleTimeout = 100 * time.Millisecond }, nil)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("unexpected data")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the idle connection stayed open for 5 s")
	}
}

// TestLimitListener: at most n connections are served at once; the next waits until one
// closes.
func TestLimitListener(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := LimitListener(raw, 2)
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() { io.Copy(io.Discard, c); c.Close() }()
		}
	}()
	defer ln.Close()
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	time.Sleep(100 * time.Millisecond)
	if n := accepted.Load(); n != 2 {
		t.Fatalf("accepted %d connections with a limit of 2", n)
	}
	conns[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for accepted.Load() != 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if accepted.Load() != 3 {
		t.Fatal("the third connection was not accepted after one closed")
	}
	for _, c := range conns[1:] {
		c.Close()
	}
}

// TestAuthLimitUnitIsTheIPv6Network: IPv6 clients are limited per /64 (a host that cycles
// through its own addresses shares one allowance); IPv4 per address.
func TestAuthLimitUnitIsTheIPv6Network(t *testing.T) {
	for remote, want := range map[string]string{
		"192.0.2.7:5000":             "192.0.2.7",
		"[2001:db8:1:2:aaaa::1]:443": "2001:db8:1:2::/64",
		"[2001:db8:1:2:bbbb::9]:443": "2001:db8:1:2::/64",
		"[::ffff:192.0.2.7]:80":      "192.0.2.7", // the same client as over IPv4
		"not-an-address":             "not-an-address",
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		if got := (&Server{}).clientAddr(r); got != want {
			t.Errorf("clientAddr(%s) = %q, want %q", remote, got, want)
		}
	}
}

// Behind a trusted reverse proxy the client is the last X-Forwarded-For entry that is not a
// proxy; from anyone else X-Forwarded-For is ignored (it could claim any address).
func TestClientAddrBehindTrustedProxies(t *testing.T) {
	s := &Server{cfg: Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}}
	for _, c := range []struct{ remote, xff, want string }{
		{"10.0.0.2:1", "203.0.113.5", "203.0.113.5"},
		{"10.0.0.2:1", "198.51.100.1, 203.0.113.5, 10.0.0.9", "203.0.113.5"}, // a proxy chain; the left entries are the client's claims
		{"10.0.0.2:1", "", "10.0.0.2"},
		{"10.0.0.2:1", "garbage, 203.0.113.5", "203.0.113.5"},
		{"10.0.0.2:1", "203.0.113.5, garbage", "10.0.0.2"},
		{"192.0.2.7:1", "203.0.113.5", "192.0.2.7"}, // not a trusted proxy: its header is ignored
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.remote
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := s.clientAddr(r); got != c.want {
			t.Errorf("remote %s, X-Forwarded-For %q: client %q, want %q", c.remote, c.xff, got, c.want)
		}
	}
	// The failed-auth limit then counts clients behind the proxy apart.
	srv := testServer(t, Config{FailedAuthPerMinute: 2, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, nil)
	req := func(client, key string) int {
		r := httptest.NewRequest("POST", "/api/v1/test/echo", strings.NewReader(`{"name":"x"}`))
		r.RemoteAddr = "10.0.0.2:1234"
		r.Header.Set("X-Forwarded-For", client)
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		return w.Code
	}
	for range 3 {
		req("203.0.113.5", "stale-key")
	}
	if code := req("203.0.113.5", testKey); code != 429 {
		t.Errorf("the guessing client behind the proxy: %d, want 429", code)
	}
	if code := req("198.51.100.1", testKey); code != 200 {
		t.Errorf("another client behind the same proxy: %d, want 200", code)
	}
}

// TestRequestsPerMinutePerKey: a key over its POST requests per minute gets 429 with
// Retry-After (OpenAI's rate_limit_exceeded on /v1/, without x-should-retry: false, so the
// SDKs retry after the wait); its GETs and another key are not affected.
func TestRequestsPerMinutePerKey(t *testing.T) {
	other := strings.Repeat("o", MinAPIKeyLength)
	s := testServer(t, Config{RequestsPerMinutePerKey: 3, APIKeys: []string{testKey, other}}, nil)
	do := func(method, path, key string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(`{"name":"x"}`))
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w
	}
	for i := range 3 {
		if w := do("POST", "/api/v1/test/echo", testKey); w.Code != 200 {
			t.Fatalf("request %d: %d %s", i, w.Code, w.Body)
		}
	}
	w := do("POST", "/api/v1/test/echo", testKey)
	if w.Code != 429 || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "requests-per-minute-per-key") {
		t.Fatalf("fourth request: %d %s %q", w.Code, w.Body, w.Header().Get("Retry-After"))
	}
	if w := do("GET", "/api/v1/test/items", testKey); w.Code == 429 {
		t.Errorf("a GET was limited")
	}
	if w := do("POST", "/api/v1/test/echo", other); w.Code != 200 {
		t.Errorf("another key: %d", w.Code)
	}
	w = do("POST", "/v1/chat/completions", testKey)
	if w.Code != 429 || !strings.Contains(w.Body.String(), `"code":"rate_limit_exceeded"`) || w.Header().Get("X-Should-Retry") == "false" {
		t.Errorf("/v1/: %d %s, x-should-retry %q", w.Code, w.Body, w.Header().Get("X-Should-Retry"))
	}
}

// TestLargeUploadRouteGetsTimeForItsBody: a route with its own, larger body limit (file
// uploads, audio, image edits) gives a body larger than the server's limit proportionally
// more time to arrive — a 50 MB image at 30 s would need 14 Mbit/s — while a body within the
// server's limit keeps the plain timeout.
func TestLargeUploadRouteGetsTimeForItsBody(t *testing.T) {
	s := testServer(t, Config{BodyReadTimeout: 150 * time.Millisecond, MaxBodyBytes: 1000}, nil)
	s.Handle(Route{Method: "POST", Path: "/api/v1/test/upload", MaxBodyBytes: 100_000}, func(w http.ResponseWriter, r *http.Request) error {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]int{"bytes": len(b)})
		return nil
	})
	s.handler = s.withAccessLog(withCORS(nil, s.withRecover(http.HandlerFunc(s.dispatch))))
	addr := servedOverTCP(t, s, func(*http.Server) {}, nil)
	send := func(size int, pause time.Duration) (int, string) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /api/v1/test/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", testKey, size)
		body := strings.Repeat("x", size)
		for i := 0; i < 4; i++ { // the body in four pieces, pause apart
			c.Write([]byte(body[i*size/4 : (i+1)*size/4]))
			time.Sleep(pause)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return 0, err.Error()
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	// 20,000 bytes, 20 times the server's limit: 20 × 150 ms to arrive; it takes ~400 ms.
	if code, body := send(20_000, 100*time.Millisecond); code != http.StatusOK || !strings.Contains(body, `"bytes":20000`) {
		t.Errorf("a large upload sent over 400 ms: %d %s", code, body)
	}
	// 800 bytes, within the server's limit: the plain 150 ms.
	if code, body := send(800, 100*time.Millisecond); code == http.StatusOK {
		t.Errorf("a small body sent over 400 ms got %d %s; want it cut at the plain timeout", code, body)
	}
}
