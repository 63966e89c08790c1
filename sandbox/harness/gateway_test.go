package harness

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// TestGatewayProxySendsTheJobKey: both paths (the process backend's proxy and the wasm
// tunnel) forward with the job's key, whatever Authorization the agent sent, so code in the
// sandbox cannot try other keys against the server.
func TestGatewayProxySendsTheJobKey(t *testing.T) {
	var got []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
	}))
	defer up.Close()
	p, err := NewGatewayProxy(sandbox.Gateway{BaseURL: up.URL + "/v1", APIKey: "job-key"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer guessed-key")
	p.ServeHTTP(httptest.NewRecorder(), req)
	raw := "POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer guessed-key\r\nContent-Length: 2\r\n\r\n{}"
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(p.RoundTripRaw(context.Background(), []byte(raw)))), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("tunnel: %v %v", resp, err)
	}
	if len(got) != 2 || got[0] != "Bearer job-key" || got[1] != "Bearer job-key" {
		t.Fatalf("the gateway saw %q, want the job key twice", got)
	}
}
