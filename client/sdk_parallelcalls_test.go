package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/responses"
)

// parallelCallsWant are the two calls newParallelCallsUpstream's model makes.
var parallelCallsWant = []struct{ id, name, args string }{
	{"call_w", "get_weather", `{"city": "Paris"}`},
	{"call_t", "get_time", `{"tz": "Europe/Paris"}`},
}

// newParallelCallsUpstream is a scripted OpenAI chat-completions upstream whose streamed
// answer makes the two parallel calls of parallelCallsWant as some upstreams send them:
// both headers first, then the argument fragments of the two calls interleaved (one chunk
// carrying a fragment of each).
func newParallelCallsUpstream(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(calls ...string) {
			fmt.Fprintf(w, "data: %s\n\n", `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[`+strings.Join(calls, ",")+`]},"finish_reason":null}]}`)
		}
		header := func(i int) string {
			c := parallelCallsWant[i]
			return fmt.Sprintf(`{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":""}}`, i, c.id, c.name)
		}
		arg := func(i int, piece string) string {
			a, _ := json.Marshal(piece)
			return fmt.Sprintf(`{"index":%d,"function":{"arguments":%s}}`, i, a)
		}
		chunk(header(0))
		chunk(header(1))
		chunk(arg(0, `{"ci`))
		chunk(arg(1, `{"tz"`))
		chunk(arg(0, `ty": "Pa`), arg(1, `: "Europe/`))
		chunk(arg(1, `Paris"}`))
		chunk(arg(0, `ris"}`))
		fmt.Fprintf(w, "data: %s\n\ndata: %s\n\ndata: [DONE]\n\n", `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":30,"completion_tokens":20,"total_tokens":50}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// checkCallsInTurn checks that events (type and output index, in order) send each call
// whole before the next one starts, as OpenAI does: output_item.added, argument deltas,
// function_call_arguments.done, output_item.done.
func checkCallsInTurn(t *testing.T, events [][2]any) {
	t.Helper()
	var got []string
	for _, e := range events {
		if typ := e[0].(string); strings.HasPrefix(typ, "response.output_item.") || strings.HasPrefix(typ, "response.function_call_arguments.") {
			if len(got) > 0 && strings.HasPrefix(got[len(got)-1], typ+"@") {
				continue // consecutive deltas of one call
			}
			got = append(got, fmt.Sprintf("%s@%v", typ, e[1]))
		}
	}
	var want []string
	for i := range 2 {
		for _, typ := range []string{"output_item.added", "function_call_arguments.delta", "function_call_arguments.done", "output_item.done"} {
			want = append(want, fmt.Sprintf("response.%s@%d", typ, i))
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("item events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestParallelCallsStreamThroughTheGoSDK: two parallel calls, interleaved by the upstream,
// streamed on /v1/responses to the official openai-go: each call comes whole before the
// next, and the arguments accumulated from the deltas, the .done events and
// response.completed agree.
func TestParallelCallsStreamThroughTheGoSDK(t *testing.T) {
	up := newParallelCallsUpstream(t)
	_, base := realServerURL(t, envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.URL}))
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	params := responses.ResponseNewParams{
		Model:             "openai/gpt-4o-mini",
		ParallelToolCalls: openai.Bool(true),
		Tools: []responses.ToolUnionParam{responses.ToolParamOfFunction("get_weather", map[string]any{"type": "object"}, false),
			responses.ToolParamOfFunction("get_time", map[string]any{"type": "object"}, false)},
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather and time in Paris?")},
	}
	stream := c.Responses.NewStreaming(context.Background(), params)
	var events [][2]any
	var acc []responses.ResponseOutputItemUnion // as the deltas build it
	argsDone := map[int64]string{}
	var completed responses.Response
	for stream.Next() {
		ev := stream.Current()
		events = append(events, [2]any{ev.Type, ev.OutputIndex})
		switch ev.Type {
		case "response.output_item.added":
			if int(ev.OutputIndex) != len(acc) {
				t.Fatalf("output_item.added at %d, want %d", ev.OutputIndex, len(acc))
			}
			acc = append(acc, ev.AsResponseOutputItemAdded().Item)
		case "response.function_call_arguments.delta":
			acc[ev.OutputIndex].Arguments += ev.AsResponseFunctionCallArgumentsDelta().Delta
		case "response.function_call_arguments.done":
			argsDone[ev.OutputIndex] = ev.AsResponseFunctionCallArgumentsDone().Arguments
		case "response.completed":
			completed = ev.AsResponseCompleted().Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	checkCallsInTurn(t, events)
	if len(acc) != 2 || len(completed.Output) != 2 {
		t.Fatalf("accumulated %+v, completed %+v", acc, completed.Output)
	}
	for k, w := range parallelCallsWant {
		fc := completed.Output[k].AsFunctionCall()
		if fc.CallID != w.id || fc.Name != w.name || fc.Arguments != w.args || fc.Status != "completed" {
			t.Errorf("response.completed call %d: %+v", k, fc)
		}
		if acc[k].CallID != w.id || acc[k].Arguments != w.args || argsDone[int64(k)] != w.args {
			t.Errorf("call %d: from the deltas %q, done %q, want %q", k, acc[k].Arguments, argsDone[int64(k)], w.args)
		}
	}
}

// TestParallelCallsStreamThroughTheNodeSDK is TestParallelCallsStreamThroughTheGoSDK with
// the official Node SDK's responses.stream() helper
// (testdata/openai_parallel_calls_check.mjs). Skips, saying why, without node and npm.
func TestParallelCallsStreamThroughTheNodeSDK(t *testing.T) {
	run := nodeSDK(t)
	up := newParallelCallsUpstream(t)
	_, base := realServerURL(t, envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.URL}))
	out := run("testdata/openai_parallel_calls_check.mjs", base)
	var got struct {
		Events    [][2]any          `json:"events"`
		Snapshots map[string]string `json:"snapshots"`
		Done      map[string]string `json:"done"`
		Calls     []map[string]any  `json:"calls"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	for i := range got.Events {
		if f, ok := got.Events[i][1].(float64); ok {
			got.Events[i][1] = int64(f)
		}
	}
	checkCallsInTurn(t, got.Events)
	if len(got.Calls) != 2 {
		t.Fatalf("finalResponse output %v", got.Calls)
	}
	for k, w := range parallelCallsWant {
		c, i := got.Calls[k], fmt.Sprint(k)
		if c["type"] != "function_call" || c["call_id"] != w.id || c["name"] != w.name || c["arguments"] != w.args || c["status"] != "completed" {
			t.Errorf("finalResponse call %d: %v", k, c)
		}
		if got.Snapshots[i] != w.args || got.Done[i] != w.args {
			t.Errorf("call %d: accumulated by the helper %q, done %q, want %q", k, got.Snapshots[i], got.Done[i], w.args)
		}
	}
}
