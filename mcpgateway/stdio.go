package mcpgateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport runs a stdio server as mcp.CommandTransport does, with its output read
// through a messageCap: each line (one JSON-RPC message) is bounded by the result cap's
// wireLimit, as the http and sse transports' messages are, not by the SDK's fixed
// DefaultMaxLineLength. mcp.CommandTransport takes no limit and no reader of ours.
type stdioTransport struct {
	cmd       *exec.Cmd
	terminate time.Duration // after stdin is closed, before the child is terminated
	limit     int64
}

// Connect starts the child.
func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", t.cmd.Path, err)
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", t.cmd.Path, err)
	}
	if err := t.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", t.cmd.Path, err)
	}
	// The connection is closed by closing the child's stdin (childInput.Close), not its
	// stdout; messageCap checks every line, so the SDK's own line limit is turned off.
	out := io.NopCloser(newMessageCap(stdout, nil, t.limit, framingLines))
	return (&mcp.IOTransport{Reader: out, Writer: &childInput{WriteCloser: stdin, cmd: t.cmd, terminate: t.terminate}, MaxLineLength: -1}).Connect(ctx)
}

// childInput is a stdio child's stdin; closing it stops the child as the MCP spec has a
// client do: stdin closed, then SIGTERM after terminate, then SIGKILL after as long again.
type childInput struct {
	io.WriteCloser
	cmd       *exec.Cmd
	terminate time.Duration
}

// Close closes the child's stdin and waits for it to exit, terminating it if it does not.
func (c *childInput) Close() error {
	if err := c.WriteCloser.Close(); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		return fmt.Errorf("closing the child's stdin: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	wait := func() (error, bool) {
		t := time.NewTimer(c.terminate)
		defer t.Stop()
		select {
		case err := <-exited:
			return err, true
		case <-t.C:
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if c.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := c.cmd.Process.Kill(); err != nil {
		return fmt.Errorf("killing the child: %w", err)
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("the child did not exit after SIGKILL")
}
