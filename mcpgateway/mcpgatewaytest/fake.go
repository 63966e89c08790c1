// Package mcpgatewaytest holds a fake upstream MCP server for tests of the MCP gateway and
// of what is built on it. It is built with the official MCP Go SDK, so what it speaks is
// real MCP; only its tools are made up.
package mcpgatewaytest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FakeTools are the names of NewFakeServer's tools:
//
//	echo   {"text": string} → the text, and structured content {"echoed": text}
//	add    {"a": number, "b": number} → the sum, as text
//	big    {"bytes": number} → a text part of that many "x"
//	slow   {} → waits until the call is cancelled
//	fail   {} → a result with isError true
//	secret {} → "the secret" (for allowed_tools tests)
var FakeTools = []string{"add", "big", "echo", "fail", "secret", "slow"}

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}
type echoOut struct {
	Echoed string `json:"echoed"`
}
type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}
type bigIn struct {
	Bytes int `json:"bytes"`
}
type none struct{}

// NewFakeServer returns a fake MCP server named name with FakeTools; calls counts the tool
// calls it answers (nil: not counted); closing stop ends the slow tool's wait too (nil: only
// a cancellation does).
func NewFakeServer(name string, calls *atomic.Int64, stop <-chan struct{}) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "0.0.1"}, nil)
	count := func() {
		if calls != nil {
			calls.Add(1)
		}
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes the text", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
			count()
			return nil, echoOut{Echoed: in.Text}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
			count()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: formatNumber(in.A + in.B)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Answers that many bytes"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in bigIn) (*mcp.CallToolResult, any, error) {
			count()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", in.Bytes)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Waits until cancelled"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			count()
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-stop:
				return nil, nil, errors.New("the server is stopping")
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fails"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			count()
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the tool failed"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "secret", Description: "Tells a secret"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			count()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the secret"}}}, nil, nil
		})
	return s
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// FakeHTTP is a fake MCP server over streamable HTTP that can be stopped and started
// again on the same address (an upstream that dies and comes back).
type FakeHTTP struct {
	// URL is the server's MCP endpoint.
	URL string
	// Calls counts the tool calls answered.
	Calls atomic.Int64
	// Headers are the last request's headers.
	headers atomic.Pointer[http.Header]

	t    testing.TB
	addr string
	mu   sync.Mutex
	srv  *httptest.Server
	stop chan struct{} // closed by Stop: ends the slow tool's calls
}

// StartFakeHTTP starts a FakeHTTP named name; it stops when the test ends.
func StartFakeHTTP(t testing.TB, name string) *FakeHTTP {
	f := &FakeHTTP{t: t}
	f.start(name, nil)
	f.URL = f.srv.URL + "/mcp"
	t.Cleanup(f.Stop)
	return f
}

func (f *FakeHTTP) start(name string, ln net.Listener) {
	stop := make(chan struct{})
	s := NewFakeServer(name, &f.Calls, stop)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := r.Header.Clone()
		f.headers.Store(&hd)
		h.ServeHTTP(w, r)
	}))
	if ln != nil {
		srv.Listener.Close()
		srv.Listener = ln
	}
	srv.Start()
	f.mu.Lock()
	f.srv, f.addr, f.stop = srv, srv.Listener.Addr().String(), stop
	f.mu.Unlock()
}

// Header returns the last request's header name.
func (f *FakeHTTP) Header(name string) string {
	if h := f.headers.Load(); h != nil {
		return h.Get(name)
	}
	return ""
}

// Stop stops the server: connections are cut and the address refuses new ones.
func (f *FakeHTTP) Stop() {
	f.mu.Lock()
	srv, stop := f.srv, f.stop
	f.srv, f.stop = nil, nil
	f.mu.Unlock()
	if stop != nil {
		close(stop)
	}
	if srv != nil {
		srv.CloseClientConnections()
		srv.Close()
	}
}

// Restart starts a new server (with no memory of the old one's sessions) on the address
// the stopped one had.
func (f *FakeHTTP) Restart(name string) {
	f.t.Helper()
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		f.t.Fatalf("restarting the fake MCP server on %s: %v", f.addr, err)
	}
	f.start(name, ln)
}

// ServeStdio serves a fake MCP server on the process's stdin and stdout until the client
// goes away: a test binary's TestMain calls it when re-executed as a stdio server.
func ServeStdio(name string) error {
	return NewFakeServer(name, nil, nil).Run(context.Background(), &mcp.StdioTransport{})
}
