package completions

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
)

// OpenAI's remote MCP tools on /v1/responses ({"type": "mcp", "server_label": …}), run by
// the gateway for every provider: the tools of an MCP server the operator configured
// (Options.MCP) are offered to the model as functions, and the gateway calls them when the
// model does, then asks the model again with the result (responses_mcp.go). The gateway
// dials no URL a request names (server_url is refused unless it is LiteLLM's
// "litellm_proxy"): only the operator's servers are reached.

// MCPTools runs tools of the MCP servers the operator configured (mcpgateway.Gateway through
// a small adapter). Every method that waits stops when ctx is cancelled.
type MCPTools interface {
	// Servers names the configured servers (the server_label a request's mcp tool gives).
	Servers() []string
	// ListTools lists the tools of server.
	ListTools(ctx context.Context, server string) ([]MCPTool, error)
	// CallTool calls tool of server with arguments (a JSON object). A tool that ran and
	// failed is a result with IsError; an error means the call could not be made.
	CallTool(ctx context.Context, server, tool string, arguments json.RawMessage) (MCPResult, error)
}

// MCPTool is a tool an MCP server lists, as an mcp_list_tools item shows it.
type MCPTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// MCPResult is what a tool call returned: its MCP content blocks, their text (what the
// model is given and the mcp_call item's output) and whether the tool reported an error.
type MCPResult struct {
	Content json.RawMessage
	Text    string
	IsError bool
}

var (
	// ErrMCPNotConfigured means a request has an mcp tool and the gateway has no MCP
	// servers (Options.MCP is nil); *ValidationError naming the tool matches it.
	ErrMCPNotConfigured = errors.New("completions: MCP servers are not configured")
	// ErrMCPServerNotAllowed means the caller's Scope.MCPServers does not name the server
	// of an mcp tool. It is the cause (Unwrap) of a *ValidationError worded as for a server
	// not configured, which is what the HTTP server answers (its status and message), so
	// that a key cannot tell which names are servers it may not use.
	ErrMCPServerNotAllowed = errors.New("completions: MCP server not allowed for this key")
)

// MCPServerNotAllowedError names the server a scope may not use and the tool's field; it
// matches ErrMCPServerNotAllowed.
type MCPServerNotAllowedError struct {
	Server, Field string
}

// Error says which server the key may not use.
func (e *MCPServerNotAllowedError) Error() string {
	return fmt.Sprintf("%s.server_label: this key may not use MCP server %q", e.Field, e.Server)
}

// Is makes the error match ErrMCPServerNotAllowed.
func (e *MCPServerNotAllowedError) Is(target error) bool { return target == ErrMCPServerNotAllowed }

// mcpServerURLs are the server_url values that mean "a server the gateway configured"
// (LiteLLM's name for its own proxy).
var mcpServerURLs = map[string]bool{"": true, "litellm_proxy": true}

// mcpToolNames is an allowed_tools list or a require_approval filter: tool names (a list,
// or {"tool_names": […]}), and read_only (tools annotated readOnlyHint).
type mcpToolNames struct {
	names    []string
	readOnly bool
	set      bool // given at all
}

// parseToolNames reads a list of names or {"tool_names": […], "read_only": bool}.
func parseToolNames(raw json.RawMessage, field string) (mcpToolNames, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return mcpToolNames{}, nil
	}
	f := mcpToolNames{set: true}
	if raw[0] == '[' {
		if err := json.Unmarshal(raw, &f.names); err != nil {
			return f, invalid(field, "must be a list of tool names or {\"tool_names\": [...]}")
		}
		return f, nil
	}
	var o struct {
		ToolNames []string `json:"tool_names"`
		ReadOnly  bool     `json:"read_only"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return f, invalid(field, "must be a list of tool names or {\"tool_names\": [...]}")
	}
	f.names, f.readOnly = o.ToolNames, o.ReadOnly
	return f, nil
}

// matches reports whether tool t is named by the filter.
func (f mcpToolNames) matches(t MCPTool) bool {
	if slices.Contains(f.names, t.Name) {
		return true
	}
	if f.readOnly {
		var a struct {
			ReadOnlyHint bool `json:"readOnlyHint"`
		}
		return json.Unmarshal(t.Annotations, &a) == nil && a.ReadOnlyHint
	}
	return false
}

// mcpApproval is a tool's require_approval: "always" (OpenAI's default), "never", or
// {"always": filter, "never": filter} (tools in neither need approval).
type mcpApproval struct {
	mode          string // always, never, or "" for the filters
	always, never mcpToolNames
}

func parseApproval(raw json.RawMessage, field string) (mcpApproval, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return mcpApproval{mode: "always"}, nil
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		if s != "always" && s != "never" {
			return mcpApproval{}, invalid(field, `must be "always" or "never" or {"never": {"tool_names": [...]}}, got %q`, s)
		}
		return mcpApproval{mode: s}, nil
	}
	var o struct {
		Always json.RawMessage `json:"always"`
		Never  json.RawMessage `json:"never"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return mcpApproval{}, invalid(field, `must be "always" or "never" or {"never": {"tool_names": [...]}}`)
	}
	var a mcpApproval
	var err error
	if a.always, err = parseToolNames(o.Always, field+".always"); err != nil {
		return a, err
	}
	if a.never, err = parseToolNames(o.Never, field+".never"); err != nil {
		return a, err
	}
	return a, nil
}

