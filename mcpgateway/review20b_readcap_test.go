package mcpgateway_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchyard-ai/switchyard/mcpgateway"
	"github.com/switchyard-ai/switchyard/mcpgateway/mcpgatewaytest"
)

// countingTransport counts the response body bytes read through it.
type countingTransport struct{ read atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = &countingBody{rc: resp.Body, n: &c.read}
	}
	return resp, err
}

type countingBody struct {
	rc io.ReadCloser
	n  *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.n.Add(int64(n))
	return n, err
}

func (b *countingBody) Close() error { return b.rc.Close() }

// TestReview20bResultCapBoundsWhatIsRead: --mcp-max-result-bytes used to be checked after
// the whole upstream answer was read into memory. Over http and sse an answer is read only
// so far past the cap (its wire bound): a 40 MB result under a 4 KiB cap fails with
// ErrResultTooLarge having read a small part of it, and the server still answers after.
func TestReview20bResultCapBoundsWhatIsRead(t *testing.T) {
	const huge = 40 << 20
	sse := func() string {
		s := mcpgatewaytest.NewFakeServer("fake-sse", nil, nil)
		srv := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	for _, c := range []struct {
		name      string
		transport mcpgateway.Transport
		url       func() string
	}{
		{"http", mcpgateway.TransportHTTP, func() string { return mcpgatewaytest.StartFakeHTTP(t, "fake").URL }},
		{"sse", mcpgateway.TransportSSE, sse},
	} {
		t.Run(c.name, func(t *testing.T) {
			counter := &countingTransport{}
			g := newGateway(t, []mcpgateway.ServerConfig{{Name: "web", Transport: c.transport, URL: c.url()}},
				mcpgateway.Options{MaxResultBytes: 4 << 10, CallTimeout: 30 * time.Second, HTTPClient: &http.Client{Transport: counter}})
			if _, err := g.ListTools(t.Context(), "web"); err != nil {
				t.Fatal(err)
			}
			before := counter.read.Load()
			_, err := g.CallTool(t.Context(), "web", "big", json.RawMessage(`{"bytes": 41943040}`))
			if !errors.Is(err, mcpgateway.ErrResultTooLarge) || !strings.Contains(err.Error(), "4 KiB") {
				t.Fatalf("a %d-byte result: %v, want ErrResultTooLarge naming 4 KiB", huge, err)
			}
			if read := counter.read.Load() - before; read > huge/8 {
				t.Errorf("read %d bytes of a %d-byte answer: not bounded by the cap", read, huge)
			}
			res, err := g.CallTool(t.Context(), "web", "add", json.RawMessage(`{"a":1,"b":2}`))
			if err != nil || res.Text != "3" {
				t.Fatalf("a call after the cut: %+v, %v", res, err)
			}
		})
	}
}
