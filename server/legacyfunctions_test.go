package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// fakeToolCallUpstream is a scripted OpenAI-format upstream that keeps each request body
// and answers every request with two tool calls (weather, then time), whole or streamed.
type fakeToolCallUpstream struct {
	mu     sync.Mutex
	bodies []map[string]any
}

func (u *fakeToolCallUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	u.mu.Lock()
	u.bodies = append(u.bodies, body)
	u.mu.Unlock()
	model, _ := body["model"].(string)
	if stream, _ := body["stream"].(bool); !stream {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"`+model+`","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[`+
			`{"id":"call_a","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}},`+
			`{"id":"call_b","type":"function","function":{"name":"time","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, d := range []string{
		`{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"weather","arguments":""}}]}`,
		`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}`,
		`{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}`,
		`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"time","arguments":"{}"}}]}`,
	} {
		io.WriteString(w, `data: {"id":"c2","object":"chat.completion.chunk","model":"`+model+`","choices":[{"index":0,"delta":`+d+`,"finish_reason":null}]}`+"\n\n")
	}
	io.WriteString(w, `data: {"id":"c2","object":"chat.completion.chunk","model":"`+model+`","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}}`+"\n\n")
	io.WriteString(w, "data: [DONE]\n\n")
}

// toolCallServer is a server whose gateway's one provider "up" is a fakeToolCallUpstream.
func toolCallServer(t *testing.T) (*httptest.Server, *fakeToolCallUpstream) {
	return toolCallServerNamed(t, "up")
}

// toolCallServerNamed is toolCallServer with the provider named name ("openai" makes it
// OpenAI's own API to the adapter).
func toolCallServerNamed(t *testing.T, name string) (*httptest.Server, *fakeToolCallUpstream) {
	t.Helper()
	up := &fakeToolCallUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: name, BaseURL: ups.URL + "/v1", APIKey: "sk-up"}))
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: newTestStore(t), APIKeys: []string{testKey}}, Completions(g))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, up
}

