package mcpgateway_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/mcpgateway"
)

func TestParseConfigYAMLAndJSON(t *testing.T) {
	yamlDoc := `
mcp_servers:
  github:
    url: https://api.githubcopilot.com/mcp/
    headers:
      Authorization: "Bearer os.environ/GITHUB_TOKEN"
    allowed_tools: [search_repositories]
    description: GitHub
  files:
    transport: stdio
    command: npx
    args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]
    env: {DEBUG: "1"}
  legacy:
    transport: sse
    url: http://127.0.0.1:9000/sse
`
	jsonDoc := `{"mcp_servers": {"github": {"url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer os.environ/GITHUB_TOKEN"},
		"allowed_tools": ["search_repositories"], "description": "GitHub"},
		"files": {"transport": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"], "env": {"DEBUG": "1"}},
		"legacy": {"transport": "sse", "url": "http://127.0.0.1:9000/sse"}}}`
	for name, doc := range map[string]string{"yaml": yamlDoc, "json": jsonDoc} {
		path := filepath.Join(t.TempDir(), "mcp."+name)
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := mcpgateway.LoadConfig(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != 3 || got[0].Name != "files" || got[1].Name != "github" || got[2].Name != "legacy" {
			t.Fatalf("%s: %+v", name, got)
		}
		if got[0].Transport != mcpgateway.TransportStdio || got[0].Command != "npx" || len(got[0].Args) != 3 || got[0].Env["DEBUG"] != "1" {
			t.Fatalf("%s: files = %+v", name, got[0])
		}
		if got[1].Transport != mcpgateway.TransportHTTP || got[1].AllowedTools[0] != "search_repositories" || got[1].Description != "GitHub" {
			t.Fatalf("%s: github = %+v", name, got[1])
		}
		if got[2].Transport != mcpgateway.TransportSSE {
			t.Fatalf("%s: legacy = %+v", name, got[2])
		}
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`servers: {}`, "servers: unknown field"},
		{`mcp_servers: [1]`, "mcp_servers: must be a map"},
		{`mcp_servers: {"GitHub": {url: "http://x"}}`, `mcp_servers.GitHub.name: "GitHub" must be at most 32 characters of a-z 0-9 _ and -`},
		{`mcp_servers: {"` + strings.Repeat("a", 33) + `": {url: "http://x"}}`, "at most 32 characters"},
		{`mcp_servers: {gh: {urll: "http://x"}}`, "mcp_servers.gh.urll: unknown field"},
		{`mcp_servers: {gh: {}}`, "mcp_servers.gh.url: required with transport http"},
		{`mcp_servers: {gh: {url: "ftp://x"}}`, "mcp_servers.gh.url: must be an http or https URL"},
		{`mcp_servers: {gh: {url: "http://x", transport: grpc}}`, `mcp_servers.gh.transport: must be http, sse or stdio, got "grpc"`},
		{`mcp_servers: {gh: {transport: stdio}}`, "mcp_servers.gh.command: required with transport stdio"},
		{`mcp_servers: {gh: {transport: stdio, command: x, url: "http://x"}}`, "mcp_servers.gh.url: url and headers are for transports http and sse"},
		{`mcp_servers: {gh: {url: "http://x", args: "a b"}}`, "mcp_servers.gh.args: must be a list of strings"},
		{`mcp_servers: {gh: {url: "http://x", headers: [a]}}`, "mcp_servers.gh.headers: must be a map of strings"},
		{`mcp_servers: {gh: {url: "http://x", allowed_tools: [""]}}`, "mcp_servers.gh.allowed_tools[0]: must not be empty"},
		{`mcp_servers: {gh: {url: "http://x", name: other}}`, `mcp_servers.gh.name: "other" differs`},
		{`{{`, "not JSON or YAML"},
	} {
		_, err := mcpgateway.ParseConfig([]byte(tc.doc))
		if !errors.Is(err, mcpgateway.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrConfig saying %q", tc.doc, err, tc.want)
		}
	}
}

func TestNewReadsTheEnvironment(t *testing.T) {
	servers := []mcpgateway.ServerConfig{{Name: "gh", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"Authorization": "Bearer os.environ/SY_TEST_UNSET_TOKEN"}}}
	_, err := mcpgateway.New(servers, mcpgateway.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if !errors.Is(err, mcpgateway.ErrConfig) || !strings.Contains(err.Error(), "mcp_servers.gh.headers.Authorization") || !strings.Contains(err.Error(), "SY_TEST_UNSET_TOKEN") {
		t.Fatalf("an unset variable: %v", err)
	}
	dup := []mcpgateway.ServerConfig{{Name: "gh", URL: "http://x"}, {Name: "gh", URL: "http://y"}}
	if _, err := mcpgateway.New(dup, mcpgateway.Options{}); !errors.Is(err, mcpgateway.ErrConfig) || !strings.Contains(err.Error(), "configured twice") {
		t.Fatalf("a duplicate: %v", err)
	}
}
