package providers_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// personSchema is a json_schema response format's schema in these tests.
const personSchema = `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name","age"]}`

func personFormat() *providers.ResponseFormat {
	return &providers.ResponseFormat{Type: providers.ResponseJSONSchema, Name: "person", Description: "A person", Schema: json.RawMessage(personSchema)}
}

// TestBedrockJSONModeRequest: a JSON response format goes to Converse as a tool whose input
// schema is the requested schema (JSON mode: an open object), forced with toolChoice on
// models that take it; with the caller's own tools, any of them or the answer; a forced
// function of the caller's stays forced; models without toolChoice get the tool alone;
// Claude's thinking is left off (Claude refuses a forced tool while thinking).
func TestBedrockJSONModeRequest(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body = nil
		json.NewDecoder(r.Body).Decode(&body)
		io.WriteString(w, converseHello)
	}))
	defer srv.Close()
	p := newProvider(t, providers.FormatBedrock, srv.URL, nil)
	q := []providers.Message{{Role: "user", Content: "q"}}
	person := `{"toolSpec":{"description":"A person","inputSchema":{"json":` + personSchema + `},"name":"person"}}`
	open := `{"toolSpec":{"description":"Give your final answer by calling this tool: its input is the answer.","inputSchema":{"json":{"type":"object","properties":{},"additionalProperties":true}},"name":"json_tool_call"}}`
	now := `{"toolSpec":{"inputSchema":{"json":{"type":"object"}},"name":"now"}}`
	msgs := `"messages":[{"content":[{"text":"q"}],"role":"user"}]`
	for _, c := range []struct {
		name string
		req  *providers.Request
		want string
	}{
		{"json_schema on Claude: the schema's tool, forced; thinking off",
			&providers.Request{Model: "us.anthropic.claude-sonnet-4-20250514-v1:0", Messages: q, ResponseFormat: personFormat(), Thinking: &providers.Thinking{Effort: "high"}},
			`{` + msgs + `,"toolConfig":{"toolChoice":{"tool":{"name":"person"}},"tools":[` + person + `]}}`},
		{"json_object on Nova: json_tool_call with an open object, forced",
			&providers.Request{Model: "amazon.nova-pro-v1:0", Messages: q, ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONObject}},
			`{` + msgs + `,"toolConfig":{"toolChoice":{"tool":{"name":"json_tool_call"}},"tools":[` + open + `]}}`},
		{"a model without toolChoice: the tool alone",
			&providers.Request{Model: "meta.llama3-1-70b-instruct-v1:0", Messages: q, ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONObject}},
			`{` + msgs + `,"toolConfig":{"tools":[` + open + `]}}`},
		{"the caller's tools too: any of them or the answer",
			&providers.Request{Model: "amazon.nova-pro-v1:0", Messages: q, Tools: []providers.Tool{{Name: "now"}}, ResponseFormat: personFormat()},
			`{` + msgs + `,"toolConfig":{"toolChoice":{"any":{}},"tools":[` + now + `,` + person + `]}}`},
		{"a forced function of the caller's stays forced",
			&providers.Request{Model: "amazon.nova-pro-v1:0", Messages: q, Tools: []providers.Tool{{Name: "now"}},
				ToolChoice: &providers.ToolChoice{Mode: providers.ToolChoiceFunction, Name: "now"}, ResponseFormat: personFormat()},
			`{` + msgs + `,"toolConfig":{"toolChoice":{"tool":{"name":"now"}},"tools":[` + now + `,` + person + `]}}`},
		{"tool_choice none: the caller's tools left out, the answer forced",
			&providers.Request{Model: "amazon.nova-pro-v1:0", Messages: q, Tools: []providers.Tool{{Name: "now"}},
				ToolChoice: &providers.ToolChoice{Mode: providers.ToolChoiceNone}, ResponseFormat: personFormat()},
			`{` + msgs + `,"toolConfig":{"toolChoice":{"tool":{"name":"person"}},"tools":[` + person + `]}}`},
		{"a schema named like a function of the caller's: renamed",
			&providers.Request{Model: "amazon.nova-pro-v1:0", Messages: q, Tools: []providers.Tool{{Name: "json_tool_call"}},
				ToolChoice: &providers.ToolChoice{Mode: providers.ToolChoiceNone}, ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONObject}},
			`{` + msgs + `,"toolConfig":{"toolChoice":{"tool":{"name":"json_tool_call_answer"}},"tools":[` + strings.ReplaceAll(open, `"json_tool_call"`, `"json_tool_call_answer"`) + `]}}`},
	} {
		if _, err := p.Complete(context.Background(), c.req); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got, want := canonicalValue(body), canonicalValue(mustJSON(json.RawMessage(c.want))); got != want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, want)
		}
	}
	// A schema whose root is no object cannot be a tool's input: refused, naming the field.
	arr := &providers.Request{Model: "amazon.nova-pro-v1:0", Messages: q,
		ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONSchema, Name: "list", Schema: json.RawMessage(`{"type":"array"}`)}}
	var ue *providers.UnsupportedError
	if err := providers.Check(p, arr.Model, arr); !errors.As(err, &ue) || ue.Field != "response_format.json_schema.schema" {
		t.Errorf("array schema: Check = %v", err)
	}
	if err := providers.Check(p, "amazon.nova-pro-v1:0", &providers.Request{Model: "amazon.nova-pro-v1:0", Messages: q, ResponseFormat: personFormat()}); err != nil {
		t.Errorf("object schema: Check = %v", err)
	}
}