// TestLegacyFunctionsAPI: a chat request in the legacy functions form (functions,
// function_call, an assistant function_call and a "function" message answering it) reaches
// the upstream as tools, tool_choice, tool_calls and a "tool" message with the same made-up
// id, and is answered in its own form — message.function_call with the first call only and
// finish_reason "function_call", streamed as delta.function_call — while a tools request is
// answered as before; bad legacy input is a 400 naming the field.
func TestLegacyFunctionsAPI(t *testing.T) {
	hs, up := toolCallServer(t)

	const legacy = `"functions":[{"name":"weather","description":"Forecast","parameters":{"type":"object","properties":{"city":{"type":"string"}}}},{"name":"time","parameters":{"type":"object"}}],
		"function_call":{"name":"weather"},
		"messages":[{"role":"user","content":"Weather in Rome?"},
			{"role":"assistant","content":null,"function_call":{"name":"weather","arguments":"{\"city\":\"Rome\"}"}},
			{"role":"function","name":"weather","content":"Sunny, 24C"},
			{"role":"user","content":"And Paris?"}]`

	resp, body := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"up/gpt-4o-mini",`+legacy+`}`)
	if resp.StatusCode != 200 {
		t.Fatalf("legacy functions: %d %s", resp.StatusCode, body)
	}
	var got struct {
		Choices []struct {
			Message struct {
				Content      *string         `json:"content"`
				ToolCalls    json.RawMessage `json:"tool_calls"`
				FunctionCall *struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function_call"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &got); err != nil || len(got.Choices) != 1 {
		t.Fatalf("answer %s: %v", body, err)
	}
	c := got.Choices[0]
	if fc := c.Message.FunctionCall; fc == nil || fc.Name != "weather" || fc.Arguments != `{"city":"Paris"}` {
		t.Errorf("message.function_call = %+v, want the first call (weather, Paris): %s", c.Message.FunctionCall, body)
	}
	if c.Message.ToolCalls != nil || c.FinishReason != "function_call" {
		t.Errorf("tool_calls %s, finish_reason %q: want none and function_call", c.Message.ToolCalls, c.FinishReason)
	}

	// What the upstream was sent: the tools API.
	up.mu.Lock()
	sent := up.bodies[len(up.bodies)-1]
	up.mu.Unlock()
	raw, _ := json.Marshal(sent)
	if _, ok := sent["functions"]; ok {
		t.Errorf("the upstream got the legacy functions: %s", raw)
	}
	tools, _ := sent["tools"].([]any)
	if len(tools) != 2 || !strings.Contains(string(raw), `"tool_choice":{"function":{"name":"weather"},"type":"function"}`) {
		t.Errorf("the upstream got tools %v and tool_choice %v, want the two functions and weather forced: %s", tools, sent["tool_choice"], raw)
	}
	msgs, _ := sent["messages"].([]any)
	if len(msgs) != 4 {
		t.Fatalf("the upstream got %d messages: %s", len(msgs), raw)
	}
	call, _ := json.Marshal(msgs[1])
	result, _ := json.Marshal(msgs[2])
	var callMsg struct {
		ToolCalls []struct {
			ID       string `json:"id"`
			Function struct{ Name, Arguments string }
		} `json:"tool_calls"`
	}
	var resultMsg struct {
		Role       string `json:"role"`
		ToolCallID string `json:"tool_call_id"`
	}
	json.Unmarshal(call, &callMsg)
	json.Unmarshal(result, &resultMsg)
	if len(callMsg.ToolCalls) != 1 || callMsg.ToolCalls[0].Function.Name != "weather" || callMsg.ToolCalls[0].ID == "" {
		t.Errorf("the assistant's function_call reached the upstream as %s", call)
	}
	if resultMsg.Role != "tool" || len(callMsg.ToolCalls) == 1 && resultMsg.ToolCallID != callMsg.ToolCalls[0].ID {
		t.Errorf("the function message reached the upstream as %s, want a tool message answering %s", result, call)
	}

	// Streamed: delta.function_call, the first call only, finish_reason function_call.
	resp, body = post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"up/gpt-4o-mini","stream":true,`+legacy+`}`)
	if resp.StatusCode != 200 {
		t.Fatalf("streamed legacy functions: %d %s", resp.StatusCode, body)
	}
	var name, args, finish string
	for _, line := range strings.Split(string(body), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		if strings.Contains(data, `"tool_calls"`) {
			t.Errorf("a legacy stream chunk carries tool_calls: %s", data)
		}
		var ck struct {
			Choices []struct {
				Delta struct {
					FunctionCall *struct{ Name, Arguments string } `json:"function_call"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &ck); err != nil {
			t.Fatalf("chunk %s: %v", data, err)
		}
		for _, ch := range ck.Choices {
			if fc := ch.Delta.FunctionCall; fc != nil {
				name += fc.Name
				args += fc.Arguments
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	if name != "weather" || args != `{"city":"Paris"}` || finish != "function_call" {
		t.Errorf("streamed function_call %q(%s), finish %q: want weather({\"city\":\"Paris\"}), function_call\n%s", name, args, finish, body)
	}

	// A tools request is answered with tool_calls as before.
	resp, body = post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"up/gpt-4o-mini","tools":[{"type":"function","function":{"name":"weather"}}],"messages":[{"role":"user","content":"x"}]}`)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"tool_calls"`) || strings.Contains(string(body), `"function_call"`) || !strings.Contains(string(body), `"finish_reason":"tool_calls"`) {
		t.Errorf("tools request: %d %s", resp.StatusCode, body)
	}

	for _, bad := range []struct{ body, param string }{
		{`"functions":[{"name":"f"}],"tools":[{"type":"function","function":{"name":"g"}}],"messages":[{"role":"user","content":"x"}]`, "functions"},
		{`"functions":[{"name":"bad name"}],"messages":[{"role":"user","content":"x"}]`, "functions[0].name"},
		{`"functions":[{"name":"f"}],"function_call":"sometimes","messages":[{"role":"user","content":"x"}]`, "function_call"},
		{`"function_call":{"name":"f"},"messages":[{"role":"user","content":"x"}]`, "function_call"},
		{`"functions":[{"name":"f"}],"function_call":{"name":"g"},"messages":[{"role":"user","content":"x"}]`, "function_call.name"},
		{`"messages":[{"role":"user","content":"x"},{"role":"function","content":"1"}]`, "messages[1].name"},
		{`"messages":[{"role":"user","content":"x","function_call":{"name":"f","arguments":"{}"}}]`, "messages[0].function_call"},
	} {
		resp, body := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"up/gpt-4o-mini",`+bad.body+`}`)
		if resp.StatusCode != 400 || !strings.Contains(string(body), `"param":"`+bad.param+`"`) {
			t.Errorf("%s: %d %s, want a 400 naming %s", bad.body, resp.StatusCode, body, bad.param)
		}
	}
}

