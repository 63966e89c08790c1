package completions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// The tool call the scripted upstreams make, and its arguments in the pieces they stream.
var (
	scriptedCallID = "call_weather_1"
	scriptedArgs   = []string{`{"loc`, `ation": "Par`, `is, Fr`, `ance", "unit"`, `: "celsius"}`}
)

// toolAnswer answers an OpenAI-format request with a call of get_weather: a
// chat.completion with message.tool_calls, or a stream whose first tool-call delta has the
// id, type and name and whose later deltas carry the argument pieces.
func toolAnswer() behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		args := strings.Join(scriptedArgs, "")
		usage := `{"prompt_tokens":40,"completion_tokens":12,"total_tokens":52}`
		if !body.Stream {
			a, _ := json.Marshal(args)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"chatcmpl-t","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,
				"tool_calls":[{"id":%q,"type":"function","function":{"name":"get_weather","arguments":%s}}]},"finish_reason":"tool_calls"}],"usage":%s}`,
				body.Model, scriptedCallID, a, usage)
			return
		}
		startStream(w)
		writeEvent(w, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":%q,"type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}`, scriptedCallID))
		for _, p := range scriptedArgs {
			a, _ := json.Marshal(p)
			writeEvent(w, fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":%s}}]},"finish_reason":null}]}`, a))
		}
		writeEvent(w, `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`)
		writeEvent(w, `{"choices":[],"usage":`+usage+`}`)
		writeEvent(w, "[DONE]")
	}
}

// anthropicUpstream is a fake Anthropic Messages server replaying a recorded stream for
// stream requests and a recorded body otherwise; it keeps the request bodies.
type anthropicUpstream struct {
	srv          *httptest.Server
	stream, json string
	mu           sync.Mutex
	bodies       []map[string]any
}

func newAnthropicUpstream(t *testing.T, streamFile, jsonFile string) *anthropicUpstream {
	read := func(name string) string {
		b, err := os.ReadFile("../providers/testdata/anthropic/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	a := &anthropicUpstream{stream: read(streamFile), json: read(jsonFile)}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		a.mu.Lock()
		a.bodies = append(a.bodies, body)
		a.mu.Unlock()
		if body["stream"] == true {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, a.stream)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, a.json)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *anthropicUpstream) last() map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bodies[len(a.bodies)-1]
}

// toolGateway is a gateway over the scripted OpenAI-format upstream ("up") and a fake
// Anthropic upstream ("claude"), with the test price list ("<p>/priced" is priced).
func toolGateway(t *testing.T, an *anthropicUpstream) (*Gateway, *scriptedUpstream) {
	up := newScriptedUpstream(t)
	reg := fakeRegistry{
		"up":     providers.NewOpenAI(providers.Config{Name: "up", BaseURL: up.srv.URL + "/v1", APIKey: "sk-test"}),
		"claude": providers.NewAnthropic(providers.Config{Name: "claude", BaseURL: an.srv.URL, APIKey: "sk-test"}),
	}
	g, err := New(Options{Providers: reg, Prices: fakePrices{}, DefaultMaxRetries: -1, Sleep: (&sleepRecorder{}).sleep})
	if err != nil {
		t.Fatal(err)
	}
	return g, up
}

// toolRequest is a chat-completions request with the get_weather tool, as an SDK sends it.
func toolRequest(t *testing.T, model string, extra string) *Request {
	t.Helper()
	body := `{"model":"` + model + `","messages":[{"role":"user","content":"Weather in Paris?"}],
		"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather","parameters":{"type":"object",
			"properties":{"location":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location"],"additionalProperties":false}}}],
		"tool_choice":"auto"` + extra + `}`
	var o OpenAIChatRequest
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		t.Fatal(err)
	}
	req, err := o.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// clientToolCalls reads an OpenAI chat.completion.chunk stream as an SDK does: it
