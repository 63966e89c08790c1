package telemetry

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/switchyard-ai/switchyard/mcpgateway"
)

func TestMCPToolCallMetrics(t *testing.T) {
	m := New(Options{})
	var obs mcpgateway.Observer = m
	obs.ObserveToolCall(context.Background(), mcpgateway.CallRecord{Server: "github", Tool: "search", Outcome: mcpgateway.OutcomeOK, Duration: 20 * time.Millisecond})
	obs.ObserveToolCall(context.Background(), mcpgateway.CallRecord{Server: "github", Tool: "search", Outcome: mcpgateway.OutcomeOK, Duration: time.Second})
	obs.ObserveToolCall(context.Background(), mcpgateway.CallRecord{Server: "github", Tool: "slow", Outcome: mcpgateway.OutcomeTimeout})
	if v := testutil.ToFloat64(m.mcpCalls.WithLabelValues("github", "ok")); v != 2 {
		t.Fatalf("switchyard_mcp_tool_calls_total{github,ok} = %v, want 2", v)
	}
	if v := testutil.ToFloat64(m.mcpCalls.WithLabelValues("github", "timeout")); v != 1 {
		t.Fatalf("switchyard_mcp_tool_calls_total{github,timeout} = %v, want 1", v)
	}
	if n := testutil.CollectAndCount(m.mcpDuration, "switchyard_mcp_tool_call_duration_seconds"); n != 1 {
		t.Fatalf("duration series = %d, want 1 (by server only)", n)
	}
}
