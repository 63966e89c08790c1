package mcpgateway

import "errors"

// The gateway's failures. Every error it returns wraps one of them (compare with
// errors.Is) and names the server and, for calls, the tool.
var (
	// ErrConfig means a server's configuration is invalid; the message names the field.
	ErrConfig = errors.New("mcpgateway: invalid configuration")
	// ErrUnknownServer means no configured server has the name asked for.
	ErrUnknownServer = errors.New("unknown MCP server")
	// ErrUnknownTool means the server has no tool of that name, or allowed_tools leaves it out.
	ErrUnknownTool = errors.New("unknown MCP tool")
	// ErrInvalidArguments means a call's arguments are not a JSON object.
	ErrInvalidArguments = errors.New("invalid MCP tool arguments")
	// ErrUpstream means the upstream server could not be reached or failed the request.
	ErrUpstream = errors.New("MCP server failed")
	// ErrTimeout means the upstream server did not answer within the call timeout.
	ErrTimeout = errors.New("MCP call timed out")
	// ErrResultTooLarge means a tool's result is over Options.MaxResultBytes.
	ErrResultTooLarge = errors.New("MCP tool result too large")
	// ErrClosed means the gateway was closed.
	ErrClosed = errors.New("mcpgateway: closed")
)
