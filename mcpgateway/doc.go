// Package mcpgateway is Switchyard's MCP gateway: one place that holds connections to
// upstream MCP (Model Context Protocol) servers and lets callers list and call their tools,
// what LiteLLM's and Bifrost's MCP gateways give their users.
//
// A [Gateway] is built from explicit configuration ([ServerConfig] values, usually read by
// [LoadConfig] from a JSON or YAML file) and holds, per upstream server, one client session
// of the official MCP Go SDK over streamable HTTP, the older HTTP+SSE transport or a stdio
// subprocess. Sessions are opened on first use; each server's tool list is cached until the
// server says it changed (notifications/tools/list_changed) or a call fails; a broken session
// is dropped and the next use opens a new one. Calls are bounded in time
// ([Options.CallTimeout]) and in the size of their result ([Options.MaxResultBytes]); an
// answer over the cap fails its own call only. [Gateway.Servers] reports each server's
// health ([Status]) as its last listing or call showed it.
// [Gateway.Close] ends every session and stops the stdio children.
//
// The package knows nothing of HTTP serving or API keys: the server package exposes the
// gateway as an MCP server of its own (/mcp) and as LiteLLM's REST routes, and decides which
// servers a key may use. Failures are one typed set ([ErrUnknownServer], [ErrUnknownTool],
// [ErrUpstream], [ErrTimeout], [ErrResultTooLarge], [ErrConfig]) compared with errors.Is.
package mcpgateway
