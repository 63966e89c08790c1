package mcpgateway

import (
	"context"
	"time"
)

// The outcomes of a tool call (CallRecord.Outcome).
const (
	// OutcomeOK: the tool answered.
	OutcomeOK = "ok"
	// OutcomeToolError: the tool answered with isError true (its own failure).
	OutcomeToolError = "tool_error"
	// OutcomeUpstreamError: the server could not be reached or failed the request.
	OutcomeUpstreamError = "upstream_error"
	// OutcomeTimeout: no answer within the call timeout.
	OutcomeTimeout = "timeout"
	// OutcomeTooLarge: the result was over the size cap.
	OutcomeTooLarge = "too_large"
	// OutcomeUnknownTool: the server has no such tool (or allowed_tools leaves it out).
	OutcomeUnknownTool = "unknown_tool"
	// OutcomeInvalidArguments: the arguments were not a JSON object.
	OutcomeInvalidArguments = "invalid_arguments"
	// OutcomeCancelled: the caller went away.
	OutcomeCancelled = "cancelled"
)

// CallRecord describes one tool call, for an Observer. Arguments are not part of it.
type CallRecord struct {
	// Server and Tool are the configured server's name and the tool's upstream name.
	Server, Tool string
	// Outcome is one of the Outcome constants.
	Outcome string
	// Duration is the time from the call to its answer, connecting included.
	Duration time.Duration
	// ResultBytes is the size of the result's content as JSON (0 on failure).
	ResultBytes int
	// Err is the call's failure (nil for OutcomeOK and OutcomeToolError).
	Err error
}

// Observer is told of every tool call once it is over (metrics, usage logs). It is called
// synchronously and should not block.
type Observer interface {
	ObserveToolCall(ctx context.Context, r CallRecord)
}
