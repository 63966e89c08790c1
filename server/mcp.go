package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/mcpgateway"
)

// The MCP gateway's HTTP surfaces (package mcpgateway holds the upstream servers):
//
//   - /mcp: an MCP server over streamable HTTP (stateless) aggregating every upstream server
//     the caller's key may use, tools named "<server>-<tool>" (LiteLLM's convention);
//   - /mcp/{server}: one upstream server, its tools unprefixed;
//   - LiteLLM's REST routes GET /mcp-rest/tools/list and POST /mcp-rest/tools/call, and
//     GET /v1/mcp/server (the servers the key may use) and GET /v1/mcp/server/health (their
//     health, checked now).
//
// They take the keys /v1/chat/completions takes, virtual keys included; a virtual key's
// mcp_servers (absent or empty: every configured server) bounds which servers it reaches.

// mcpToolSeparator joins a server's name and a tool's on the aggregated endpoint.
const mcpToolSeparator = "-"

// mcpServerInfo describes an MCP server in GET /v1/mcp/server.
type mcpServerInfo struct {
	ServerID    string `json:"server_id" jsonschema:"description=The server's configured name (what mcp_servers and server_id take)"`
	ServerName  string `json:"server_name" jsonschema:"description=The server's configured name"`
	Description string `json:"description,omitempty"`
	Transport   string `json:"transport" jsonschema:"description=http or sse or stdio: how the gateway reaches it"`
	MCPURL      string `json:"mcp_url" jsonschema:"description=This server's path serving it alone over MCP"`
	Status      string `json:"status" jsonschema:"enum=unknown,enum=healthy,enum=unhealthy,description=The server's health as its last listing or tool call or health check showed it (unknown: not used yet)"`
	// LastHealthCheck and HealthCheckError are LiteLLM's names.
	LastHealthCheck  *time.Time `json:"last_health_check,omitempty" jsonschema:"description=When the server was last listed or called or checked (GET /v1/mcp/server/health)"`
	HealthCheckError string     `json:"health_check_error,omitempty" jsonschema:"description=The failure that made the server unhealthy"`
}

// mcpServerHealth is one server's answer in GET /v1/mcp/server/health.
type mcpServerHealth struct {
	ServerID         string     `json:"server_id" jsonschema:"description=The server's configured name"`
	Status           string     `json:"status" jsonschema:"enum=healthy,enum=unhealthy,description=What the check found: healthy when the server answered its tool listing"`
	LastHealthCheck  *time.Time `json:"last_health_check,omitempty" jsonschema:"description=When the server was checked"`
	HealthCheckError string     `json:"health_check_error,omitempty" jsonschema:"description=The failure that made the server unhealthy"`
}

// mcpRESTTool is a tool in GET /mcp-rest/tools/list.
type mcpRESTTool struct {
	Name        string          `json:"name" jsonschema:"description=<server>-<tool>: what POST /mcp-rest/tools/call takes"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema" jsonschema:"description=The JSON Schema of the tool's arguments"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	MCPInfo     mcpRESTToolInfo `json:"mcp_info"`
}

// mcpRESTToolInfo names a tool's server, as LiteLLM's mcp_info does.
type mcpRESTToolInfo struct {
	ServerName string `json:"server_name"`
	ServerID   string `json:"server_id"`
	ToolName   string `json:"tool_name" jsonschema:"description=The tool's name on its server"`
}

// mcpRESTToolList is the answer of GET /mcp-rest/tools/list.
type mcpRESTToolList struct {
	Tools   []mcpRESTTool `json:"tools"`
	Error   *string       `json:"error" jsonschema:"description=Null; or when a server could not be listed the servers and failures"`
	Message string        `json:"message"`
}

// mcpRESTCall is the body of POST /mcp-rest/tools/call.
type mcpRESTCall struct {
	Name      string          `json:"name" jsonschema:"description=<server>-<tool> (or the tool's own name with server_id)"`
	Arguments json.RawMessage `json:"arguments,omitempty" jsonschema:"description=The tool's arguments: a JSON object"`
	ServerID  string          `json:"server_id,omitempty" jsonschema:"description=The server: name is then the tool's own name"`
}

// mcpRESTResult is the answer of POST /mcp-rest/tools/call: MCP's CallToolResult.
type mcpRESTResult struct {
	Content           json.RawMessage `json:"content" jsonschema:"description=The MCP content array"`
	IsError           bool            `json:"isError" jsonschema:"description=The tool reported a failure of its own"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
}