// TestLegacyFunctionsOpenAIGo: the official Go SDK's deprecated functions parameters (as
// older agents built on it send them) round-trip: the answer's message.function_call and
// the stream's accumulated function_call are read by the SDK as OpenAI answers them.
func TestLegacyFunctionsOpenAIGo(t *testing.T) {
	hs, _ := toolCallServer(t)
	client := openai.NewClient(option.WithBaseURL(hs.URL+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{
		Model: "up/gpt-4o-mini",
		Functions: []openai.ChatCompletionNewParamsFunction{{Name: "weather",
			Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}},
		FunctionCall: openai.ChatCompletionNewParamsFunctionCallUnion{OfFunctionCallMode: openai.String("auto")},
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.UserMessage("Weather in Rome?"),
			{OfAssistant: &openai.ChatCompletionAssistantMessageParam{FunctionCall: openai.ChatCompletionAssistantMessageParamFunctionCall{Name: "weather", Arguments: `{"city":"Rome"}`}}},
			{OfFunction: &openai.ChatCompletionFunctionMessageParam{Name: "weather", Content: openai.String("Sunny")}},
			openai.UserMessage("And Paris?"),
		},
	}
	ctx := t.Context()
	c, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if fc := c.Choices[0].Message.FunctionCall; fc.Name != "weather" || fc.Arguments != `{"city":"Paris"}` || c.Choices[0].FinishReason != "function_call" {
		t.Errorf("SDK read function_call %+v, finish %q", fc, c.Choices[0].FinishReason)
	}
	stream := client.Chat.Completions.NewStreaming(ctx, params)
	var name, args string
	for stream.Next() {
		for _, ch := range stream.Current().Choices {
			name += ch.Delta.FunctionCall.Name
			args += ch.Delta.FunctionCall.Arguments
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if name != "weather" || args != `{"city":"Paris"}` {
		t.Errorf("SDK stream function_call %q(%s)", name, args)
	}
}

// lastBody is the last request body up received.
func (u *fakeToolCallUpstream) lastBody(t *testing.T) map[string]any {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.bodies) == 0 {
		t.Fatal("no request reached the upstream")
	}
	return u.bodies[len(u.bodies)-1]
}

// TestLegacyFunctionsAskOneCall: a request declaring legacy functions, answered with one
// function_call, asks OpenAI for one tool call (parallel_tool_calls false), whole and
// streamed, so no tokens go to calls the answer drops; the caller's own
// parallel_tool_calls wins; a tools request and an o-series model (which refuses the
// field) are sent none.
func TestLegacyFunctionsAskOneCall(t *testing.T) {
	hs, up := toolCallServerNamed(t, "openai")
	const functions = `"functions":[{"name":"weather","parameters":{"type":"object"}},{"name":"time"}],"messages":[{"role":"user","content":"Weather and time?"}]`
	for _, tc := range []struct {
		name, body string
		want       any // parallel_tool_calls the upstream got; nil for none
	}{
		{"legacy", `{"model":"openai/gpt-4o-mini",` + functions + `}`, false},
		{"legacy streamed", `{"model":"openai/gpt-4o-mini","stream":true,` + functions + `}`, false},
		{"legacy, the caller's true", `{"model":"openai/gpt-4o-mini","parallel_tool_calls":true,` + functions + `}`, true},
		{"legacy on o3-mini", `{"model":"openai/o3-mini",` + functions + `}`, nil},
		{"tools", `{"model":"openai/gpt-4o-mini","tools":[{"type":"function","function":{"name":"weather"}}],"messages":[{"role":"user","content":"x"}]}`, nil},
	} {
		resp, body := post(t, hs.URL+"/v1/chat/completions", testKey, tc.body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", tc.name, resp.StatusCode, body)
		}
		sent := up.lastBody(t)
		got, ok := sent["parallel_tool_calls"]
		if ok != (tc.want != nil) || ok && got != tc.want {
			t.Errorf("%s: the upstream got parallel_tool_calls %v (sent %v), want %v", tc.name, got, ok, tc.want)
		}
	}
}