// concatenates the content deltas and assembles tool calls from their indexed fragments.
func clientToolCalls(t *testing.T, sse string) (content string, calls []OpenAIToolCall, finish string, usage *OpenAIUsage) {
	t.Helper()
	evs := parseSSE(t, sse)
	if len(evs) == 0 || evs[len(evs)-1].data != "[DONE]" {
		t.Fatalf("stream without [DONE]: %s", sse)
	}
	for _, e := range evs[:len(evs)-1] {
		var raw map[string]any
		if err := json.Unmarshal([]byte(e.data), &raw); err != nil {
			t.Fatalf("chunk %s: %v", e.data, err)
		}
		var c OpenAIChunk
		if err := json.Unmarshal([]byte(e.data), &c); err != nil {
			t.Fatal(err)
		}
		for i, ch := range raw["choices"].([]any) {
			if lp, ok := ch.(map[string]any)["logprobs"]; !ok || lp != nil {
				t.Fatalf("choice without logprobs: null: %s", e.data)
			}
			d := c.Choices[i].Delta
			content += d.Content
			for _, tc := range d.ToolCalls {
				switch {
				case tc.Index == len(calls):
					if tc.ID == "" || tc.Type != "function" || tc.Function.Name == "" {
						t.Fatalf("first fragment of call %d lacks id, type or name: %s", tc.Index, e.data)
					}
					calls = append(calls, OpenAIToolCall{ID: tc.ID, Type: tc.Type, Function: OpenAIFunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
				case tc.Index < len(calls):
					if tc.ID != "" || tc.Function.Name != "" {
						t.Fatalf("later fragment repeats id or name: %s", e.data)
					}
					calls[tc.Index].Function.Arguments += tc.Function.Arguments
				default:
					t.Fatalf("fragment for call %d before call %d: %s", tc.Index, len(calls), e.data)
				}
			}
			if f := c.Choices[i].FinishReason; f != nil {
				finish = *f
			}
		}
		if c.Usage != nil {
			usage = c.Usage
		}
	}
	return content, calls, finish, usage
}

func TestToolCallsThroughTheGateway(t *testing.T) {
	an := newAnthropicUpstream(t, "py-tool_use_response.sse", "docs-tool_use_response.json")
	g, up := toolGateway(t, an)
	ctx := context.Background()
	wantArgs := strings.Join(scriptedArgs, "")

	t.Run("primary", func(t *testing.T) {
		up.on("priced", toolAnswer())
		resp, err := g.Complete(ctx, Scope{}, toolRequest(t, "up/priced", ""))
		if err != nil {
			t.Fatal(err)
		}
		cc := NewOpenAIChatCompletion(resp, time.Unix(1700000000, 0))
		b, _ := json.Marshal(cc)
		var got map[string]any
		_ = json.Unmarshal(b, &got)
		ch := got["choices"].([]any)[0].(map[string]any)
		msg := ch["message"].(map[string]any)
		if ch["finish_reason"] != "tool_calls" || msg["content"] != nil || msg["refusal"] != nil {
			t.Fatalf("choice = %s", b)
		}
		for _, k := range []string{"content", "refusal"} {
			if _, ok := msg[k]; !ok {
				t.Fatalf("message without %s: %s", k, b)
			}
		}
		if lp, ok := ch["logprobs"]; !ok || lp != nil {
			t.Fatalf("choice without logprobs: null: %s", b)
		}
		want := []OpenAIToolCall{{ID: scriptedCallID, Type: "function", Function: OpenAIFunctionCall{Name: "get_weather", Arguments: wantArgs}}}
		if fmt.Sprint(cc.Choices[0].Message.ToolCalls) != fmt.Sprint(want) {
			t.Fatalf("tool calls = %+v", cc.Choices[0].Message.ToolCalls)
		}
		// Usage and cost: 40 prompt and 12 completion tokens at 1 and 2 USD per million.
		if resp.Usage.TotalTokens != 52 || resp.Usage.Costs.TotalTokensCost != 40e-6+24e-6 || !resp.Usage.Costs.PriceKnown {
			t.Fatalf("usage = %+v", resp.Usage)
		}

		// Streamed, a client reassembles the same call from the fragments.
		st, err := g.Stream(ctx, Scope{}, toolRequest(t, "up/priced", ""))
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		if err := WriteOpenAIStream(rec, st, true); err != nil {
			t.Fatal(err)
		}
		content, calls, finish, usage := clientToolCalls(t, rec.Body.String())
		if content != "" || finish != "tool_calls" || fmt.Sprint(calls) != fmt.Sprint(want) {
			t.Fatalf("streamed: content %q finish %q calls %+v\n%s", content, finish, calls, rec.Body.String())
		}
		if n := strings.Count(rec.Body.String(), `"tool_calls":[`); n != 1+len(scriptedArgs) {
			t.Errorf("%d tool-call fragments relayed, want %d", n, 1+len(scriptedArgs))
		}
		if usage == nil || usage.TotalTokens != 52 {
			t.Fatalf("stream usage = %+v", usage)
		}
		final := st.Response()
		if final.FinishReason != "tool_calls" || len(final.ToolCalls) != 1 || final.ToolCalls[0].Arguments != wantArgs || final.Usage.Costs.TotalTokensCost != 64e-6 {
			t.Fatalf("final = %+v", final)
		}
	})

	// The primary fails; the fallback, another provider with another wire format, answers
	// with a tool call that is relayed like text, ids and all.
	t.Run("fallback", func(t *testing.T) {
		up.on("primary", status(500, "server_error", "boom"))
		req := toolRequest(t, "up/primary", `,"fallback_models":["claude/claude-sonnet-4-5"]`)
		resp, err := g.Complete(ctx, Scope{}, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Attempts) != 2 || resp.Attempts[0].Outcome != OutcomeError || resp.Provider != "claude" {
			t.Fatalf("attempts %+v provider %s", resp.Attempts, resp.Provider)
		}
		if resp.FinishReason != "tool_calls" || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ID != "toolu_01A09q90qw90lq917835lq9" ||
			resp.ToolCalls[0].Arguments != `{"location": "San Francisco, CA", "unit": "celsius"}` {
			t.Fatalf("response = %+v", resp)
		}
		if resp.Usage.PromptTokens != 384 || resp.Usage.CompletionTokens != 92 {
			t.Fatalf("usage = %+v", resp.Usage)
		}
		// The tool reached Anthropic in its own shape.
		if tools := jsonString(an.last()["tools"]); !strings.Contains(tools, `"input_schema":{"additionalProperties":false`) {
			t.Fatalf("tools sent to Anthropic: %s", tools)
		}

		st, err := g.Stream(ctx, Scope{}, toolRequest(t, "up/primary", `,"fallback_models":["claude/claude-sonnet-4-5"]`))
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		if err := WriteOpenAIStream(rec, st, false); err != nil {
			t.Fatal(err)
		}
		content, calls, finish, _ := clientToolCalls(t, rec.Body.String())
		if content != "I'll check the current weather in Paris for you." || finish != "tool_calls" || len(calls) != 1 ||
			calls[0].ID != "toolu_01NRLabsLyVHZPKxbKvkfSMn" || calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"location": "Paris"}` {
			t.Fatalf("streamed fallback: %q %q %+v\n%s", content, finish, calls, rec.Body.String())
		}
		if fr := st.Response(); len(fr.Attempts) != 2 || fr.Usage.PromptTokens != 377 || fr.Usage.CompletionTokens != 65 {
			t.Fatalf("final = %+v", fr)
		}
	})

	// The second step of the loop: the assistant's call and the tool's result go back.
	t.Run("tool result", func(t *testing.T) {
		up.on("priced", answer("It is 18 degrees in Paris."))
		body := `{"model":"up/priced","messages":[{"role":"user","content":"Weather in Paris?"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"call_weather_1","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris\"}"}}]},
			{"role":"tool","tool_call_id":"call_weather_1","content":"18 degrees"}],
			"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"location":{"type":"string"}}}}}]}`
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(body), &o); err != nil {
			t.Fatal(err)
		}
		req, err := o.ToRequest()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := g.Complete(ctx, Scope{}, req)
		if err != nil {
			t.Fatal(err)
		}
		cc := NewOpenAIChatCompletion(resp, time.Now())
		if c := cc.Choices[0].Message.Content; c == nil || *c != "It is 18 degrees in Paris." || cc.Choices[0].FinishReason != "stop" {
			t.Fatalf("answer = %+v", cc.Choices[0])
		}
	})
}

