package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// writeTestCert writes a self-signed certificate for 127.0.0.1 with the serial given, and
// its key, to dir's cert.pem and key.pem (replacing them through a rename each, as a
// certificate renewal tool does), and returns the certificate.
func writeTestCert(t *testing.T, dir string, serial int64) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "switchyard test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{"cert.pem": {Type: "CERTIFICATE", Bytes: der}, "key.pem": {Type: "EC PRIVATE KEY", Bytes: kder}} {
		tmp := filepath.Join(dir, name+".new")
		if err := os.WriteFile(tmp, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestServeTLS: with --tls-cert and --tls-key serve answers HTTPS (HTTP/2 negotiated) and
// refuses plain HTTP on --addr; sandboxed agents get a plain loopback gateway of their own
// (the log's agents_gateway), which answers; SIGHUP serves a renewed certificate without a
// restart, and a broken pair at SIGHUP keeps the one in force.
func TestServeTLS(t *testing.T) {
	t.Setenv("SWITCHYARD_API_KEYS", "k")
	certDir := t.TempDir()
	first := writeTestCert(t, certDir, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _, stderr, done := startServeWith(t, ctx, t.TempDir(), "--tls-cert", filepath.Join(certDir, "cert.pem"), "--tls-key", filepath.Join(certDir, "key.pem"))

	served := func() (*x509.Certificate, *http.Response) {
		t.Helper()
		tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get("https://" + addr + "/healthz")
		if err != nil {
			t.Fatal(err, stderr.String())
		}
		resp.Body.Close()
		return resp.TLS.PeerCertificates[0], resp
	}
	got, resp := served()
	if got.SerialNumber.Int64() != 1 || resp.StatusCode != 200 || resp.ProtoMajor != 2 {
		t.Fatalf("https: serial %v, %d %s", got.SerialNumber, resp.StatusCode, resp.Proto)
	}
	// The certificate verifies as the one written (a client trusting it connects).
	pool := x509.NewCertPool()
	pool.AddCert(first)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	if resp, err := (&http.Client{Transport: tr}).Get("https://" + addr + "/healthz"); err != nil {
		t.Fatalf("a client trusting the certificate: %v", err)
	} else {
		resp.Body.Close()
	}
	tr.CloseIdleConnections()
	if resp, err := http.Get("http://" + addr + "/healthz"); err == nil && resp.StatusCode == 200 {
		t.Fatal("plain HTTP answered 200 on the TLS listener")
	}

	m := regexp.MustCompile(`agents_gateway=(http://127\.0\.0\.1:\d+/v1)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no agents_gateway in the start log: %s", stderr.String())
	}
	if code, _ := get(t, m[1]+"/models", "k"); code != 200 {
		t.Fatalf("the agents' plain gateway: GET /v1/models %d", code)
	}

	// Renewed: served after SIGHUP.
	writeTestCert(t, certDir, 2)
	sendReload(t)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got, _ := served(); got.SerialNumber.Int64() == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the renewed certificate was not served after SIGHUP: %s", stderr.String())
		}
	}
	// Broken: the renewed one stays.
	if err := os.WriteFile(filepath.Join(certDir, "key.pem"), []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	sendReload(t)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stderr.String(), "the certificate in force is kept"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no log of the broken pair: %s", stderr.String())
		}
	}
	if got, _ := served(); got.SerialNumber.Int64() != 2 {
		t.Fatalf("after a broken pair at SIGHUP the served certificate is serial %v, want 2", got.SerialNumber)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestServeTLSFlags: one of the pair alone is a command line error (exit 2) naming the
// other; an unreadable pair stops serve (exit 1) naming the flags, before the data
// directory is touched.
func TestServeTLSFlags(t *testing.T) {
	certDir := t.TempDir()
	writeTestCert(t, certDir, 1)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--tls-cert", filepath.Join(certDir, "cert.pem")}, 2, "--tls-cert needs --tls-key"},
		{[]string{"--tls-key", filepath.Join(certDir, "key.pem")}, 2, "--tls-key needs --tls-cert"},
		{[]string{"--tls-cert", filepath.Join(certDir, "missing.pem"), "--tls-key", filepath.Join(certDir, "key.pem")}, 1, "--tls-cert"},
		{[]string{"--tls-cert", filepath.Join(certDir, "key.pem"), "--tls-key", filepath.Join(certDir, "cert.pem")}, 1, "--tls-cert"},
	} {
		var out, errb bytes.Buffer
		dir := t.TempDir()
		code := run(context.Background(), append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dir}, tc.args...), &out, &errb)
		if code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, %q", tc.args, code, errb.String())
		}
		if es, _ := os.ReadDir(dir); len(es) != 0 {
			t.Errorf("%v: the data directory was touched: %v", tc.args, es)
		}
	}
}

// TestWorkerLeavesOutTLSOfASharedEnvironment: a worker given serve's environment
// (SWITCHYARD_TLS_CERT and SWITCHYARD_TLS_KEY set for both, as its usage advises) starts, as
// it does with SWITCHYARD_ADDR; --tls-cert on its own command line is still refused.
func TestWorkerLeavesOutTLSOfASharedEnvironment(t *testing.T) {
	certDir := t.TempDir()
	writeTestCert(t, certDir, 1)
	t.Setenv("SWITCHYARD_TLS_CERT", filepath.Join(certDir, "cert.pem"))
	t.Setenv("SWITCHYARD_TLS_KEY", filepath.Join(certDir, "key.pem"))
	t.Setenv("SWITCHYARD_METRICS_TLS", "true") // goes with the pair: left out too
	// A bad --conversation-writes, checked after the TLS flags, stops the worker before it
	// dials the store: reaching that error is getting past the TLS check.
	base := []string{"worker", "--store", "postgres://u@127.0.0.1:1/db", "--conversation-writes", "bogus"}
	code, _, errOut := cli(t, base...)
	if code != 2 || strings.Contains(errOut, "tls") || !strings.Contains(errOut, "--conversation-writes") {
		t.Fatalf("worker with serve's TLS environment: exit %d, %s", code, errOut)
	}
	code, _, errOut = cli(t, append(base, "--tls-cert", filepath.Join(certDir, "cert.pem"))...)
	if code != 2 || !strings.Contains(errOut, "--tls-cert: a worker serves no API") {
		t.Fatalf("worker --tls-cert: exit %d, %s", code, errOut)
	}
	code, _, errOut = cli(t, append(base, "--metrics-tls")...)
	if code != 2 || !strings.Contains(errOut, "--metrics-tls: a worker takes no --tls-cert") {
		t.Fatalf("worker --metrics-tls: exit %d, %s", code, errOut)
	}
}

// TestServeMetricsTLS: with --tls-cert, --metrics-addr stayed plain HTTP, its bearer token
// in the clear. --metrics-tls serves it over HTTPS with the API's certificate, the renewed
// one after SIGHUP as the API's; it needs --tls-cert and --metrics-addr (exit 2 naming
// them). Without it, a token over plain HTTP beside TLS is warned about.
func TestServeMetricsTLS(t *testing.T) {
	t.Setenv("SWITCHYARD_API_KEYS", "k")
	certDir := t.TempDir()
	writeTestCert(t, certDir, 1)
	cert, key := filepath.Join(certDir, "cert.pem"), filepath.Join(certDir, "key.pem")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--tls-cert", cert, "--tls-key", key,
			"--metrics-addr", "127.0.0.1:0", "--metrics-tls", "--metrics-token", "scrape-me"}, stdout, stderr)
	}()
	metricsRe := regexp.MustCompile(`metrics listening.*addr=(127\.0\.0\.1:\d+)`)
	var metrics string
	for deadline := time.Now().Add(20 * time.Second); metrics == ""; time.Sleep(10 * time.Millisecond) {
		if m := metricsRe.FindStringSubmatch(stderr.String()); m != nil {
			metrics = m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %s", stderr.String())
		}
	}
	scrape := func() (*x509.Certificate, int) {
		t.Helper()
		tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
		defer tr.CloseIdleConnections()
		req, _ := http.NewRequest("GET", "https://"+metrics+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer scrape-me")
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err, stderr.String())
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.TLS.PeerCertificates[0], resp.StatusCode
	}
	if got, code := scrape(); got.SerialNumber.Int64() != 1 || code != 200 {
		t.Fatalf("metrics over https: serial %v, %d", got.SerialNumber, code)
	}
	if resp, err := http.Get("http://" + metrics + "/metrics"); err == nil && resp.StatusCode == 200 {
		t.Fatal("plain HTTP answered 200 on the metrics listener with --metrics-tls")
	}
	writeTestCert(t, certDir, 2)
	sendReload(t)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got, _ := scrape(); got.SerialNumber.Int64() == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the renewed certificate was not served on the metrics listener after SIGHUP: %s", stderr.String())
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--metrics-addr", "127.0.0.1:0", "--metrics-tls"}, "--metrics-tls needs --tls-cert"},
		{[]string{"--tls-cert", cert, "--tls-key", key, "--metrics-tls"}, "--metrics-tls needs --metrics-addr"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, tc.args...), &out, &errb); code != 2 ||
			!strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, %q", tc.args, code, errb.String())
		}
	}

	// Without --metrics-tls: plain HTTP, and a warning that the token travels in the clear.
	ctx2, cancel2 := context.WithCancel(context.Background())
	_, _, stderr2, done2 := startServeWith(t, ctx2, t.TempDir(), "--tls-cert", cert, "--tls-key", key,
		"--metrics-addr", "127.0.0.1:0", "--metrics-token", "scrape-me")
	if !strings.Contains(stderr2.String(), "set --metrics-tls") {
		t.Errorf("no warning of the token in the clear: %s", stderr2.String())
	}
	cancel2()
	<-done2
}
