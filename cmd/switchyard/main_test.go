package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// addrRe finds the address serve listens on in its log (its "switchyard listening" line: a
// --metrics-addr listener logs its own addr= before it).
var addrRe = regexp.MustCompile(`switchyard listening"? addr=(127\.0\.0\.1:\d+)`)
var keyRe = regexp.MustCompile(`(?m)^\s+(sy-\S+)$`)

// startServe runs `switchyard serve` in-process and returns its address and printed output.
func startServe(t *testing.T, ctx context.Context, dataDir string) (addr string, stdout *syncBuffer, done chan int) {
	t.Helper()
	addr, stdout, _, done = startServeWith(t, ctx, dataDir)
	return addr, stdout, done
}

// startServeWith runs `switchyard serve` in-process on dataDir with the further flags
// given and returns its address, its printed output and log, and its exit code's channel.
func startServeWith(t *testing.T, ctx context.Context, dataDir string, flags ...string) (addr string, stdout, stderr *syncBuffer, done chan int) {
	t.Helper()
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	done = make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dataDir}, flags...), stdout, stderr)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m := addrRe.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], stdout, stderr, done
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d: %s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not start: %s", stderr.String())
	return
}

func get(t *testing.T, url, key string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

func TestServeCreatesKeyOnceAndShutsDown(t *testing.T) {
	t.Setenv("SWITCHYARD_API_KEYS", "")
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	addr, stdout, done := startServe(t, ctx, dir)
	m := keyRe.FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("no key printed on first start: %q", stdout.String())
	}
	key := m[1]
	base := "http://" + addr
	if code, _ := get(t, base+"/healthz", ""); code != 200 {
		t.Fatalf("healthz %d", code)
	}
	if code, body := get(t, base+"/api/v1/openapi.json", key); code != 200 || body["openapi"] != "3.1.0" {
		t.Fatalf("openapi with key: %d %v", code, body["openapi"])
	}
	if code, body := get(t, base+"/api/v1/nope", ""); code != 401 || body["error"] != "Unauthorized" {
		t.Fatalf("no key: %d %v", code, body)
	}
	if code, _ := get(t, base+"/api/v1/nope", key); code != 404 {
		t.Fatalf("printed key rejected: %d", code)
	}

	// While it runs, a second server on the same data directory fails clearly.
	var out2 bytes.Buffer
	code := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data", dir}, io.Discard, &out2)
	if code == 0 || !strings.Contains(out2.String(), "locked by another process") || !strings.Contains(out2.String(), "already running with --data") {
		t.Fatalf("second serve: code %d, %s", code, out2.String())
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exit code %d", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop on cancel")
	}

	// Second start: the stored key still works and no new key is printed.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	addr2, stdout2, done2 := startServe(t, ctx2, dir)
	if keyRe.MatchString(stdout2.String()) {
		t.Fatalf("a key was printed again: %q", stdout2.String())
	}
	if code, _ := get(t, "http://"+addr2+"/api/v1/nope", key); code != 404 {
		t.Fatalf("stored key rejected after restart: %d", code)
	}
	cancel2()
	<-done2
}

func TestEnvironmentKeysSkipCreation(t *testing.T) {
	t.Setenv("SWITCHYARD_API_KEYS", "k1, k2")
	ctx, cancel := context.WithCancel(context.Background())
	addr, stdout, done := startServe(t, ctx, t.TempDir())
	defer func() { cancel(); <-done }()
	if keyRe.MatchString(stdout.String()) {
		t.Fatal("key created although SWITCHYARD_API_KEYS is set")
	}
	if code, _ := get(t, "http://"+addr+"/api/v1/nope", "k2"); code != 404 {
		t.Fatalf("env key rejected: %d", code)
	}
}

func TestFlagsFromEnvironment(t *testing.T) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c := serveFlags(fs)
	env := map[string]string{"SWITCHYARD_ADDR": "0.0.0.0:9999", "SWITCHYARD_DATA": "/from/env", "SWITCHYARD_MAX_BODY_BYTES": "42"}
	if err := parseFlags(fs, []string{"--data", "/from/flag"}, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if c.Addr != "0.0.0.0:9999" || c.DataDir != "/from/flag" || c.MaxBodyBytes != 42 {
		t.Fatalf("got %+v", c)
	}
	fs = flag.NewFlagSet("serve", flag.ContinueOnError)
	serveFlags(fs)
	if err := parseFlags(fs, nil, func(k string) string {
		if k == "SWITCHYARD_MAX_BODY_BYTES" {
			return "lots"
		}
		return ""
	}); err == nil || !strings.Contains(err.Error(), "SWITCHYARD_MAX_BODY_BYTES") {
		t.Fatalf("bad env value: %v", err)
	}
	// A stray word would make the flag package drop every flag after it.
	fs = flag.NewFlagSet("serve", flag.ContinueOnError)
	c = serveFlags(fs)
	if err := parseFlags(fs, []string{"extra", "--addr", "127.0.0.1:1"}, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), `unexpected argument "extra"`) {
		t.Fatalf("stray argument: %v (addr %s)", err, c.Addr)
	}
}

func TestVersionAndUnknownCommand(t *testing.T) {
	var out bytes.Buffer
	if code := run(context.Background(), []string{"version"}, &out, io.Discard); code != 0 || !strings.Contains(out.String(), version) {
		t.Fatalf("version: %d %q", code, out.String())
	}
	var errOut bytes.Buffer
	if code := run(context.Background(), []string{"bogus"}, io.Discard, &errOut); code != 2 || !strings.Contains(errOut.String(), "unknown command") {
		t.Fatalf("bogus: %d %q", code, errOut.String())
	}
}

