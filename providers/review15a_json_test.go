package providers_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview15aJSONStreamPreamble: a model without toolChoice (Llama) writes a sentence
// before calling the answer tool. The whole answer is the tool's input alone; the
// streamed content must be the same JSON, not the sentence followed by it.
func TestReview15aJSONStreamPreamble(t *testing.T) {
	whole := `{"output":{"message":{"role":"assistant","content":[{"text":"Here is the person: "},` +
		`{"toolUse":{"toolUseId":"tooluse_1","name":"person","input":{"name":"Ada","age":36}}}]}},` +
		`"stopReason":"tool_use","usage":{"inputTokens":9,"outputTokens":7,"totalTokens":16}}`
	streamed := bedrockEvent("messageStart", `{"role":"assistant"}`) +
		bedrockEvent("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Here is the person: "}}`) +
		bedrockEvent("contentBlockStop", `{"contentBlockIndex":0}`) +
		bedrockEvent("contentBlockStart", `{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"tooluse_1","name":"person"}}}`) +
		bedrockEvent("contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"name\":\"Ada\","}}}`) +
		bedrockEvent("contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"\"age\":36}"}}}`) +
		bedrockEvent("contentBlockStop", `{"contentBlockIndex":1}`) +
		bedrockEvent("messageStop", `{"stopReason":"tool_use"}`) +
		bedrockEvent("metadata", `{"usage":{"inputTokens":9,"outputTokens":7,"totalTokens":16},"metrics":{"latencyMs":5}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/converse-stream") {
			w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
			io.WriteString(w, streamed)
			return
		}
		io.WriteString(w, whole)
	}))
	defer srv.Close()
	p := newProvider(t, providers.FormatBedrock, srv.URL, nil)
	req := &providers.Request{Model: "meta.llama3-1-70b-instruct-v1:0", Messages: []providers.Message{{Role: "user", Content: "Ada, 36"}}, ResponseFormat: personFormat()}
	resp, err := p.Complete(context.Background(), req)
	if err != nil || resp.Text != `{"name":"Ada","age":36}` {
		t.Fatalf("whole: %+v, %v", resp, err)
	}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var text string
	for {
		c, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		text += c.Text
	}
	if text != resp.Text || !json.Valid([]byte(text)) {
		t.Errorf("streamed content %q, whole %q", text, resp.Text)
	}
}

// TestReview15aJSONNameClashWithHistory: a schema named like a function the history called
// (the request carries no tools, so that function is declared from the history) must not
// give Converse two tools of one name, which it refuses.
func TestReview15aJSONNameClashWithHistory(t *testing.T) {
	srv, got := captureOnce(t, 200, converseHello)
	p := newProvider(t, providers.FormatBedrock, srv.URL, nil)
	req := &providers.Request{Model: "anthropic.claude-3-5-sonnet-20240620-v1:0", ResponseFormat: personFormat(), Messages: []providers.Message{
		{Role: "user", Content: "who is it?"},
		{Role: "assistant", ToolCalls: []providers.ToolCall{{ID: "c1", Name: "person", Arguments: `{"id":1}`}}},
		{Role: "tool", ToolCallID: "c1", Content: `{"name":"Ada","age":36}`},
	}}
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		ToolConfig struct {
			Tools []struct {
				ToolSpec *struct {
					Name string `json:"name"`
				} `json:"toolSpec"`
			} `json:"tools"`
			ToolChoice json.RawMessage `json:"toolChoice"`
		} `json:"toolConfig"`
	}
	if err := json.Unmarshal(got.body, &body); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tl := range body.ToolConfig.Tools {
		if tl.ToolSpec == nil {
			continue
		}
		if seen[tl.ToolSpec.Name] {
			t.Errorf("two tools named %q: %s", tl.ToolSpec.Name, got.body)
		}
		seen[tl.ToolSpec.Name] = true
	}
}