// TestBedrockJSONModeAnswers: the output tool's input comes back as the answer's text with
// finish reason stop, whole and streamed (its input deltas as text deltas, never as tool
// calls); a call of the caller's own function next to it stays a tool call.
func TestBedrockJSONModeAnswers(t *testing.T) {
	whole := `{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"tooluse_1","name":"person","input":{"name":"Ada","age":36}}}]}},` +
		`"stopReason":"tool_use","usage":{"inputTokens":9,"outputTokens":7,"totalTokens":16}}`
	streamed := bedrockEvent("messageStart", `{"role":"assistant"}`) +
		bedrockEvent("contentBlockStart", `{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"tooluse_1","name":"person"}}}`) +
		bedrockEvent("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"name\":\"Ada\","}}}`) +
		bedrockEvent("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"toolUse":{"input":"\"age\":36}"}}}`) +
		bedrockEvent("contentBlockStop", `{"contentBlockIndex":0}`) +
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
	req := &providers.Request{Model: "anthropic.claude-3-5-sonnet-20240620-v1:0", Messages: []providers.Message{{Role: "user", Content: "Ada, 36"}}, ResponseFormat: personFormat()}
	resp, err := p.Complete(context.Background(), req)
	if err != nil || resp.Text != `{"name":"Ada","age":36}` || resp.FinishReason != "stop" || len(resp.ToolCalls) != 0 {
		t.Errorf("whole: %+v, %v", resp, err)
	}
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var text, finish string
	var calls int
	for {
		c, err := s.Recv()
		if err != nil {
			if err != io.EOF {
				t.Fatalf("stream: %v", err)
			}
			break
		}
		text += c.Text
		calls += len(c.ToolCalls)
		if c.FinishReason != "" {
			finish = c.FinishReason
		}
	}
	if text != `{"name":"Ada","age":36}` || finish != "stop" || calls != 0 {
		t.Errorf("streamed: text %q finish %q calls %d", text, finish, calls)
	}

	// The caller's function called next to the answer: a tool call, finish tool_calls.
	both := `{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"now","input":{}}},` +
		`{"toolUse":{"toolUseId":"t2","name":"person","input":{"name":"Ada","age":36}}}]}},"stopReason":"tool_use","usage":{"inputTokens":9,"outputTokens":7}}`
	srv2, _ := captureOnce(t, 200, both)
	req.Tools = []providers.Tool{{Name: "now"}}
	resp, err = newProvider(t, providers.FormatBedrock, srv2.URL, nil).Complete(context.Background(), req)
	if err != nil || resp.FinishReason != "tool_calls" || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "now" || resp.Text != `{"name":"Ada","age":36}` {
		t.Errorf("answer and a call: %+v, %v", resp, err)
	}
}

// TestBedrockJSONModeThroughTheGateway: an OpenAI-shaped request with response_format
// json_schema, routed to Claude on Bedrock, comes back as JSON text with finish reason
// stop, whole and streamed.
func TestBedrockJSONModeThroughTheGateway(t *testing.T) {
	var sawTool bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		sawTool = strings.Contains(string(b), `"toolChoice":{"tool":{"name":"person"}}`)
		if strings.HasSuffix(r.URL.Path, "/converse-stream") {
			w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
			io.WriteString(w, bedrockEvent("messageStart", `{"role":"assistant"}`)+
				bedrockEvent("contentBlockStart", `{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"tooluse_1","name":"person"}}}`)+
				bedrockEvent("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"name\":\"Ada\",\"age\":36}"}}}`)+
				bedrockEvent("contentBlockStop", `{"contentBlockIndex":0}`)+
				bedrockEvent("messageStop", `{"stopReason":"tool_use"}`)+
				bedrockEvent("metadata", `{"usage":{"inputTokens":9,"outputTokens":7,"totalTokens":16}}`))
			return
		}
		io.WriteString(w, `{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"tooluse_1","name":"person","input":{"name":"Ada","age":36}}}]}},`+
			`"stopReason":"tool_use","usage":{"inputTokens":9,"outputTokens":7,"totalTokens":16}}`)
	}))
	defer srv.Close()
	reg := providers.NewRegistry(providers.NewBedrock(providers.Config{Name: "bedrock", BaseURL: srv.URL, APIKey: "ABSKkey"}))
	g, err := completions.New(completions.Options{Providers: reg})
	if err != nil {
		t.Fatal(err)
	}
	for _, stream := range []bool{false, true} {
		req := &completions.Request{Models: []string{"bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0"}, Stream: stream, ResponseFormat: personFormat(),
			Messages: []completions.Message{{Role: "user", Content: []completions.ContentBlock{{Type: "text", Text: "Ada, 36"}}}}}
		var text, finish string
		if stream {
			s, err := g.Stream(context.Background(), completions.Scope{}, req)
			if err != nil {
				t.Fatal(err)
			}
			for {
				fr, e := s.Recv()
				if e != nil {
					if e != io.EOF {
						t.Fatal(e)
					}
					break
				}
				if fr.Type == completions.EventText {
					text += fr.Text
				}
			}
			if r := s.Response(); r != nil {
				finish = r.FinishReason
			}
			s.Close()
		} else {
			resp, err := g.Complete(context.Background(), completions.Scope{}, req)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range resp.Message.Content {
				text += c.Text
			}
			finish = resp.FinishReason
		}
		if !sawTool || text != `{"name":"Ada","age":36}` || finish != "stop" {
			t.Errorf("stream %v: forced tool sent %v, text %q, finish %q", stream, sawTool, text, finish)
		}
	}
}