// MCP serves the MCP gateway g: /mcp, /mcp/{server}, LiteLLM's /mcp-rest routes and
// /v1/mcp/server. The server closes g when it closes.
func MCP(g *mcpgateway.Gateway) Option {
	return func(s *Server) error {
		if g == nil {
			return errors.New("server: MCP needs a gateway")
		}
		s.mcp = g
		s.AddErrorMapper(mcpError)
		s.OnClose(func(context.Context) error { return g.Close() })
		tags := []string{"MCP gateway"}
		opts := &mcp.StreamableHTTPOptions{
			Stateless: true, JSONResponse: true, Logger: s.log,
			// Every request carries the caller's bearer key, which a page reached through DNS
			// rebinding does not have; the check would refuse a proxy's Host on loopback.
			DisableLocalhostProtection: true,
		}
		all := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server { return s.mcpServer(r, "") }, opts)
		one := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server { return s.mcpServer(r, r.PathValue("server")) }, opts)
		for _, m := range []string{"POST", "GET", "DELETE"} {
			summary := "MCP (streamable HTTP, stateless): every MCP server the key may use, tools named <server>-<tool>"
			if m != "POST" {
				summary = "MCP's streamable HTTP " + m + ": 405 (the endpoint is stateless: no sessions and no server-sent stream)"
			}
			s.Handle(Route{Method: m, Path: "/mcp", Summary: summary, Tags: tags, VirtualKeys: true}, func(w http.ResponseWriter, r *http.Request) error {
				all.ServeHTTP(w, r)
				return nil
			})
			s.Handle(Route{Method: m, Path: "/mcp/{server}", Summary: strings.Replace(summary, "every MCP server the key may use, tools named <server>-<tool>", "one MCP server, its tools named as it names them", 1),
				Tags: tags, VirtualKeys: true, Errors: map[int]string{404: "no MCP server of this name that the key may use (one it may not use is answered as one not configured)"}},
				func(w http.ResponseWriter, r *http.Request) error {
					if err := s.mcpCheckServer(r, r.PathValue("server")); err != nil {
						return err
					}
					one.ServeHTTP(w, r)
					return nil
				})
		}
		s.Handle(Route{Method: "GET", Path: "/v1/mcp/server", Summary: "The MCP servers the key may use (LiteLLM's route)",
			Tags: append(tags, "LiteLLM compatibility"), VirtualKeys: true, Response: []mcpServerInfo{}}, func(w http.ResponseWriter, r *http.Request) error {
			out := []mcpServerInfo{}
			for _, si := range s.mcpAllowedServers(r) {
				out = append(out, mcpServerInfo{ServerID: si.Name, ServerName: si.Name, Description: si.Description, Transport: string(si.Transport), MCPURL: "/mcp/" + si.Name,
					Status: string(si.Status), LastHealthCheck: si.LastChecked, HealthCheckError: si.LastError})
			}
			writeJSON(w, http.StatusOK, out)
			return nil
		})
		s.Handle(Route{Method: "GET", Path: "/v1/mcp/server/health", Summary: "Check the health of the MCP servers the key may use now (LiteLLM's route)",
			Tags: append(tags, "LiteLLM compatibility"), VirtualKeys: true, Response: []mcpServerHealth{},
			Query:  []QueryParam{{Name: "server_ids", Repeated: true, Description: "The servers to check: repeated or comma-separated (default every server the key may use)"}},
			Errors: map[int]string{404: "a name of server_ids is no MCP server the key may use (one it may not use is answered as one not configured)"}},
			s.handleMCPHealth)
		s.Handle(Route{Method: "GET", Path: "/mcp-rest/tools/list", Summary: "The tools of the MCP servers the key may use, named <server>-<tool> (LiteLLM's route)",
			Tags: append(tags, "LiteLLM compatibility"), VirtualKeys: true, Response: mcpRESTToolList{},
			Query:  []QueryParam{{Name: "server_id", Description: "Only this server's tools"}},
			Errors: map[int]string{404: "server_id is no MCP server the key may use (one it may not use is answered as one not configured)", 502: "server_id could not be listed", 504: "server_id did not answer in time"}},
			s.handleMCPRESTList)
		s.Handle(Route{Method: "POST", Path: "/mcp-rest/tools/call", Summary: "Call a tool of an MCP server the key may use (LiteLLM's route)",
			Tags: append(tags, "LiteLLM compatibility"), VirtualKeys: true, Request: mcpRESTCall{}, Response: mcpRESTResult{},
			Errors: map[int]string{400: "arguments is not a JSON object", 404: "no such server or tool among those the key may use",
				422: "name is missing", 502: "the MCP server failed or its result is over --mcp-max-result-bytes", 504: "the MCP server did not answer within --mcp-call-timeout"}},
			s.handleMCPRESTCall)
		return nil
	}
}

