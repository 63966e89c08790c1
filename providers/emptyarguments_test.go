package providers_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestEmptyArgumentsBecomeObject: an OpenAI-compatible server that sends a call of a
// function without parameters with arguments "" (rather than OpenAI's "{}") — whole, or
// streamed with no argument fragment, beside a call that has arguments — gives callers
// "{}", which the SDKs' helpers parse; a call with arguments keeps them as sent.
func TestEmptyArgumentsBecomeObject(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[
				{"id":"call_a","type":"function","function":{"name":"now","arguments":""}},
				{"id":"call_b","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}],
				"usage":{"prompt_tokens":5,"completion_tokens":5,"total_tokens":10}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"now","arguments":""}}]},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"weather","arguments":"{\"city\":"}}]},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"Paris\"}"}}]},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", ev)
		}
	}))
	t.Cleanup(srv.Close)
	p := providers.NewOpenAI(providers.Config{Name: "local", BaseURL: srv.URL + "/v1", APIKey: "k"})
	req := &providers.Request{Model: "qwen3", Messages: []providers.Message{{Role: "user", Content: "Time and weather?"}},
		Tools: []providers.Tool{{Name: "now"}, {Name: "weather"}}}
	ctx := context.Background()

	resp, err := p.Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[0].Arguments != "{}" || resp.ToolCalls[1].Arguments != `{"city":"Paris"}` {
		t.Errorf("calls %+v", resp.ToolCalls)
	}

	st, err := p.Stream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	args := map[int]string{}
	var finish string
	for {
		c, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if finish != "" && len(c.ToolCalls) > 0 {
			t.Errorf("a call fragment after the finish reason: %+v", c.ToolCalls)
		}
		for _, d := range c.ToolCalls {
			args[d.Index] += d.Arguments
		}
		finish += c.FinishReason
	}
	if args[0] != "{}" || args[1] != `{"city":"Paris"}` || finish != "tool_calls" {
		t.Errorf("streamed arguments %v, finish %q", args, finish)
	}
}
