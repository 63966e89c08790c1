package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
)

// toolUpstream is a fake OpenAI-compatible LLM for a tool loop: until the conversation
// holds a tool result it calls get_weather (streamed as an id/name fragment and argument
// pieces); then it answers with text built from the result. It keeps the requests.
type toolUpstream struct {
	srv      *httptest.Server
	mu       sync.Mutex
	requests []map[string]any
}

func newToolUpstream(t *testing.T) *toolUpstream {
	u := &toolUpstream{}
	embeddings := newEmbeddingsUpstream(t)
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/embeddings") {
			embeddings.Config.Handler.ServeHTTP(w, r)
			return
		}
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		u.mu.Lock()
		u.requests = append(u.requests, req)
		u.mu.Unlock()
		msgs := req["messages"].([]any)
		last := msgs[len(msgs)-1].(map[string]any)
		stream, _ := req["stream"].(bool)
		usage := `{"prompt_tokens":30,"completion_tokens":10,"total_tokens":40}`
		args := []string{`{"city":`, ` "Paris"`, `}`}
		if !stream {
			w.Header().Set("Content-Type", "application/json")
			if last["role"] == "tool" {
				fmt.Fprintf(w, `{"id":"c2","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"It is %s in Paris."},"finish_reason":"stop"}],"usage":%s}`, last["content"], usage)
				return
			}
			a, _ := json.Marshal(strings.Join(args, ""))
			fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":%s}}]},"finish_reason":"tool_calls"}],"usage":%s}`, a, usage)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", `{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}`)
		for _, p := range args {
			a, _ := json.Marshal(p)
			fmt.Fprintf(w, "data: %s\n\n", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":`+string(a)+`}}]},"finish_reason":null}]}`)
		}
		fmt.Fprintf(w, "data: %s\n\ndata: %s\n\ndata: [DONE]\n\n", `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, `{"choices":[],"usage":`+usage+`}`)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *toolUpstream) last() map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.requests[len(u.requests)-1]
}

func (u *toolUpstream) options(t *testing.T) func(st *store.Store, _ string) []server.Option {
	return envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": u.srv.URL})
}

// envGateway is a server's options with a gateway over the providers env configures (a
// scripted upstream's base URL and a key).
func envGateway(t *testing.T, env map[string]string) func(st *store.Store, _ string) []server.Option {
	return envGatewayWith(t, env, nil)
}

// envGatewayWith is envGateway with tweak applied to the gateway's options (nil: none).
func envGatewayWith(t *testing.T, env map[string]string, tweak func(*completions.Options)) func(st *store.Store, _ string) []server.Option {
	return func(st *store.Store, _ string) []server.Option {
		reg := providers.FromEnv(func(k string) string { return env[k] }, providers.Options{})
		o := completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st}
		if tweak != nil {
			tweak(&o)
		}
		g, err := completions.New(o)
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.Completions(g)}
	}
}

// TestChatToolLoopAgainstServer runs a two-step tool loop through the server's
// /v1/chat/completions with the Go client: the model calls get_weather, the tool's result
// goes back, the model answers. Streamed, the assembled calls equal the whole answer's.
func TestChatToolLoopAgainstServer(t *testing.T) {
	up := newToolUpstream(t)
	c, _ := realServer(t, up.options(t))
	ctx := context.Background()
	weather := client.FunctionTool("get_weather", "Current weather of a city",
		json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`))
	req := &client.ChatCompletionRequest{Model: "openai/gpt-4o-mini", Tools: []client.ChatTool{weather},
		Messages: []client.ChatCompletionMessage{{Role: "user", Content: "Weather in Paris?"}}}

	res, err := c.ChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	want := []client.ChatToolCall{{ID: "call_1", Type: "function", Function: client.ChatFunctionCall{Name: "get_weather", Arguments: `{"city": "Paris"}`}}}
	m := res.Choices[0].Message
	if res.Choices[0].FinishReason != "tool_calls" || m.Content != "" || !reflect.DeepEqual(m.ToolCalls, want) {
		t.Fatalf("first answer %+v", res.Choices[0])
	}
	if tools := fmt.Sprint(up.last()["tools"]); !strings.Contains(tools, "get_weather") {
		t.Fatalf("tools did not reach the upstream: %s", tools)
	}

	st, err := c.ChatCompletionStream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	finish := ""
	for ck, err := range st.Chunks() {
		if err != nil {
			t.Fatal(err)
		}
		if len(ck.Choices) > 0 && ck.Choices[0].FinishReason != nil {
			finish = *ck.Choices[0].FinishReason
		}
	}
	if finish != "tool_calls" || !reflect.DeepEqual(st.ToolCalls(), want) {
		t.Fatalf("streamed: finish %q calls %+v", finish, st.ToolCalls())
	}

	req.Messages = append(req.Messages, m.Param())
	for _, call := range m.ToolCalls {
		req.Messages = append(req.Messages, client.ToolResult(call.ID, "18°C"))
	}
	res, err = c.ChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "It is 18°C in Paris." || res.Choices[0].FinishReason != "stop" {
		t.Fatalf("second answer %+v", res.Choices[0])
	}
	msgs, _ := json.Marshal(up.last()["messages"])
	if !strings.Contains(string(msgs), `"tool_calls":[{"function":{"arguments":"{\"city\": \"Paris\"}","name":"get_weather"},"id":"call_1","type":"function"}]`) ||
		!strings.Contains(string(msgs), `{"content":"18°C","role":"tool","tool_call_id":"call_1"}`) {
		t.Fatalf("upstream got messages %s", msgs)
	}
}

// The request's tool and response-format fields have OpenAI's shapes.
func TestChatToolRequestShapes(t *testing.T) {
	f := false
	req := client.ChatCompletionRequest{Model: "m", ToolChoice: client.ForceFunction("get_weather"), ParallelToolCalls: &f,
		ResponseFormat: client.JSONSchemaFormat("answer", json.RawMessage(`{"type":"object"}`))}
	b, _ := json.Marshal(req)
	for _, want := range []string{`"tool_choice":{"type":"function","function":{"name":"get_weather"}}`, `"parallel_tool_calls":false`,
		`"response_format":{"type":"json_schema","json_schema":{"name":"answer","schema":{"type":"object"}}}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	for _, in := range []string{`"required"`, `{"type":"function","function":{"name":"f"}}`} {
		var c client.ChatToolChoice
		if err := json.Unmarshal([]byte(in), &c); err != nil {
			t.Fatal(err)
		}
		out, _ := json.Marshal(c)
		if string(out) != in {
			t.Errorf("tool_choice %s round-trips to %s", in, out)
		}
	}
}