// handleMCPHealth answers GET /v1/mcp/server/health: the servers of server_ids (every one
// the key may use, x-mcp-servers applied, when it names none) are checked at once, each
// within --mcp-health-timeout and the request's context, and the answer is their health,
// in the order asked (configuration order for all). What the checks find is also what
// GET /v1/mcp/server shows afterwards.
func (s *Server) handleMCPHealth(w http.ResponseWriter, r *http.Request) error {
	var names []string
	for _, v := range r.URL.Query()["server_ids"] {
		for name := range strings.SplitSeq(v, ",") {
			if name = strings.TrimSpace(name); name != "" && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	for _, name := range names {
		if err := s.mcpCheckServer(r, name); err != nil {
			if ae := (*APIError)(nil); errors.As(err, &ae) {
				ae.Param = "server_ids"
			}
			return err
		}
	}
	if len(names) == 0 {
		for _, si := range s.mcpAllowedServers(r) {
			names = append(names, si.Name)
		}
	}
	out := make([]mcpServerHealth, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			si, err := s.mcp.CheckHealth(r.Context(), name)
			out[i], errs[i] = mcpServerHealth{ServerID: name, Status: string(si.Status), LastHealthCheck: si.LastChecked, HealthCheckError: si.LastError}, err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// mcpError maps the MCP gateway's errors onto statuses.
func mcpError(err error) *APIError {
	switch {
	case errors.Is(err, mcpgateway.ErrUnknownServer), errors.Is(err, mcpgateway.ErrUnknownTool):
		return NotFound("%s", err.Error())
	case errors.Is(err, mcpgateway.ErrInvalidArguments):
		e := Validation(http.StatusBadRequest, "%s", err.Error())
		e.Param = "arguments"
		return e
	case errors.Is(err, mcpgateway.ErrTimeout):
		return Errorf(http.StatusGatewayTimeout, "Gateway Timeout", "%s", err.Error())
	case errors.Is(err, mcpgateway.ErrUpstream), errors.Is(err, mcpgateway.ErrResultTooLarge):
		return Errorf(http.StatusBadGateway, KindBadGateway, "%s", err.Error())
	case errors.Is(err, mcpgateway.ErrClosed):
		return Errorf(http.StatusServiceUnavailable, KindUnavailable, "the MCP gateway is shutting down")
	}
	return nil
}

// mcpMayUse reports whether the caller of ctx may use MCP server name: a virtual key only
// the servers its mcp_servers lists (every one when it lists none), other keys every one.
func mcpMayUse(ctx context.Context, name string) bool {
	p, _ := PrincipalFrom(ctx)
	if vk, ok := p.Scope.(virtualKeyScope); ok && len(vk.MCPServers) > 0 {
		return slices.Contains(vk.MCPServers, name)
	}
	return true
}

// mcpCheckServer returns a 404 for a server not configured or one the caller may not use,
// the same answer for both: a key held to some servers cannot learn which other names are
// servers of the gateway (GET /v1/mcp/server lists it only those it may use).
func (s *Server) mcpCheckServer(r *http.Request, name string) error {
	if !s.mcp.HasServer(name) || !mcpMayUse(r.Context(), name) {
		return NotFound("no MCP server %q that this key may use is configured (GET /v1/mcp/server lists those it may use)", name)
	}
	return nil
}

// mcpAllowedServers are the configured servers the caller of r may use, narrowed to those
// its x-mcp-servers header names when it has one (LiteLLM's header: a comma-separated list
// of server names; a name the key may not use is left out, never added).
func (s *Server) mcpAllowedServers(r *http.Request) []mcpgateway.ServerInfo {
	var only []string
	for _, v := range r.Header.Values("X-Mcp-Servers") {
		for name := range strings.SplitSeq(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				only = append(only, name)
			}
		}
	}
	var out []mcpgateway.ServerInfo
	for _, si := range s.mcp.Servers() {
		if mcpMayUse(r.Context(), si.Name) && (only == nil || slices.Contains(only, si.Name)) {
			out = append(out, si)
		}
	}
	return out
}

// mcpResolve turns a tool's name on the aggregated endpoint ("<server>-<tool>") into its
// server and tool among the servers allowed: the longest allowed server name that prefixes
// it and has the tool (server names may hold "-" too). A name only servers the key may not
// use prefix is an unknown tool, as one no server prefixes: the answer tells no server name
// the key may not use.
func (s *Server) mcpResolve(ctx context.Context, servers []mcpgateway.ServerInfo, name string) (server, tool string, err error) {
	var candidates []string
	for _, si := range servers {
		if rest, ok := strings.CutPrefix(name, si.Name+mcpToolSeparator); ok && rest != "" {
			candidates = append(candidates, si.Name)
		}
	}
	slices.SortFunc(candidates, func(a, b string) int { return len(b) - len(a) })
	for _, c := range candidates {
		tool := strings.TrimPrefix(name, c+mcpToolSeparator)
		tools, err := s.mcp.ListTools(ctx, c)
		if err != nil || slices.ContainsFunc(tools, func(t mcpgateway.Tool) bool { return t.Name == tool }) || len(candidates) == 1 {
			return c, tool, nil // a listing failure is the call's to report
		}
	}
	return "", "", fmt.Errorf("%w %q: tools are named <server>%s<tool> with a server this key may use", mcpgateway.ErrUnknownTool, name, mcpToolSeparator)
}

// mcpServer is the MCP server answering one request: every server the caller may use
// (only "" ) or server only. Its tools/list and tools/call go to the gateway.
func (s *Server) mcpServer(r *http.Request, only string) *mcp.Server {
	servers := s.mcpAllowedServers(r)
	if only != "" {
		servers = []mcpgateway.ServerInfo{{Name: only}}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "switchyard", Version: s.cfg.Version},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				return s.mcpListTools(ctx, servers, only)
			case "tools/call":
				call, ok := req.(*mcp.CallToolRequest)
				if !ok || call.Params == nil {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call: missing params"}
				}
				return s.mcpCallTool(ctx, servers, only, call.Params)
			}
			return next(ctx, method, req)
		}
	})
	return srv
}

