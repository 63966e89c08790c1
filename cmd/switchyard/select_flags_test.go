package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
)

// selectServer is a real server with model selection, and the CLI pointed at it.
func selectServer(t *testing.T) {
	t.Helper()
	url := cliServer(t, func(st *store.Store) []server.Option {
		return []server.Option{server.ModelSelection(routing.NewSelector(routing.Options{Store: st}))}
	})
	t.Setenv("SERVICE_API_KEY", cliKey)
	t.Setenv("SWITCHYARD_BASE_URL", url)
}

func selectJSON(t *testing.T, args []string, stdin string) *client.ModelSelectResponse {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := runSelect(context.Background(), append(args, "--json"), strings.NewReader(stdin), &out, &errOut); err != nil {
		t.Fatalf("select %q: %v\n%s", args, err, errOut.String())
	}
	var res client.ModelSelectResponse
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("select %q --json printed %q: %v", args, out.String(), err)
	}
	return &res
}

// `switchyard select` takes the candidates as -m flags and the prompt from --prompt, the
// arguments or stdin, with --tradeoff, --preference-id and --max-model-depth; the JSON
// request still works, and those flags replace its fields.
func TestSelectFlags(t *testing.T) {
	selectServer(t)
	// quality attributes are not flags: the named candidates rank by the built-in table
	res := selectJSON(t, []string{"-m", "openai/gpt-4o", "--model", "openai/gpt-4o-mini,anthropic/claude-3-5-haiku-20241022", "--prompt", "Prove that sqrt(2) is irrational."}, "")
	if len(res.Providers) != 3 || res.SessionID == "" {
		t.Fatalf("three -m candidates: %+v", res)
	}
	for _, p := range res.Providers {
		if p.Provider == "" || p.Model == "" {
			t.Fatalf("-m provider/model sent as %+v, want the provider/model shape", p)
		}
	}
	// prompt from the arguments, from stdin; depth cuts the list
	if res := selectJSON(t, []string{"-m", "openai/gpt-4o", "-m", "openai/gpt-4o-mini", "--max-model-depth", "1", "What", "is", "2+2?"}, ""); len(res.Providers) != 1 {
		t.Fatalf("--max-model-depth 1: %+v", res)
	}
	if res := selectJSON(t, []string{"-m", "openai/gpt-4o", "-m", "openai/gpt-4o-mini"}, "What is 2+2?\n"); res.LLMLabel == "" {
		t.Fatalf("prompt on stdin: %+v", res)
	}
	// --tradeoff reaches the server: latency, for which none of these has figures, says so
	two := []string{"-m", "openai/gpt-4o", "-m", "openai/gpt-4o-mini", "--prompt", "What is the capital of France?"}
	if plain, fast := selectJSON(t, two, ""), selectJSON(t, append(two, "--tradeoff", "latency"), ""); plain.TradeoffFallback != "" || fast.TradeoffFallback != "no_latency_data" {
		t.Fatalf("tradeoff_fallback without tradeoff %q (want none), with --tradeoff latency %q (want no_latency_data)", plain.TradeoffFallback, fast.TradeoffFallback)
	}
	// --preference-id reaches the server: an unknown one is its 404 naming the field
	var errOut bytes.Buffer
	err := runSelect(context.Background(), append(two, "--preference-id", "pref_000000000000000000000000"), strings.NewReader(""), io.Discard, &errOut)
	if err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "preference_id") {
		t.Fatalf("unknown --preference-id: %v", err)
	}

	// The JSON request keeps working, and the flags replace its fields.
	req := `{"messages":[{"role":"user","content":"What is the capital of France?"}],"max_model_depth":2,
		"llm_providers":[{"name":"strong","price":10,"attributes":{"quality":0.8}},{"name":"cheap","price":1,"attributes":{"quality":0.79}}]}`
	if res := selectJSON(t, nil, req); res.LLMLabel != "strong" || len(res.Providers) != 2 {
		t.Fatalf("JSON request: %+v", res)
	}
	if res := selectJSON(t, []string{"--tradeoff", "cost", "--max-model-depth", "1"}, req); res.LLMLabel != "cheap" || len(res.Providers) != 1 {
		t.Fatalf("JSON request with --tradeoff cost --max-model-depth 1: %+v", res)
	}
	file := filepath.Join(t.TempDir(), "req.json")
	os.WriteFile(file, []byte(req), 0o644)
	if res := selectJSON(t, []string{"--file", file, "--tradeoff", "cost"}, ""); res.LLMLabel != "cheap" {
		t.Fatalf("--file with --tradeoff cost: %+v", res)
	}

	// The default output is a short summary.
	code, out, stderr := cli(t, append([]string{"select"}, two...)...)
	if code != 0 || !strings.Contains(out, "llm_label: openai/gpt-4o\n") || !strings.Contains(out, "switchyard feedback sess_") {
		t.Fatalf("summary: %d\n%s\n%s", code, out, stderr)
	}
}

