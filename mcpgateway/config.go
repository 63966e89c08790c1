package mcpgateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v4"
)

// Transport is how the gateway reaches an upstream MCP server.
type Transport string

// The transports.
const (
	// TransportHTTP is MCP's streamable HTTP transport (the default).
	TransportHTTP Transport = "http"
	// TransportSSE is MCP's older HTTP+SSE transport (protocol version 2024-11-05).
	TransportSSE Transport = "sse"
	// TransportStdio runs the server as a subprocess speaking MCP on its stdin and stdout.
	TransportStdio Transport = "stdio"
)

// MaxServerNameLength bounds a server's name.
const MaxServerNameLength = 32

// EnvPrefix marks a header or env value read from the gateway's environment:
// "os.environ/GITHUB_TOKEN" is the value of GITHUB_TOKEN (as LiteLLM's config reads it).
const EnvPrefix = "os.environ/"

var serverName = regexp.MustCompile(`^[a-z0-9_-]+$`)

// ServerConfig describes one upstream MCP server.
type ServerConfig struct {
	// Name identifies the server to callers: [a-z0-9_-], at most 32 characters. Tools of the
	// aggregated MCP endpoint are named "<name>-<tool>".
	Name string `json:"name,omitempty"`
	// Transport is http (streamable HTTP; the default), sse or stdio.
	Transport Transport `json:"transport,omitempty"`
	// URL is the server's endpoint (http and sse).
	URL string `json:"url,omitempty"`
	// Headers are sent with every request to the server (http and sse); a value
	// "os.environ/NAME" is read from the environment.
	Headers map[string]string `json:"headers,omitempty"`
	// Command, Args and Env start a stdio server. The child gets PATH, HOME, USER, LOGNAME,
	// SHELL, TERM, TMPDIR and LANG from the gateway's environment, and Env ("os.environ/NAME"
	// values read from it): not the gateway's own secrets.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// AllowedTools, when not empty, are the only tools of the server callers see and call.
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// Description says what the server is for (shown by Servers).
	Description string `json:"description,omitempty"`
}

// serverFields are the keys a server entry of a configuration file may have.
var serverFields = []string{"name", "transport", "url", "headers", "command", "args", "env", "allowed_tools", "description"}

// LoadConfig reads a configuration file of MCP servers, JSON or YAML, in LiteLLM's form: a
// map under mcp_servers from each server's name to its settings.
//
//	mcp_servers:
//	  github:
//	    url: https://api.githubcopilot.com/mcp/
//	    headers: {Authorization: "Bearer os.environ/GITHUB_TOKEN"}
//	  files:
//	    transport: stdio
//	    command: npx
//	    args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"]
//
// The servers are returned sorted by name and checked as New checks them (environment
// values are read by New).
func LoadConfig(path string) ([]ServerConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return ParseConfig(data)
}

// ParseConfig is LoadConfig on a file's contents.
func ParseConfig(data []byte) ([]ServerConfig, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: not JSON or YAML: %w", ErrConfig, err)
	}
	for k := range doc {
		if k != "mcp_servers" {
			return nil, fmt.Errorf("%w: %s: unknown field (the file has one field: mcp_servers)", ErrConfig, k)
		}
	}
	raw, ok := doc["mcp_servers"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: mcp_servers: must be a map from each server's name to its settings", ErrConfig)
	}
	names := make([]string, 0, len(raw))
	for name := range raw {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]ServerConfig, 0, len(names))
	for _, name := range names {
		field := "mcp_servers." + name
		entry, ok := raw[name].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: %s: must be a map of the server's settings", ErrConfig, field)
		}
		for k := range entry {
			if !slices.Contains(serverFields, k) {
				return nil, fmt.Errorf("%w: %s.%s: unknown field (known: %s)", ErrConfig, field, k, strings.Join(serverFields, ", "))
			}
		}
		b, err := json.Marshal(entry)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrConfig, field, err)
		}
		var sc ServerConfig
		dec := json.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&sc); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return nil, fmt.Errorf("%w: %s.%s: must be %s", ErrConfig, field, te.Field, kindOf(te.Type.String()))
			}
			return nil, fmt.Errorf("%w: %s: %w", ErrConfig, field, err)
		}
		if sc.Name != "" && sc.Name != name {
			return nil, fmt.Errorf("%w: %s.name: %q differs from the key it is under", ErrConfig, field, sc.Name)
		}
		sc.Name = name
		if err := sc.check(field); err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

// kindOf names a Go type as a configuration value.
func kindOf(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list of strings"
	case strings.HasPrefix(t, "map["):
		return "a map of strings"
	}
	return "a string"
}

// check validates c; field names it in errors ("mcp_servers.github" or "servers[0]").
func (c *ServerConfig) check(field string) error {
	bad := func(sub, format string, args ...any) error {
		return fmt.Errorf("%w: %s.%s: %s", ErrConfig, field, sub, fmt.Sprintf(format, args...))
	}
	if c.Name == "" {
		return bad("name", "must not be empty")
	}
	if len(c.Name) > MaxServerNameLength || !serverName.MatchString(c.Name) {
		return bad("name", "%q must be at most %d characters of a-z 0-9 _ and -", c.Name, MaxServerNameLength)
	}
	if c.Transport == "" {
		c.Transport = TransportHTTP
	}
	switch c.Transport {
	case TransportHTTP, TransportSSE:
		if c.URL == "" {
			return bad("url", "required with transport %s", c.Transport)
		}
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("url", "must be an http or https URL, got %q", c.URL)
		}
		if c.Command != "" || len(c.Args) > 0 || len(c.Env) > 0 {
			return bad("command", "command, args and env are for transport stdio, not %s", c.Transport)
		}
	case TransportStdio:
		if c.Command == "" {
			return bad("command", "required with transport stdio")
		}
		if c.URL != "" || len(c.Headers) > 0 {
			return bad("url", "url and headers are for transports http and sse, not stdio")
		}
	default:
		return bad("transport", "must be http, sse or stdio, got %q", c.Transport)
	}
	for i, t := range c.AllowedTools {
		if strings.TrimSpace(t) == "" {
			return bad(fmt.Sprintf("allowed_tools[%d]", i), "must not be empty")
		}
	}
	return nil
}

// resolveEnv returns v, or for "os.environ/NAME" (also after a prefix such as "Bearer ")
// the value of NAME; field names v in the error when NAME is not set.
func resolveEnv(v, field string, lookup func(string) (string, bool)) (string, error) {
	before, name, ok := strings.Cut(v, EnvPrefix)
	if !ok {
		return v, nil
	}
	val, set := lookup(name)
	if !set || name == "" {
		return "", fmt.Errorf("%w: %s: the environment variable %q (%s%s) is not set", ErrConfig, field, name, EnvPrefix, name)
	}
	return before + val, nil
}