// mcpListTools answers tools/list: a server that cannot be listed is left out of the
// aggregated list (GET /v1/mcp/server shows it unhealthy with its failure, and the gateway
// logs the change of status once), and fails the single-server endpoint's.
func (s *Server) mcpListTools(ctx context.Context, servers []mcpgateway.ServerInfo, only string) (*mcp.ListToolsResult, error) {
	out := &mcp.ListToolsResult{Tools: []*mcp.Tool{}}
	for _, si := range servers {
		tools, err := s.mcp.ListTools(ctx, si.Name)
		if err != nil {
			if only != "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			}
			s.log.DebugContext(ctx, "mcp: a server left out of the tool list", "server", si.Name, "err", err)
			continue
		}
		for _, t := range tools {
			name := t.Name
			if only == "" {
				name = si.Name + mcpToolSeparator + t.Name
			}
			tool := &mcp.Tool{Name: name, Description: t.Description, InputSchema: t.InputSchema}
			if len(t.Annotations) > 0 {
				var a mcp.ToolAnnotations
				if json.Unmarshal(t.Annotations, &a) == nil {
					tool.Annotations = &a
				}
			}
			out.Tools = append(out.Tools, tool)
		}
	}
	return out, nil
}

// mcpCallTool answers tools/call: an unknown tool or a server the key may not use is a
// protocol error (invalid params); the upstream's failures are a result with isError, as
// MCP has tool failures reported, so that a model reads them.
func (s *Server) mcpCallTool(ctx context.Context, servers []mcpgateway.ServerInfo, only string, p *mcp.CallToolParamsRaw) (*mcp.CallToolResult, error) {
	server, tool := only, p.Name
	if only == "" {
		var err error
		if server, tool, err = s.mcpResolve(ctx, servers, p.Name); err != nil {
			var ae *APIError
			if errors.As(err, &ae) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: ae.Message}
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
	}
	res, err := s.mcp.CallTool(ctx, server, tool, p.Arguments)
	switch {
	case errors.Is(err, mcpgateway.ErrUnknownTool), errors.Is(err, mcpgateway.ErrUnknownServer), errors.Is(err, mcpgateway.ErrInvalidArguments):
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	case err != nil:
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
	}
	return mcpResultOf(res)
}

