package server

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/internal/npmtest"
	"github.com/switchyard-ai/switchyard/mcpgateway"
)

// mcpNodeSDK is the official MCP TypeScript SDK, pinned.
const mcpNodeSDK = "@modelcontextprotocol/sdk@1.32.2"

// TestMCPNodeSDKClient: the official MCP TypeScript SDK's client (StreamableHTTPClientTransport,
// what Claude Code and most MCP hosts are built on) lists and calls the aggregated tools of
// /mcp with a bearer key.
func TestMCPNodeSDKClient(t *testing.T) {
	node, dir := npmtest.Install(t, mcpNodeSDK, "the MCP TypeScript SDK")
	m := newMCPTestServer(t, mcpgateway.Options{})
	script, err := filepath.Abs("testdata/mcp_sdk_check.mjs")
	if err != nil {
		t.Fatal(err)
	}
	// Node resolves the script's imports from its own directory: run a copy in dir.
	copyPath := filepath.Join(dir, "check.mjs")
	if out, err := exec.Command("cp", script, copyPath).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, copyPath, m.hs.URL+"/mcp", testKey)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node: %v\n%s\n%s", err, out, stderr)
	}
	var got struct {
		Server        string          `json:"server"`
		Tools         []string        `json:"tools"`
		EchoSchema    json.RawMessage `json:"echoSchema"`
		Sum           string          `json:"sum"`
		FailedIsError bool            `json:"failedIsError"`
		Unknown       string          `json:"unknown"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node printed %s: %v", out, err)
	}
	want := []string{"docs-add", "docs-echo", "web-add", "web-big", "web-echo", "web-fail", "web-secret", "web-slow"}
	if got.Server != "switchyard" || !slices.Equal(got.Tools, want) || got.Sum != "42" || !got.FailedIsError ||
		!strings.Contains(got.Unknown, `no tool "nope"`) || !strings.Contains(string(got.EchoSchema), `"text"`) {
		t.Fatalf("the TypeScript SDK saw %s", out)
	}
}
