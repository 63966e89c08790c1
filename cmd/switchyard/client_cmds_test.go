package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

const cliKey = "cli-test-key"

// cliServer runs the real server package over httptest with the options mk builds.
func cliServer(t *testing.T, mk func(st *store.Store) []server.Option) string {
	t.Helper()
	st := memstore.New()
	t.Cleanup(func() { st.Close() })
	s, err := server.New(server.Config{Store: st, APIKeys: []string{cliKey}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, mk(st)...)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); s.Close(context.Background()) })
	return ts.URL
}

// cli runs one subcommand and returns its exit code, stdout and stderr.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestSelectCommand(t *testing.T) {
	url := cliServer(t, func(st *store.Store) []server.Option {
		return []server.Option{server.ModelSelection(routing.NewSelector(routing.Options{Store: st}))}
	})
	req := filepath.Join(t.TempDir(), "req.json")
	os.WriteFile(req, []byte(`{"messages":[{"role":"user","content":"Prove that sqrt(2) is irrational."}],
		"llm_providers":[{"name":"small","attributes":{"quality":0.3}},{"name":"big","attributes":{"quality":0.9}}]}`), 0o644)
	code, out, errOut := cli(t, "select", "--url", url, "--key", cliKey, "--file", req)
	if code != 0 || !strings.Contains(out, "llm_label: big") || !strings.Contains(out, "small") {
		t.Fatalf("select: %d\n%s\n%s", code, out, errOut)
	}

	// Key from SERVICE_API_KEY and address from SWITCHYARD_BASE_URL; request on stdin.
	t.Setenv("SERVICE_API_KEY", cliKey)
	t.Setenv("SWITCHYARD_BASE_URL", url)
	var so bytes.Buffer
	err := runSelect(context.Background(), []string{"--json"}, strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"models":["openai/gpt-4o-mini"]}`), &so, io.Discard)
	if err != nil || !strings.Contains(so.String(), `"llm_label": "openai/gpt-4o-mini"`) {
		t.Fatalf("select from stdin: %v %s", err, so.String())
	}

	// A server-side validation failure is reported with the server's message.
	err = runSelect(context.Background(), nil, strings.NewReader(`{"messages":[],"models":["openai/gpt-4o-mini"]}`), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "messages") {
		t.Fatalf("empty messages: %v", err)
	}
	t.Setenv("SERVICE_API_KEY", "wrong")
	code, _, errOut = cli(t, "select", "--file", req)
	if code != 1 || !strings.Contains(errOut, "401") {
		t.Fatalf("wrong key: %d %s", code, errOut)
	}
	if code, _, errOut := cli(t, "select", "--file", req, "extra"); code != 1 || !strings.Contains(errOut, "unexpected") {
		t.Fatalf("extra args: %d %s", code, errOut)
	}
}

func TestParseInterleaved(t *testing.T) {
	fs := newFlagSet("x", "x", io.Discard)
	poll := fs.String("poll", "", "")
	b := fs.Bool("b", false, "")
	pos, err := parseInterleaved(fs, []string{"u1", "--poll", "1s", "u2", "-b", "--", "-u3"})
	if err != nil || strings.Join(pos, " ") != "u1 u2 -u3" || *poll != "1s" || !*b {
		t.Fatalf("%v %v %q %v", pos, err, *poll, *b)
	}
}
