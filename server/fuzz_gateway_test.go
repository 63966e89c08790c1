package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// fuzzGatewayRoutes are the gateway's routes a fuzzed body is sent to, whole through the
// server: decoding, validation, the plan, the provider's encoding and the answer's.
var fuzzGatewayRoutes = []string{
	"/v1/chat/completions",
	"/v1/messages",
	"/v1/responses",
	"/api/v1/completions",
	"/v1/completions",
	"/v1beta/models/up/ok:generateContent",
	"/v1/embeddings",
}

// FuzzGatewayBodies sends arbitrary bodies to the gateway's routes over a scripted
// upstream (fakeOpenAIUpstream). Whatever the body, the server must not fail on its own
// account: no 500 (a panic recovered is one), and every answer is a JSON document or an
// event stream. The seeds run in every `go test`; `go test -fuzz FuzzGatewayBodies
// ./server` explores further.
func FuzzGatewayBodies(f *testing.F) {
	for _, seed := range []struct {
		route byte
		body  string
	}{
		{0, `{"model":"up/ok","messages":[{"role":"user","content":"hi"}]}`},
		{0, `{"model":"up/ok","stream":true,"stream_options":{"include_usage":true},"n":2,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"hi"}]}]}`},
		{0, `{"model":"up/ok","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","properties":{"a":{"$ref":"#"}}}}},"mock_testing_fallbacks":true,"fallbacks":["up/ok"]}`},
		{0, `{"model":"up/ok","messages":[{"role":"user","content":"hi"}],"tool_choice":{"type":"function","function":{"name":"g"}},"tools":[{"type":"function","function":{"name":"g","parameters":{"type":"object"}}}],"mock_response":"x","stream":true}`},
		{1, `{"model":"up/ok","max_tokens":20,"system":"be brief","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{"type":"object"}}]}`},
		{1, `{"model":"up/ok","max_tokens":20,"stream":true,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`},
		{2, `{"model":"up/ok","input":[{"role":"user","content":"hi"}],"tools":[{"type":"function","name":"f","parameters":{"type":"object"}}],"stream":true}`},
		{2, `{"model":"up/ok","input":"hi","instructions":"be brief","text":{"format":{"type":"json_object"}},"store":false}`},
		{3, `{"models":["up/ok","up/down"],"messages":[{"role":"user","content":"hi"}],"max_tokens":5}`},
		{4, `{"model":"up/ok","prompt":["a","b"],"n":2,"echo":true,"stream":true}`},
		{5, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"responseMimeType":"application/json","responseSchema":{"type":"OBJECT"}}}`},
		{6, `{"model":"up/ok","input":["a","b"]}`},
	} {
		f.Add(seed.route, []byte(seed.body))
	}
	// Short bounds: a fuzzed body may name the upstream's slow or failing models.
	hs, _, _ := completionsServerWith(f, func(o *completions.Options) {
		o.RequestTimeout, o.AttemptTimeout, o.FirstTokenTimeout = 2*time.Second, time.Second, time.Second
	})
	f.Fuzz(func(t *testing.T, which byte, body []byte) {
		route := fuzzGatewayRoutes[int(which)%len(fuzzGatewayRoutes)]
		req, err := http.NewRequest(http.MethodPost, hs.URL+route, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+testKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", route, err)
		}
		defer resp.Body.Close()
		var out bytes.Buffer
		out.ReadFrom(resp.Body)
		if resp.StatusCode >= 500 && resp.StatusCode != http.StatusBadGateway && resp.StatusCode != http.StatusServiceUnavailable && resp.StatusCode != http.StatusGatewayTimeout {
			t.Fatalf("%s: %d for body %q: %s", route, resp.StatusCode, body, out.Bytes())
		}
		ct := resp.Header.Get("Content-Type")
		switch {
		case strings.HasPrefix(ct, "text/event-stream"):
		case strings.HasPrefix(ct, "application/json"):
			if !json.Valid(out.Bytes()) {
				t.Fatalf("%s: %d with a JSON content type but not JSON, for body %q: %s", route, resp.StatusCode, body, out.Bytes())
			}
		default:
			t.Fatalf("%s: %d with content type %q for body %q: %s", route, resp.StatusCode, ct, body, out.Bytes())
		}
	})
}
