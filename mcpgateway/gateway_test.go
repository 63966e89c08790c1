package mcpgateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/mcpgateway/mcpgatewaytest"
)

// fakeStdio is the configuration of a fake stdio server: this test binary re-executed.
func fakeStdio(t *testing.T, name string) mcpgateway.ServerConfig {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return mcpgateway.ServerConfig{Name: name, Transport: mcpgateway.TransportStdio, Command: exe,
		Args: []string{"-test.run=^$"}, Env: map[string]string{fakeStdioEnv: name}}
}

// recordingObserver keeps the call records.
type recordingObserver struct {
	mu   sync.Mutex
	recs []mcpgateway.CallRecord
}

func (o *recordingObserver) ObserveToolCall(_ context.Context, r mcpgateway.CallRecord) {
	o.mu.Lock()
	o.recs = append(o.recs, r)
	o.mu.Unlock()
}

func (o *recordingObserver) outcomes() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, r := range o.recs {
		out = append(out, r.Server+"/"+r.Tool+":"+r.Outcome)
	}
	return out
}

func newGateway(t *testing.T, servers []mcpgateway.ServerConfig, opts mcpgateway.Options) *mcpgateway.Gateway {
	t.Helper()
	g, err := mcpgateway.New(servers, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func toolNames(tools []mcpgateway.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}

func TestGatewayListsAndCallsOverHTTPAndStdio(t *testing.T) {
	up := mcpgatewaytest.StartFakeHTTP(t, "fake-http")
	t.Setenv("FAKE_MCP_TOKEN", "tok-123")
	obs := &recordingObserver{}
	g := newGateway(t, []mcpgateway.ServerConfig{
		{Name: "web", URL: up.URL, Description: "the web one", Headers: map[string]string{"Authorization": "Bearer os.environ/FAKE_MCP_TOKEN"}},
		fakeStdio(t, "local"),
	}, mcpgateway.Options{Observer: obs})

	if got := g.Servers(); len(got) != 2 || got[0].Name != "web" || got[0].Transport != mcpgateway.TransportHTTP || got[0].Description != "the web one" || got[1].Transport != mcpgateway.TransportStdio {
		t.Fatalf("Servers() = %+v", got)
	}
	for _, server := range []string{"web", "local"} {
		tools, err := g.ListTools(t.Context(), server)
		if err != nil {
			t.Fatalf("ListTools(%s): %v", server, err)
		}
		if got := toolNames(tools); !slices.Equal(got, mcpgatewaytest.FakeTools) {
			t.Fatalf("ListTools(%s) = %v, want %v", server, got, mcpgatewaytest.FakeTools)
		}
		for _, tool := range tools {
			if tool.Name == "echo" {
				var schema struct {
					Type       string         `json:"type"`
					Properties map[string]any `json:"properties"`
				}
				if err := json.Unmarshal(tool.InputSchema, &schema); err != nil || schema.Type != "object" || schema.Properties["text"] == nil {
					t.Fatalf("%s echo's schema = %s", server, tool.InputSchema)
				}
				if !strings.Contains(string(tool.Annotations), `"readOnlyHint":true`) {
					t.Fatalf("%s echo's annotations = %s", server, tool.Annotations)
				}
			}
		}
		res, err := g.CallTool(t.Context(), server, "add", json.RawMessage(`{"a": 2, "b": 40}`))
		if err != nil || res.Text != "42" || res.IsError {
			t.Fatalf("CallTool(%s, add) = %+v, %v", server, res, err)
		}
		var content []map[string]any
		if err := json.Unmarshal(res.Content, &content); err != nil || len(content) != 1 || content[0]["type"] != "text" || content[0]["text"] != "42" {
			t.Fatalf("content = %s", res.Content)
		}
		res, err = g.CallTool(t.Context(), server, "echo", json.RawMessage(`{"text": "hi"}`))
		if err != nil || !strings.Contains(string(res.StructuredContent), `"echoed":"hi"`) {
			t.Fatalf("CallTool(%s, echo) = %+v, %v", server, res, err)
		}
		res, err = g.CallTool(t.Context(), server, "fail", nil)
		if err != nil || !res.IsError || res.Text != "the tool failed" {
			t.Fatalf("CallTool(%s, fail) = %+v, %v", server, res, err)
		}
		if _, err := g.CallTool(t.Context(), server, "nope", nil); !errors.Is(err, mcpgateway.ErrUnknownTool) {
			t.Fatalf("CallTool(%s, nope) = %v, want ErrUnknownTool", server, err)
		}
		if _, err := g.CallTool(t.Context(), server, "add", json.RawMessage(`[1]`)); !errors.Is(err, mcpgateway.ErrInvalidArguments) {
			t.Fatalf("CallTool(%s, add, [1]) = %v, want ErrInvalidArguments", server, err)
		}
	}
	if got := up.Header("Authorization"); got != "Bearer tok-123" {
		t.Fatalf("the upstream saw Authorization %q, want the os.environ/ value", got)
	}
	if _, err := g.ListTools(t.Context(), "missing"); !errors.Is(err, mcpgateway.ErrUnknownServer) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("ListTools(missing) = %v", err)
	}
	want := []string{"web/add:ok", "web/echo:ok", "web/fail:tool_error", "web/nope:unknown_tool", "web/add:invalid_arguments",
		"local/add:ok", "local/echo:ok", "local/fail:tool_error", "local/nope:unknown_tool", "local/add:invalid_arguments"}
	if got := obs.outcomes(); !slices.Equal(got, want) {
		t.Fatalf("observed %v, want %v", got, want)
	}
}

func TestGatewayAllowedTools(t *testing.T) {
	up := mcpgatewaytest.StartFakeHTTP(t, "fake")
	g := newGateway(t, []mcpgateway.ServerConfig{{Name: "web", URL: up.URL, AllowedTools: []string{"echo", "add"}}}, mcpgateway.Options{})
	tools, err := g.ListTools(t.Context(), "web")
	if err != nil || !slices.Equal(toolNames(tools), []string{"add", "echo"}) {
		t.Fatalf("ListTools = %v, %v", toolNames(tools), err)
	}
	if _, err := g.CallTool(t.Context(), "web", "secret", nil); !errors.Is(err, mcpgateway.ErrUnknownTool) {
		t.Fatalf("a tool allowed_tools leaves out answered: %v", err)
	}
	if n := up.Calls.Load(); n != 0 {
		t.Fatalf("the upstream ran %d calls, want none", n)
	}
}

func TestGatewayCallTimeout(t *testing.T) {
	up := mcpgatewaytest.StartFakeHTTP(t, "fake")
	obs := &recordingObserver{}
	g := newGateway(t, []mcpgateway.ServerConfig{{Name: "web", URL: up.URL}}, mcpgateway.Options{CallTimeout: 300 * time.Millisecond, Observer: obs})
	if _, err := g.ListTools(t.Context(), "web"); err != nil {
		t.Fatal(err)
	}
	_, err := g.CallTool(t.Context(), "web", "slow", nil)
	if !errors.Is(err, mcpgateway.ErrTimeout) || !strings.Contains(err.Error(), "web/slow") {
		t.Fatalf("CallTool(slow) = %v, want ErrTimeout naming web/slow", err)
	}
	// The session survives a timeout.
	if res, err := g.CallTool(t.Context(), "web", "add", json.RawMessage(`{"a":1,"b":1}`)); err != nil || res.Text != "2" {
		t.Fatalf("after a timeout: %+v, %v", res, err)
	}
	if got := obs.outcomes(); !slices.Equal(got, []string{"web/slow:timeout", "web/add:ok"}) {
		t.Fatalf("observed %v", got)
	}
}

func TestGatewayResultCap(t *testing.T) {
	up := mcpgatewaytest.StartFakeHTTP(t, "fake")
	g := newGateway(t, []mcpgateway.ServerConfig{{Name: "web", URL: up.URL}}, mcpgateway.Options{MaxResultBytes: 64 << 10})
	if _, err := g.CallTool(t.Context(), "web", "big", json.RawMessage(`{"bytes": 1000}`)); err != nil {
		t.Fatalf("a small result: %v", err)
	}
	_, err := g.CallTool(t.Context(), "web", "big", json.RawMessage(`{"bytes": 70000}`))
	if !errors.Is(err, mcpgateway.ErrResultTooLarge) || !strings.Contains(err.Error(), "64 KiB") {
		t.Fatalf("a result over the cap: %v, want ErrResultTooLarge naming 64 KiB", err)
	}
}

func TestGatewayDefaultResultCapIs4MiB(t *testing.T) {
	up := mcpgatewaytest.StartFakeHTTP(t, "fake")
	g := newGateway(t, []mcpgateway.ServerConfig{{Name: "web", URL: up.URL}}, mcpgateway.Options{})
	_, err := g.CallTool(t.Context(), "web", "big", json.RawMessage(`{"bytes": 4194304}`))
	if !errors.Is(err, mcpgateway.ErrResultTooLarge) || !strings.Contains(err.Error(), "4 MiB") {
		t.Fatalf("a 4 MiB text: %v, want ErrResultTooLarge naming 4 MiB", err)
	}
}

func TestGatewayReconnectsAfterTheUpstreamComesBack(t *testing.T) {
	up := mcpgatewaytest.StartFakeHTTP(t, "fake")
	g := newGateway(t, []mcpgateway.ServerConfig{{Name: "web", URL: up.URL}}, mcpgateway.Options{})
	add := func() (mcpgateway.Result, error) {
		return g.CallTool(t.Context(), "web", "add", json.RawMessage(`{"a":1,"b":2}`))
	}
	if res, err := add(); err != nil || res.Text != "3" {
		t.Fatalf("first call: %+v, %v", res, err)
	}
	up.Stop()
	if _, err := add(); !errors.Is(err, mcpgateway.ErrUpstream) || !strings.Contains(err.Error(), "web") {
		t.Fatalf("with the upstream down: %v, want ErrUpstream naming web", err)
	}
	up.Restart("fake")
	if res, err := add(); err != nil || res.Text != "3" {
		t.Fatalf("with the upstream back: %+v, %v", res, err)
	}
}

func TestGatewayRestartedUpstreamWithoutAFailedCall(t *testing.T) {
	// The upstream restarts between two calls: the gateway's session is unknown to it, and
	// the call is made again on a new session instead of failing.
	up := mcpgatewaytest.StartFakeHTTP(t, "fake")
	g := newGateway(t, []mcpgateway.ServerConfig{{Name: "web", URL: up.URL}}, mcpgateway.Options{})
	if _, err := g.CallTool(t.Context(), "web", "add", json.RawMessage(`{"a":1,"b":2}`)); err != nil {
		t.Fatal(err)
	}
	up.Stop()
	up.Restart("fake")
	res, err := g.CallTool(t.Context(), "web", "add", json.RawMessage(`{"a":1,"b":2}`))
	if err != nil || res.Text != "3" {
		t.Fatalf("after a restart: %+v, %v", res, err)
	}
}

func TestGatewayStdioChildRestartsAfterItDies(t *testing.T) {
	g := newGateway(t, []mcpgateway.ServerConfig{fakeStdio(t, "local")}, mcpgateway.Options{})
	if _, err := g.ListTools(t.Context(), "local"); err != nil {
		t.Fatal(err)
	}
	pid := childPIDs(t)
	if len(pid) == 0 {
		t.Skip("cannot see child processes here (no /proc)")
	}
	for _, p := range pid {
		kill(t, p)
	}
	// The first use after the child died may fail (or find the session already gone); a
	// later one starts a new child.
	var res mcpgateway.Result
	var err error
	for range 3 {
		if res, err = g.CallTool(t.Context(), "local", "add", json.RawMessage(`{"a":5,"b":5}`)); err == nil {
			break
		}
		if !errors.Is(err, mcpgateway.ErrUpstream) {
			t.Fatalf("with the child dead: %v, want ErrUpstream", err)
		}
	}
	if err != nil || res.Text != "10" {
		t.Fatalf("after the child died: %+v, %v", res, err)
	}
}

func TestGatewayCloseStopsStdioChildren(t *testing.T) {
	g, err := mcpgateway.New([]mcpgateway.ServerConfig{fakeStdio(t, "local")}, mcpgateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.ListTools(t.Context(), "local"); err != nil {
		t.Fatal(err)
	}
	before := childPIDs(t)
	if before == nil {
		g.Close()
		t.Skip("cannot see child processes here (no /proc)")
	}
	if len(before) != 1 {
		t.Fatalf("children before Close: %v, want one", before)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if after := childPIDs(t); len(after) != 0 {
		t.Fatalf("children after Close: %v, want none", after)
	}
	if _, err := g.ListTools(t.Context(), "local"); !errors.Is(err, mcpgateway.ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}
