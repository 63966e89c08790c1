package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serverMaxStreams dials addr over TLS with HTTP/2 and returns the
// SETTINGS_MAX_CONCURRENT_STREAMS of the server's first SETTINGS frame (-1: not announced).
func serverMaxStreams(t *testing.T, addr string) int {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("negotiated %q, want h2", p)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	// The client preface, then an empty SETTINGS frame (length 0, type 4, no flags, stream 0).
	if _, err := conn.Write(append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, 0, 0, 4, 0, 0, 0, 0, 0)); err != nil {
		t.Fatal(err)
	}
	var head [9]byte
	if _, err := io.ReadFull(conn, head[:]); err != nil {
		t.Fatal(err)
	}
	n := int(head[0])<<16 | int(head[1])<<8 | int(head[2])
	if head[3] != 4 {
		t.Fatalf("the server's first frame is of type %d, want SETTINGS (4)", head[3])
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(conn, payload); err != nil {
		t.Fatal(err)
	}
	for i := 0; i+6 <= len(payload); i += 6 {
		if binary.BigEndian.Uint16(payload[i:]) == 3 { // SETTINGS_MAX_CONCURRENT_STREAMS
			return int(binary.BigEndian.Uint32(payload[i+2:]))
		}
	}
	return -1
}

// TestServeHTTP2MaxConcurrentStreams: over HTTPS, serve announces net/http's 250 streams a
// connection by default and --http2-max-concurrent-streams' value when given (also from
// SWITCHYARD_HTTP2_MAX_CONCURRENT_STREAMS); a value out of 1..100000 is a command line error
// (exit 2) naming the flag, before the data directory is touched.
func TestServeHTTP2MaxConcurrentStreams(t *testing.T) {
	t.Setenv("SWITCHYARD_API_KEYS", "k")
	certDir := t.TempDir()
	writeTestCert(t, certDir, 1)
	pair := []string{"--tls-cert", filepath.Join(certDir, "cert.pem"), "--tls-key", filepath.Join(certDir, "key.pem")}
	for _, tc := range []struct {
		flags []string
		env   string
		want  int
	}{
		{nil, "", 250},
		{[]string{"--http2-max-concurrent-streams", "7"}, "", 7},
		{nil, "1000", 1000},
	} {
		t.Setenv("SWITCHYARD_HTTP2_MAX_CONCURRENT_STREAMS", tc.env)
		ctx, cancel := context.WithCancel(context.Background())
		addr, _, stderr, done := startServeWith(t, ctx, t.TempDir(), append(append([]string{}, pair...), tc.flags...)...)
		if got := serverMaxStreams(t, addr); got != tc.want {
			t.Errorf("%v env %q: SETTINGS_MAX_CONCURRENT_STREAMS %d, want %d (%s)", tc.flags, tc.env, got, tc.want, stderr.String())
		}
		cancel()
		if code := <-done; code != 0 {
			t.Fatalf("exit %d", code)
		}
	}
	t.Setenv("SWITCHYARD_HTTP2_MAX_CONCURRENT_STREAMS", "")
	for _, v := range []string{"0", "-1", "100001"} {
		var out, errb bytes.Buffer
		dir := t.TempDir()
		code := run(context.Background(), append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--http2-max-concurrent-streams", v}, pair...), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "--http2-max-concurrent-streams must be between 1 and 100000, got "+v) {
			t.Errorf("--http2-max-concurrent-streams %s: exit %d, %q", v, code, errb.String())
		}
		if es, _ := os.ReadDir(dir); len(es) != 0 {
			t.Errorf("%s: the data directory was touched: %v", v, es)
		}
	}
}
