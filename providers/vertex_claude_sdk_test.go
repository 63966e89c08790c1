package providers_test

// Claude on Vertex AI: the gateway's wire shape against Anthropic's own Go client (its
// vertex package), both pointed at a recording transport.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/vertex"
	"github.com/switchyard-ai/switchyard/providers"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// vcWireRecorder records each request's URL, headers and JSON body and answers with a
// Claude message.
type vcWireRecorder struct {
	mu   sync.Mutex
	reqs []vcWireRequest
}

type vcWireRequest struct {
	url    string
	header http.Header
	body   map[string]any
}

func (w *vcWireRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	w.mu.Lock()
	w.reqs = append(w.reqs, vcWireRequest{url: r.URL.String(), header: r.Header.Clone(), body: body})
	w.mu.Unlock()
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
		Body: io.NopCloser(strings.NewReader(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}`))}, nil
}

// The URL (host of the location, project, publishers/anthropic, model with its @date,
// :rawPredict), the Bearer and the body (no model, anthropic_version, system, messages,
// tools, max_tokens) the gateway sends are the ones the SDK sends.
func TestVertexClaudeMatchesSDK(t *testing.T) {
	ctx := context.Background()
	const model, region, project, token = "claude-sonnet-4@20250514", "europe-west1", "my-proj", "ya29.sdk"

	sdkWire := &vcWireRecorder{}
	creds := &google.Credentials{ProjectID: project, TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token, TokenType: "Bearer"})}
	c := anthropic.NewClient(option.WithHTTPClient(&http.Client{Transport: sdkWire}), vertex.WithCredentials(ctx, region, project, creds), option.WithMaxRetries(0))
	_, err := c.Messages.New(ctx, anthropic.MessageNewParams{
		Model: model, MaxTokens: 500,
		System:   []anthropic.TextBlockParam{{Text: "Be brief."}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Paris?"))},
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "get_weather", Description: anthropic.String("Weather of a place"),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"location": map[string]any{"type": "string"}}, Required: []string{"location"}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}

	ourWire := &vcWireRecorder{}
	v, err := providers.NewVertex(providers.VertexConfig{Config: providers.Config{HTTPClient: &http.Client{Transport: ourWire}},
		Project: project, Location: region, AccessToken: token})
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Complete(ctx, &providers.Request{Model: model, MaxTokens: 500, Tools: []providers.Tool{{Name: "get_weather", Description: "Weather of a place",
		Parameters: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)}},
		Messages: []providers.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Weather in Paris?"}}})
	if err != nil {
		t.Fatal(err)
	}

	if len(sdkWire.reqs) != 1 || len(ourWire.reqs) != 1 {
		t.Fatalf("%d SDK requests, %d ours", len(sdkWire.reqs), len(ourWire.reqs))
	}
	sdk, ours := sdkWire.reqs[0], ourWire.reqs[0]
	if sdk.url != ours.url {
		t.Errorf("URL %s, the SDK's %s", ours.url, sdk.url)
	}
	if a, b := ours.header.Get("Authorization"), sdk.header.Get("Authorization"); a != b || a != "Bearer "+token {
		t.Errorf("Authorization %q, the SDK's %q", a, b)
	}
	if ours.header.Get("Anthropic-Version") != "" || sdk.header.Get("Anthropic-Version") != "" {
		t.Errorf("anthropic-version header %q, the SDK's %q: Vertex takes the version in the body", ours.header.Get("Anthropic-Version"), sdk.header.Get("Anthropic-Version"))
	}
	// The SDK moves its own API version (its anthropic-version header) into the body; the
	// gateway sends the version Vertex AI documents for Claude, as LiteLLM does.
	if _, ok := sdk.body["anthropic_version"].(string); !ok || ours.body["anthropic_version"] != providers.VertexAnthropicVersion {
		t.Errorf("anthropic_version %v, the SDK's %v", ours.body["anthropic_version"], sdk.body["anthropic_version"])
	}
	for _, k := range []string{"model", "max_tokens", "stream"} {
		if !reflect.DeepEqual(sdk.body[k], ours.body[k]) {
			t.Errorf("%s: %s, the SDK's %s", k, toJSON(ours.body[k]), toJSON(sdk.body[k]))
		}
	}
	// The SDK sends text as blocks where the gateway sends strings: the same content.
	sm, om := sdk.body["messages"].([]any), ours.body["messages"].([]any)
	if len(sm) != 1 || len(om) != 1 || om[0].(map[string]any)["content"] != "Weather in Paris?" || !strings.Contains(toJSON(sm[0]), `"Weather in Paris?"`) {
		t.Errorf("messages %s, the SDK's %s", toJSON(om), toJSON(sm))
	}
	// The SDK sends the system prompt as blocks and the tool's schema as given; the gateway
	// sends the same content (a string system prompt, the caller's schema).
	if sys := toJSON(sdk.body["system"]); !strings.Contains(sys, `"Be brief."`) || ours.body["system"] != "Be brief." {
		t.Errorf("system %v, the SDK's %s", ours.body["system"], sys)
	}
	st, ot := sdk.body["tools"].([]any), ours.body["tools"].([]any)
	if len(st) != 1 || len(ot) != 1 || st[0].(map[string]any)["name"] != ot[0].(map[string]any)["name"] ||
		!reflect.DeepEqual(st[0].(map[string]any)["input_schema"].(map[string]any)["properties"], ot[0].(map[string]any)["input_schema"].(map[string]any)["properties"]) {
		t.Errorf("tools %s, the SDK's %s", toJSON(ot), toJSON(st))
	}
}