// Bad flag combinations are refused before anything is sent, naming the flag.
func TestSelectFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"-m", "openai/gpt-4o", "--tradeoff", "speed", "--prompt", "hi"}, "", "--tradeoff must be cost or latency"},
		{[]string{"-m", "openai/gpt-4o", "--max-model-depth", "0", "--prompt", "hi"}, "", "--max-model-depth must be at least 1"},
		{[]string{"-m", "openai/gpt-4o", "--file", "req.json", "--prompt", "hi"}, "", "--file and -m"},
		{[]string{"-m", "openai/gpt-4o", "--prompt", "hi", "there"}, "", "--prompt or arguments"},
		{[]string{"-m", "openai/gpt-4o"}, "  \n", "the prompt is empty"},
		{[]string{"--prompt", "hi"}, `{"messages":[],"models":["a/b"]}`, "--prompt and --system go with -m"},
		{[]string{"--tradeoff", "cost"}, `["not","an","object"]`, "must be a JSON object"},
		{nil, `not json`, "not valid JSON"},
		{[]string{"-m", "openai/gpt-4o", "--tradeoff", "", "--prompt", "hi"}, "", "--tradeoff is empty"},
		{[]string{"--tradeoff", ""}, `{"messages":[{"role":"user","content":"hi"}],"llm_providers":[{"provider":"openai","model":"gpt-4o"}]}`, "--tradeoff is empty"},
		{[]string{"-m", "openai/gpt-4o", "--preference-id", "", "--prompt", "hi"}, "", "--preference-id is empty"},
		{[]string{"--preference-id="}, `{"messages":[{"role":"user","content":"hi"}],"llm_providers":[{"provider":"openai","model":"gpt-4o"}]}`, "--preference-id is empty"},
		{[]string{"-m", "openai/gpt-4o", "--previous-session", "", "--prompt", "hi"}, "", "--previous-session is empty"},
		{[]string{"--previous-session", ""}, `{"messages":[{"role":"user","content":"hi"}],"llm_providers":[{"provider":"openai","model":"gpt-4o"}]}`, "--previous-session is empty"},
	} {
		err := runSelect(context.Background(), append(tc.args, "--url", "http://127.0.0.1:1"), strings.NewReader(tc.stdin), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("select %q: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

// tradeoff latency with no latency for any candidate says so: the JSON answer's
// tradeoff_fallback, and a note in the summary.
func TestSelectSaysTheTradeoffHadNoFigures(t *testing.T) {
	selectServer(t)
	args := []string{"-m", "acme/strong", "-m", "acme/weak", "--prompt", "hi", "--tradeoff", "latency"}
	if res := selectJSON(t, args, ""); res.TradeoffFallback != "no_latency_data" {
		t.Fatalf("tradeoff_fallback %q, want no_latency_data", res.TradeoffFallback)
	}
	code, out, stderr := cli(t, append([]string{"select"}, args...)...)
	if code != 0 || !strings.Contains(out, "note: tradeoff latency had no latency for any candidate") {
		t.Fatalf("summary without the note: %d\n%s\n%s", code, out, stderr)
	}
	code, out, _ = cli(t, "select", "-m", "acme/strong", "-m", "acme/weak", "--prompt", "hi")
	if code != 0 || strings.Contains(out, "note:") {
		t.Fatalf("a note without a tradeoff: %d\n%s", code, out)
	}
}

// TestSelectEmptyTradeoffExits2: --tradeoff "" (an unset shell variable) is a usage error
// naming the flag, exit status 2, before anything is sent: with a JSON request it would
// have sent "tradeoff": "".
func TestSelectEmptyTradeoffExits2(t *testing.T) {
	for _, args := range [][]string{
		{"select", "--url", "http://127.0.0.1:1", "-m", "openai/gpt-4o", "--prompt", "hi", "--tradeoff", ""},
		{"select", "--url", "http://127.0.0.1:1", "--tradeoff=", "--file", filepath.Join(t.TempDir(), "absent.json")},
	} {
		code, _, errOut := cli(t, args...)
		if code != 2 || !strings.Contains(errOut, "--tradeoff is empty: give cost or latency, or leave the flag out") {
			t.Errorf("%q: exit %d, want 2 naming --tradeoff\n%s", args, code, errOut)
		}
	}
}

// TestSelectEmptyIDFlagsExit2: --preference-id "" and --previous-session "" (unset shell
// variables) sent "" for those fields with a JSON request (and were dropped with -m); they
// are now usage errors naming the flag, exit status 2, before anything is sent, as
// --tradeoff "" is.
func TestSelectEmptyIDFlagsExit2(t *testing.T) {
	absent := filepath.Join(t.TempDir(), "absent.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-m", "openai/gpt-4o", "--prompt", "hi", "--preference-id", ""}, "--preference-id is empty: give a preference (pref_...) or trained router (rm_...) id, or leave the flag out"},
		{[]string{"--preference-id=", "--file", absent}, "--preference-id is empty"},
		{[]string{"-m", "openai/gpt-4o", "--prompt", "hi", "--previous-session", ""}, "--previous-session is empty: give the session_id of an earlier selection, or leave the flag out"},
		{[]string{"--previous-session=", "--file", absent}, "--previous-session is empty"},
	} {
		args := append([]string{"select", "--url", "http://127.0.0.1:1"}, tc.args...)
		code, _, errOut := cli(t, args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, want 2 and %q\n%s", args, code, tc.want, errOut)
		}
	}
}