// Structured output on Anthropic: the forced tool's input comes back as the message
// content with finish_reason stop, streamed or not, never as a tool call.
func TestStructuredOutputThroughTheGateway(t *testing.T) {
	an := newAnthropicUpstream(t, "docs-json_tool_stream.sse", "docs-json_tool_response.json")
	g, _ := toolGateway(t, an)
	body := `{"model":"claude/claude-sonnet-4-5","messages":[{"role":"user","content":"Describe the image."}],
		"response_format":{"type":"json_schema","json_schema":{"name":"record_summary","strict":true,"schema":{"type":"object",
			"properties":{"description":{"type":"string"},"estimated_year":{"type":"integer"}},"required":["description"],"additionalProperties":false}}}}`
	var o OpenAIChatRequest
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		t.Fatal(err)
	}
	req, err := o.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := g.Complete(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	cc := NewOpenAIChatCompletion(resp, time.Now())
	m := cc.Choices[0].Message
	if m.Content == nil || !json.Valid([]byte(*m.Content)) || !strings.Contains(*m.Content, "coastline") || len(m.ToolCalls) != 0 || cc.Choices[0].FinishReason != "stop" {
		t.Fatalf("answer = %+v", cc.Choices[0])
	}
	if tc := jsonString(an.last()["tool_choice"]); tc != `{"name":"record_summary","type":"tool"}` {
		t.Fatalf("tool_choice = %s", tc)
	}

	st, err := g.Stream(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := WriteOpenAIStream(rec, st, false); err != nil {
		t.Fatal(err)
	}
	content, calls, finish, _ := clientToolCalls(t, rec.Body.String())
	if content != `{"description": "A coastline at dusk.", "estimated_year": 2019}` || len(calls) != 0 || finish != "stop" {
		t.Fatalf("streamed: %q %+v %q", content, calls, finish)
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Invalid tools, schemas, tool choices and tool messages are validation errors naming the
// field, found before any upstream call.
func TestToolValidation(t *testing.T) {
	an := newAnthropicUpstream(t, "docs-json_tool_stream.sse", "docs-json_tool_response.json")
	g, up := toolGateway(t, an)
	user := `{"role":"user","content":"x"}`
	tool := func(params string) string {
		return `"tools":[{"type":"function","function":{"name":"f","parameters":` + params + `}}]`
	}
	cases := []struct{ body, field string }{
		{`{"model":"up/m","messages":[` + user + `],` + tool(`{"type":"objekt"}`) + `}`, "tools[0].function.parameters"},
		{`{"model":"up/m","messages":[` + user + `],` + tool(`{"type":"object","properties":{"a":{"minLength":"three"}}}`) + `}`, "tools[0].function.parameters"},
		{`{"model":"up/m","messages":[` + user + `],` + tool(`{"type":"string"}`) + `}`, "tools[0].function.parameters"},
		{`{"model":"up/m","messages":[` + user + `],` + tool(`{"$ref":"file:///etc/passwd"}`) + `}`, "tools[0].function.parameters"},
		{`{"model":"up/m","messages":[` + user + `],` + tool(`[1,2]`) + `}`, "tools[0].function.parameters"},
		{`{"model":"up/m","messages":[` + user + `],"tools":[{"type":"function","function":{"name":"has space"}}]}`, "tools[0].function.name"},
		{`{"model":"up/m","messages":[` + user + `],"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"f"}}]}`, "tools[1].function.name"},
		{`{"model":"up/m","messages":[` + user + `],` + tool(`{"type":"object"}`) + `,"tool_choice":{"type":"function","function":{"name":"g"}}}`, "tool_choice.function.name"},
		{`{"model":"up/m","messages":[` + user + `],"tool_choice":"required"}`, "tool_choice"},
		{`{"model":"up/m","messages":[` + user + `],"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"object","required":"a"}}}}`, "response_format.json_schema.schema"},
		{`{"model":"up/m","messages":[` + user + `],"response_format":{"type":"json_schema","json_schema":{"name":"","schema":{}}}}`, "response_format.json_schema.name"},
		{`{"model":"up/m","messages":[` + user + `,{"role":"tool","tool_call_id":"nope","content":"r"}]}`, "messages[1].tool_call_id"},
		{`{"model":"up/m","messages":[` + user + `,{"role":"tool","content":"r"}]}`, "messages[1].tool_call_id"},
		{`{"model":"up/m","messages":[{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, "messages[0].tool_calls[0].id"},
		// A schema Anthropic cannot take as a tool input (its root is an array), when no
		// other model could take it either.
		{`{"model":"claude/c","messages":[` + user + `],"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"array"}}}}`, "response_format.json_schema.schema"},
	}
	for _, c := range cases {
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(c.body), &o); err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		req, err := o.ToRequest()
		if err == nil {
			_, err = g.Complete(context.Background(), Scope{}, req)
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s:\nerr = %v, want a validation error for %s", c.body, err, c.field)
		}
	}
	if n := up.callCount("m"); n != 0 {
		t.Fatalf("%d upstream calls for invalid requests", n)
	}
	// With a model that can take it, the one that cannot is skipped, and says why.
	var o OpenAIChatRequest
	json.Unmarshal([]byte(`{"model":"claude/c","fallback_models":["up/m"],"messages":[`+user+`],"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"array"}}}}`), &o)
	req, err := o.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	up.on("m", answer(`[1]`))
	resp, err := g.Complete(context.Background(), Scope{}, req)
	if err != nil || resp.Model != "m" || resp.Attempts[0].Outcome != OutcomeSkipped || !strings.Contains(resp.Attempts[0].Error, "response_format") && !strings.Contains(resp.Attempts[0].Error, "object") {
		t.Fatalf("claude/c then up/m: %+v, %v", resp, err)
	}
	// The same schema is fine for OpenAI, and an empty-schema json_schema too.
	up.on("m", answer(`[1]`))
	for _, rf := range []string{`{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"array"}}}`, `{"type":"json_object"}`, `{"type":"json_schema","json_schema":{"name":"s"}}`} {
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(`{"model":"up/m","messages":[`+user+`],"response_format":`+rf+`}`), &o); err != nil {
			t.Fatal(err)
		}
		req, err := o.ToRequest()
		if err == nil {
			_, err = g.Complete(context.Background(), Scope{}, req)
		}
		if err != nil {
			t.Errorf("%s: %v", rf, err)
		}
	}
}

// refusalAnswer declines in OpenAI's structured-output way: message.refusal (content null),
// or streamed delta.refusal pieces.
func refusalAnswer() behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		usage := `{"prompt_tokens":20,"completion_tokens":9,"total_tokens":29}`
		if !body.Stream {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}],"usage":`+usage+`}`)
			return
		}
		startStream(w)
		writeEvent(w, `{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":""},"finish_reason":null}]}`)
		for _, p := range []string{"I can't", " help with", " that."} {
			a, _ := json.Marshal(p)
			writeEvent(w, `{"choices":[{"index":0,"delta":{"refusal":`+string(a)+`},"finish_reason":null}]}`)
		}
		writeEvent(w, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		writeEvent(w, `{"choices":[],"usage":`+usage+`}`)
		writeEvent(w, "[DONE]")
	}
}

// A refusal is message.refusal with content null, streamed or not.
func TestRefusalThroughTheGateway(t *testing.T) {
	an := newAnthropicUpstream(t, "docs-json_tool_stream.sse", "docs-json_tool_response.json")
	g, up := toolGateway(t, an)
	up.on("m", refusalAnswer())
	req := func() *Request {
		var o OpenAIChatRequest
		if err := json.Unmarshal([]byte(`{"model":"up/m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_object"}}`), &o); err != nil {
			t.Fatal(err)
		}
		r, err := o.ToRequest()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	resp, err := g.Complete(context.Background(), Scope{}, req())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(NewOpenAIChatCompletion(resp, time.Now()))
	if !strings.Contains(string(b), `"message":{"role":"assistant","content":null,"refusal":"I can't help with that."}`) {
		t.Fatalf("completion = %s", b)
	}
	st, err := g.Stream(context.Background(), Scope{}, req())
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := WriteOpenAIStream(rec, st, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rec.Body.String(), `"delta":{"role":"assistant","refusal":"I can't help with that."}`) || st.Response().Refusal != "I can't help with that." {
		t.Fatalf("stream = %s", rec.Body.String())
	}
}
