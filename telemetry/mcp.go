package telemetry

import (
	"context"

	"github.com/switchyard-ai/switchyard/mcpgateway"
)

// ObserveToolCall implements mcpgateway.Observer: tool calls by server and outcome
// (switchyard_mcp_tool_calls_total) and their duration by server
// (switchyard_mcp_tool_call_duration_seconds). Servers are the configured ones, so the
// label is bounded; tools are not a label (an upstream names them).
func (m *Metrics) ObserveToolCall(_ context.Context, r mcpgateway.CallRecord) {
	m.mcpCalls.WithLabelValues(r.Server, r.Outcome).Inc()
	m.mcpDuration.WithLabelValues(r.Server).Observe(r.Duration.Seconds())
}
