package mcpgateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchyard-ai/switchyard/mcpgateway"
)

type gateIn struct{}
type bigArgs struct {
	Bytes int `json:"bytes"`
}

// gatedServer is an MCP server with a tool "gate" that tells started it was called and
// answers "opened" once it receives from open, and "big" answering that many bytes.
// The gate also opens when the test ends or the function returned is called.
// Call the function returned before closing the server (it cannot close with a call in it).
func gatedServer(t *testing.T, started chan<- struct{}, open <-chan struct{}) (*mcp.Server, func()) {
	quit := make(chan struct{})
	s := mcp.NewServer(&mcp.Implementation{Name: "gated", Version: "0.0.1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "gate", Description: "Waits for the test"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ gateIn) (*mcp.CallToolResult, any, error) {
			started <- struct{}{}
			select {
			case <-open:
			case <-quit:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "opened"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Answers that many bytes"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in bigArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", in.Bytes)}}}, nil, nil
		})
	quitOnce := sync.OnceFunc(func() { close(quit) })
	t.Cleanup(quitOnce)
	return s, quitOnce
}

// Two calls to one server at once, one of them answered over the result cap (its answer
// cut off while read): the cut call fails with ErrResultTooLarge and the other one is
// answered, over streamable HTTP whether the server answers a call with JSON or an event
// stream. It used to fail too, and as too large: the cut was counted per server.
func TestConcurrentCallIsNotChargedWithAnotherCallsCut(t *testing.T) {
	for _, c := range []struct {
		name string
		json bool
	}{{"event-stream", false}, {"json", true}} {
		t.Run(c.name, func(t *testing.T) {
			started, open := make(chan struct{}, 1), make(chan struct{})
			s, quit := gatedServer(t, started, open)
			srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: c.json}))
			t.Cleanup(func() { quit(); srv.Close() })
			obs := &recordingObserver{}
			g := newGateway(t, []mcpgateway.ServerConfig{{Name: "web", URL: srv.URL}}, mcpgateway.Options{MaxResultBytes: 4 << 10, Observer: obs})
			if _, err := g.ListTools(t.Context(), "web"); err != nil {
				t.Fatal(err)
			}
			cutBesideAnswered(t, g, "web", started, open)
			if got := strings.Join(obs.outcomes(), " "); got != "web/big:too_large web/gate:ok" {
				t.Fatalf("observed %s", got)
			}
			if si := g.Servers()[0]; si.Status != mcpgateway.StatusHealthy {
				t.Fatalf("after a result over the cap: %+v, want healthy (the server answered)", si)
			}

			// A call failing for a reason of its own (here its caller goes away) after
			// another's answer was cut is charged with its own failure, not the cut.
			ctx, cancel := context.WithCancel(t.Context())
			gated := callInBackground(ctx, g, "web", "gate")
			<-started
			if _, err := g.CallTool(t.Context(), "web", "big", json.RawMessage(`{"bytes": 2097152}`)); !errors.Is(err, mcpgateway.ErrResultTooLarge) {
				t.Fatalf("the second call answered over the cap: %v", err)
			}
			cancel()
			if a := <-gated; a.err == nil || errors.Is(a.err, mcpgateway.ErrResultTooLarge) {
				t.Fatalf("a cancelled call: %v, want its cancellation, not ErrResultTooLarge", a.err)
			}
			quit() // the upstream's handler may still wait: closing the gateway would wait for it
			if got := strings.Join(obs.outcomes(), " "); got != "web/big:too_large web/gate:ok web/big:too_large web/gate:cancelled" {
				t.Fatalf("observed %s", got)
			}
		})
	}
}

// Over the older SSE transport every answer comes on one event stream: the cut answer is
// read through and dropped there (never held), so that the stream and the call made at the
// same time go on.
func TestSSEConcurrentCallIsNotChargedWithAnotherCallsCut(t *testing.T) {
	started, open := make(chan struct{}, 1), make(chan struct{})
	s, quit := gatedServer(t, started, open)
	srv := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(func() { quit(); srv.Close() })
	g := newGateway(t, []mcpgateway.ServerConfig{{Name: "legacy", Transport: mcpgateway.TransportSSE, URL: srv.URL}}, mcpgateway.Options{MaxResultBytes: 4 << 10})
	if _, err := g.ListTools(t.Context(), "legacy"); err != nil {
		t.Fatal(err)
	}
	cutBesideAnswered(t, g, "legacy", started, open)
	if res, err := g.CallTool(t.Context(), "legacy", "big", json.RawMessage(`{"bytes": 10}`)); err != nil || len(res.Text) != 10 {
		t.Fatalf("a call after the cut: %+v, %v", res, err)
	}
}

// callAnswer is a tool call's result and error.
type callAnswer struct {
	res mcpgateway.Result
	err error
}

// callInBackground calls server's tool with no arguments and sends its answer on the
// channel returned.
func callInBackground(ctx context.Context, g *mcpgateway.Gateway, server, tool string) chan callAnswer {
	out := make(chan callAnswer, 1)
	go func() {
		res, err := g.CallTool(ctx, server, tool, nil)
		out <- callAnswer{res, err}
	}()
	return out
}

// cutBesideAnswered calls server's gate tool and, while the server holds it (started),
// its big tool answered over the cap: the big call must fail with ErrResultTooLarge naming
// it, and the gate call, once the server lets it go (open), be answered.
func cutBesideAnswered(t *testing.T, g *mcpgateway.Gateway, server string, started, open chan struct{}) {
	t.Helper()
	gated := callInBackground(t.Context(), g, server, "gate")
	<-started
	_, err := g.CallTool(t.Context(), server, "big", json.RawMessage(`{"bytes": 2097152}`))
	if !errors.Is(err, mcpgateway.ErrResultTooLarge) || !strings.Contains(err.Error(), server+"/big") {
		t.Fatalf("the call answered over the cap: %v, want ErrResultTooLarge naming %s/big", err, server)
	}
	open <- struct{}{}
	if a := <-gated; a.err != nil || a.res.Text != "opened" {
		t.Fatalf("the call made at the same time: %+v, %v; want it answered", a.res, a.err)
	}
}