// mcpResultOf is res as the SDK's CallToolResult (its content decoded as MCP content).
func mcpResultOf(res mcpgateway.Result) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(mcpRESTResult{Content: res.Content, IsError: res.IsError, StructuredContent: res.StructuredContent})
	if err != nil {
		return nil, fmt.Errorf("server: an MCP result: %w", err)
	}
	var out mcp.CallToolResult
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("server: an MCP result: %w", err)
	}
	return &out, nil
}

// handleMCPRESTList answers GET /mcp-rest/tools/list.
func (s *Server) handleMCPRESTList(w http.ResponseWriter, r *http.Request) error {
	servers := s.mcpAllowedServers(r)
	if id := r.URL.Query().Get("server_id"); id != "" {
		if err := s.mcpCheckServer(r, id); err != nil {
			return err
		}
		servers = []mcpgateway.ServerInfo{{Name: id}}
	}
	out := mcpRESTToolList{Tools: []mcpRESTTool{}, Message: "Successfully retrieved tools"}
	var failures []string
	for _, si := range servers {
		tools, err := s.mcp.ListTools(r.Context(), si.Name)
		if err != nil {
			if len(servers) == 1 && r.URL.Query().Get("server_id") != "" {
				return err
			}
			failures = append(failures, err.Error())
			continue
		}
		for _, t := range tools {
			out.Tools = append(out.Tools, mcpRESTTool{Name: si.Name + mcpToolSeparator + t.Name, Description: t.Description, InputSchema: t.InputSchema,
				Annotations: t.Annotations, MCPInfo: mcpRESTToolInfo{ServerName: si.Name, ServerID: si.Name, ToolName: t.Name}})
		}
	}
	if len(failures) > 0 {
		msg := strings.Join(failures, "; ")
		out.Error = &msg
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// handleMCPRESTCall answers POST /mcp-rest/tools/call.
func (s *Server) handleMCPRESTCall(w http.ResponseWriter, r *http.Request) error {
	var req mcpRESTCall
	if err := decodeJSON(r, &req, decodeOptions{AllowUnknownFields: true}); err != nil {
		return err
	}
	if req.Name == "" {
		e := Validation(http.StatusUnprocessableEntity, "name: required (<server>-<tool>)")
		e.Param = "name"
		return e
	}
	server, tool := req.ServerID, req.Name
	if server != "" {
		if err := s.mcpCheckServer(r, server); err != nil {
			return err
		}
		tool = strings.TrimPrefix(tool, server+mcpToolSeparator)
	} else {
		var err error
		if server, tool, err = s.mcpResolve(r.Context(), s.mcpAllowedServers(r), req.Name); err != nil {
			return err
		}
	}
	res, err := s.mcp.CallTool(r.Context(), server, tool, req.Arguments)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, mcpRESTResult{Content: res.Content, IsError: res.IsError, StructuredContent: res.StructuredContent})
	return nil
}

// MCPTools is g as the gateway's completions.MCPTools: the tools of OpenAI's mcp tool on
// /v1/responses ({"type": "mcp", "server_label": …}) are those of g's servers, called
// through g (its timeout, result cap and metrics).
func MCPTools(g *mcpgateway.Gateway) completions.MCPTools { return mcpTools{g} }

// mcpTools adapts a *mcpgateway.Gateway to completions.MCPTools.
type mcpTools struct{ g *mcpgateway.Gateway }

func (t mcpTools) Servers() []string {
	infos := t.g.Servers()
	names := make([]string, len(infos))
	for i, si := range infos {
		names[i] = si.Name
	}
	return names
}

func (t mcpTools) ListTools(ctx context.Context, server string) ([]completions.MCPTool, error) {
	tools, err := t.g.ListTools(ctx, server)
	if err != nil {
		return nil, err
	}
	out := make([]completions.MCPTool, len(tools))
	for i, tl := range tools {
		out[i] = completions.MCPTool{Name: tl.Name, Description: tl.Description, InputSchema: tl.InputSchema, Annotations: tl.Annotations}
	}
	return out, nil
}

func (t mcpTools) CallTool(ctx context.Context, server, tool string, arguments json.RawMessage) (completions.MCPResult, error) {
	r, err := t.g.CallTool(ctx, server, tool, arguments)
	if err != nil {
		return completions.MCPResult{}, err
	}
	return completions.MCPResult{Content: r.Content, Text: r.Text, IsError: r.IsError}, nil
}