// required reports whether a call of t needs the user's approval.
func (a mcpApproval) required(t MCPTool) bool {
	switch a.mode {
	case "never":
		return false
	case "always":
		return true
	}
	if a.always.matches(t) {
		return true
	}
	return !a.never.matches(t)
}

// mcpServerTool is an mcp tool of a request, checked: its server and what it allows.
type mcpServerTool struct {
	field    string // tools[i]
	label    string
	allowed  mcpToolNames
	approval mcpApproval
}

// checkMCPTool checks the mcp tool t at field (the request's own shape: a server_label, no
// server_url of the caller's) and reads its filters.
func checkMCPTool(t ResponsesTool, field string) (mcpServerTool, error) {
	s := mcpServerTool{field: field, label: t.ServerLabel}
	if t.ServerLabel == "" {
		return s, invalid(field+".server_label", "is required: the name of an MCP server this gateway configures")
	}
	if !mcpServerURLs[t.ServerURL] {
		return s, invalid(field+".server_url", "is not supported: this gateway reaches only the MCP servers its operator configures; leave server_url out (or send \"litellm_proxy\") and name the server in server_label")
	}
	if t.ConnectorID != "" {
		return s, invalid(field+".connector_id", "is not supported: name an MCP server this gateway configures in server_label")
	}
	var err error
	if s.allowed, err = parseToolNames(t.AllowedTools, field+".allowed_tools"); err != nil {
		return s, err
	}
	if s.approval, err = parseApproval(t.RequireApproval, field+".require_approval"); err != nil {
		return s, err
	}
	return s, nil
}

// mcpTools are the request's mcp tools, checked; a server named twice is an error.
func mcpTools(tools []ResponsesTool) ([]mcpServerTool, error) {
	var out []mcpServerTool
	for i, t := range tools {
		if t.Type != "mcp" {
			continue
		}
		s, err := checkMCPTool(t, fmt.Sprintf("tools[%d]", i))
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(o mcpServerTool) bool { return o.label == s.label }) {
			return nil, invalid(s.field+".server_label", "%q is named by another mcp tool of the request", s.label)
		}
		out = append(out, s)
	}
	return out, nil
}

// UsesMCP reports whether r has mcp tools: the gateway then answers it with
// RespondWithMCP or StreamWithMCP, which call the MCP servers' tools for the model.
func (r *ResponsesRequest) UsesMCP() bool {
	return slices.ContainsFunc(r.Tools, func(t ResponsesTool) bool { return t.Type == "mcp" })
}

// safeToolName is what model providers take as a function name.
var safeToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// unsafeToolChars are the characters of a name providers do not take.
var unsafeToolChars = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// mcpModelName is the name the model is offered tool of server under:
// "<server>__<tool>", or, when that is not a name every provider takes or another tool
// (taken: the request's own tools) has it, a safe name with a hash of both, which stays
// unique. The same server and tool always get the same name in a request.
func mcpModelName(server, tool string, taken map[string]int) string {
	full := server + "__" + tool
	if safeToolName.MatchString(full) && taken[full] == 0 {
		return full
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	tag := "_" + hex.EncodeToString(sum[:4])
	safe := unsafeToolChars.ReplaceAllString(full, "_")
	return safe[:min(len(safe), maxToolName-len(tag))] + tag
}

// userToolNames are the names of the request's own tools, which MCP tools' names avoid:
// those responsesTools counts, and a namespace's functions under their namespaced names.
func userToolNames(tools []ResponsesTool) map[string]int {
	taken := toolNameCounts(tools)
	for _, t := range tools {
		if t.Type == "namespace" {
			for _, f := range t.Tools {
				taken[namespacedName(t.Name, f.Name)]++
			}
		}
	}
	return taken
}