// TestBadConversationWritesFailsBeforeTouchingData: an unknown --conversation-writes is a
// clear error and leaves no data directory behind.
func TestBadConversationWritesFailsBeforeTouchingData(t *testing.T) {
	for flag, value := range map[string]string{"--conversation-writes": "sideways", "--sandbox": "foo"} {
		dir := filepath.Join(t.TempDir(), "data")
		var out, errOut strings.Builder
		err := runServe(context.Background(), []string{"--data", dir, flag, value, "--addr", "127.0.0.1:0"}, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), flag) {
			t.Fatalf("%s %s: err = %v", flag, value, err)
		}
		if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
			t.Fatalf("%s %s: data directory created: %v", flag, value, statErr)
		}
	}
}

func TestVersionAndServeHelp(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var out, errb strings.Builder
		if code := run(context.Background(), args, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "switchyard "+version+"\n") ||
			!strings.Contains(out.String(), "module github.com/switchyard-ai/switchyard") {
			t.Errorf("%v: code %d, out %q, err %q", args, code, out.String(), errb.String())
		}
	}
	var out, errb strings.Builder
	if code := run(context.Background(), []string{"serve", "-h"}, &out, &errb); code != 0 {
		t.Fatalf("serve -h: %d", code)
	}
	for _, want := range []string{"SWITCHYARD_API_KEYS", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "SWITCHYARD_PYTHON_WASM", "GOGC", "SWITCHYARD_ADDR", "SWITCHYARD_STORE", "SWITCHYARD_METRICS_TOKEN", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_SERVICE_NAME", "SWITCHYARD_RESPONSES_TTL", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SWITCHYARD_TRACE_CONTENT"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("serve -h does not name %s", want)
		}
	}
	if errb.Len() != 0 {
		t.Errorf("serve -h wrote to stderr: %q", errb.String())
	}
	// Help asked for is the answer, on stdout (so `switchyard chat -h | less` works); help
	// after a mistake stays on stderr.
	for _, args := range [][]string{{"-h"}, {"help"}, {"chat", "--help"}, {"cache", "-h"}} {
		var out, errb strings.Builder
		if code := run(context.Background(), args, &out, &errb); code != 0 || !strings.Contains(out.String(), "usage: switchyard") || errb.Len() != 0 {
			t.Errorf("%v: code %d, stdout %q, stderr %q", args, code, out.String(), errb.String())
		}
	}
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), nil, &out, &errb); code != 2 || out.Len() != 0 || !strings.Contains(errb.String(), "usage: switchyard") {
		t.Errorf("no command: code %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

func TestPublicAddrOfWildcardListener(t *testing.T) {
	for addr, want := range map[string]string{"[::]:8080": "localhost:8080", "0.0.0.0:9": "localhost:9", "127.0.0.1:80": "127.0.0.1:80"} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := publicAddr(a); got != want {
			t.Errorf("publicAddr(%s) = %s, want %s", addr, got, want)
		}
	}
}

// A bad flag is reported once (by the flag package, with the usage), with exit status 2 as
// for an unknown command.
func TestBadFlagReportedOnce(t *testing.T) {
	var errOut bytes.Buffer
	if code := run(context.Background(), []string{"serve", "--nope"}, io.Discard, &errOut); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if n := strings.Count(errOut.String(), "flag provided but not defined"); n != 1 {
		t.Errorf("the error is printed %d times:\n%s", n, errOut.String())
	}
	errOut.Reset()
	if code := run(context.Background(), []string{"serve", "stray", "--addr", "127.0.0.1:1"}, io.Discard, &errOut); code != 2 ||
		strings.Count(errOut.String(), `unexpected argument "stray"`) != 1 {
		t.Errorf("stray argument: exit %d, %q", code, errOut.String())
	}
}

func TestParsePrefixes(t *testing.T) {
	got, err := parsePrefixes("10.0.0.0/8, 192.0.2.7 ,::ffff:198.51.100.1, 2001:db8::/32")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.0/8", "192.0.2.7/32", "198.51.100.1/32", "2001:db8::/32"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("prefix %d = %s, want %s", i, got[i], want[i])
		}
	}
	if _, err := parsePrefixes("10.0.0.0/8,proxy.local"); err == nil || !strings.Contains(err.Error(), "proxy.local") {
		t.Errorf("a host name: %v", err)
	}
	var errOut bytes.Buffer
	dir := filepath.Join(t.TempDir(), "data")
	if code := run(context.Background(), []string{"serve", "--data", dir, "--trusted-proxies", "nope"}, io.Discard, &errOut); code == 0 || !strings.Contains(errOut.String(), "--trusted-proxies") {
		t.Errorf("bad --trusted-proxies: exit %d, %s", code, errOut.String())
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("a bad --trusted-proxies left a data directory behind")
	}
	for _, v := range []string{"0", "1.5", "-0.01"} {
		errOut.Reset()
		if code := run(context.Background(), []string{"serve", "--data", dir, "--tradeoff-max-loss", v}, io.Discard, &errOut); code == 0 || !strings.Contains(errOut.String(), "--tradeoff-max-loss") {
			t.Errorf("--tradeoff-max-loss %s: exit %d, %s", v, code, errOut.String())
		}
	}
}
