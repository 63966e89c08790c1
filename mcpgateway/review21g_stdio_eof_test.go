package mcpgateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/mcpgateway/mcpgatewaytest"
)

// fakeStdioLastUnterminatedEnv, when set with fakeStdioEnv, makes the fake stdio server
// send its first tool call's answer without the newline ending it, then close its stdout
// and exit (serveLastUnterminated).
const fakeStdioLastUnterminatedEnv = "MCPGATEWAY_FAKE_STDIO_LAST_UNTERMINATED"

// lastUnterminatedWriter is the fake's stdout: a tool call's answer is written without its
// newline, and then the process exits.
type lastUnterminatedWriter struct{ f *os.File }

func (w lastUnterminatedWriter) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte(`"result":`)) || !bytes.Contains(p, []byte(`"content":[`)) {
		return w.f.Write(p)
	}
	if _, err := w.f.Write(bytes.TrimSuffix(p, []byte("\n"))); err != nil {
		return 0, err
	}
	w.f.Close()
	os.Exit(0)
	return len(p), nil
}

func (w lastUnterminatedWriter) Close() error { return w.f.Close() }

// serveLastUnterminated serves the fake MCP server on stdin and stdout, writing its last
// message, a tool call's answer, without a newline before it exits.
func serveLastUnterminated(name string) error {
	return mcpgatewaytest.NewFakeServer(name, nil, nil).Run(context.Background(), &mcp.IOTransport{Reader: os.Stdin, Writer: lastUnterminatedWriter{os.Stdout}})
}

// A stdio server whose last message (here a tool call's answer) has no newline before it
// exits is answered, as the MCP SDK's own reader answers it: the gateway's bounded line
// reader passes a last unterminated line on at the end of the stream rather than holding
// it for a newline that never comes (the call would fail with EOF).
func TestReview21gStdioLastLineWithoutNewlineIsDelivered(t *testing.T) {
	cfg := fakeStdio(t, "local")
	cfg.Env[fakeStdioLastUnterminatedEnv] = "1"
	g := newGateway(t, []mcpgateway.ServerConfig{cfg}, mcpgateway.Options{MaxResultBytes: 4 << 10})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := g.CallTool(ctx, "local", "add", json.RawMessage(`{"a": 1, "b": 2}`))
	if err != nil || res.Text != "3" {
		t.Fatalf("the last answer, without a newline: %+v, %v", res, err)
	}
}
