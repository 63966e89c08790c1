package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeRefusesBadListenAddr: a listen address that cannot be listened on as written (a
// port out of range, no port, a host that does not resolve) is a command line error, exit 2
// naming the flag (or the variable that set it), before the data directory is made; a port
// another process holds stays a start-up failure, exit 1, saying so.
func TestServeRefusesBadListenAddr(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "127.0.0.1:99999"}, `--addr "127.0.0.1:99999": port 99999 is out of range`},
		{[]string{"--addr", "abc"}, `--addr "abc": missing port in address`},
		{[]string{"--addr", "127.0.0.1"}, `--addr "127.0.0.1": missing port in address`},
		{[]string{"--addr", "127.0.0.1:"}, `--addr "127.0.0.1:": no port after the colon`},
		{[]string{"--addr", "localhost:nosuchservice"}, `port "nosuchservice" is neither a number`},
		// .invalid never resolves (RFC 2606).
		{[]string{"--addr", "nosuch.invalid:8080"}, `--addr "nosuch.invalid:8080": host "nosuch.invalid" does not resolve`},
		{[]string{"--addr", "127.0.0.1:0", "--metrics-addr", ":70000"}, `--metrics-addr ":70000": port 70000 is out of range`},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		var errOut bytes.Buffer
		code := run(context.Background(), append([]string{"serve", "--data", dir}, tc.args...), io.Discard, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q in:\n%s", tc.args, code, tc.want, errOut.String())
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%v: the data directory was made before the refusal (%v)", tc.args, err)
		}
	}

	t.Run("environment", func(t *testing.T) {
		t.Setenv("SWITCHYARD_ADDR", "0.0.0.0:123456")
		dir := filepath.Join(t.TempDir(), "data")
		var errOut bytes.Buffer
		code := run(context.Background(), []string{"serve", "--data", dir}, io.Discard, &errOut)
		if want := `--addr (from SWITCHYARD_ADDR) "0.0.0.0:123456": port 123456 is out of range`; code != 2 || !strings.Contains(errOut.String(), want) {
			t.Errorf("exit %d, want 2 and %q in:\n%s", code, want, errOut.String())
		}
	})

	t.Run("in use", func(t *testing.T) {
		held, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer held.Close()
		var errOut bytes.Buffer
		code := run(context.Background(), []string{"serve", "--data", t.TempDir(), "--addr", held.Addr().String()}, io.Discard, &errOut)
		if want := "--addr " + held.Addr().String() + ": the address is already in use"; code != 1 || !strings.Contains(errOut.String(), want) {
			t.Errorf("exit %d, want 1 and %q in:\n%s", code, want, errOut.String())
		}
	})
}

// TestAddrFlagNamesWhereTheValueCameFrom: the command line wins over the environment, so an
// error names the variable only when the command line did not give the flag.
func TestAddrFlagNamesWhereTheValueCameFrom(t *testing.T) {
	env := func(k string) string {
		if k == "SWITCHYARD_ADDR" {
			return ":1"
		}
		return ""
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--addr (from SWITCHYARD_ADDR)"},
		{[]string{"--addr", ":2"}, "--addr"},
		{[]string{"-addr=:2"}, "--addr"},
		{[]string{"--public-url", "http://x", "--addresses-ignored"}, "--addr (from SWITCHYARD_ADDR)"},
	} {
		if got := addrFlag(tc.args, "addr", env); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
	}
	if got := addrFlag(nil, "addr", func(string) string { return "" }); got != "--addr" {
		t.Errorf("no environment: %q", got)
	}
}
