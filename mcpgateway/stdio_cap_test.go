package mcpgateway_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/mcpgateway"
)

// A stdio server's messages are bounded by the configured result cap as http and sse
// ones are, not by the MCP Go SDK's fixed 16 MiB: a 17 MiB result under a 20 MiB cap is
// answered (the SDK alone ended the session on it), and one over a small cap fails with
// ErrResultTooLarge without ending the session (the child keeps serving).
func TestStdioMessagesFollowTheResultCap(t *testing.T) {
	const size = 17 << 20
	g := newGateway(t, []mcpgateway.ServerConfig{fakeStdio(t, "local")}, mcpgateway.Options{MaxResultBytes: 20 << 20})
	res, err := g.CallTool(t.Context(), "local", "big", json.RawMessage(fmt.Sprintf(`{"bytes": %d}`, size)))
	if err != nil || len(res.Text) != size {
		t.Fatalf("a %d-byte result under a 20 MiB cap: %d bytes, %v", size, len(res.Text), err)
	}

	small := newGateway(t, []mcpgateway.ServerConfig{fakeStdio(t, "local")}, mcpgateway.Options{MaxResultBytes: 4 << 10})
	if _, err := small.ListTools(t.Context(), "local"); err != nil {
		t.Fatal(err)
	}
	before := childPIDs(t)
	_, err = small.CallTool(t.Context(), "local", "big", json.RawMessage(`{"bytes": 2097152}`))
	if !errors.Is(err, mcpgateway.ErrResultTooLarge) || !strings.Contains(err.Error(), "4 KiB") {
		t.Fatalf("a 2 MiB result under a 4 KiB cap: %v, want ErrResultTooLarge naming 4 KiB", err)
	}
	res, err = small.CallTool(t.Context(), "local", "add", json.RawMessage(`{"a":1,"b":2}`))
	if err != nil || res.Text != "3" {
		t.Fatalf("a call after the cut: %+v, %v", res, err)
	}
	if after := childPIDs(t); before != nil && fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("children %v after the cut, %v before: the session was ended", after, before)
	}
}
