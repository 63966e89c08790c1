package client_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
)

// responsesCall posts body to /v1/responses of the server behind c's base URL.
func responsesCall(t *testing.T, base, key, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), "POST", base+"/v1/responses", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		sb.WriteString(sc.Text())
		sb.WriteByte('\n')
	}
	return resp, []byte(sb.String())
}

type sseEvent struct {
	name string
	data map[string]any
}

func parseEvents(t *testing.T, b []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	var name string
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err != nil {
				t.Fatalf("event data %q: %v", line, err)
			}
			if m["type"] != name {
				t.Fatalf("event %q carries type %v", name, m["type"])
			}
			out = append(out, sseEvent{name, m})
		}
	}
	return out
}

// TestResponsesToolLoopAgainstServer runs the two-step tool loop of
// TestChatToolLoopAgainstServer through POST /v1/responses: the function call comes back as
// a function_call output item (whole and as typed stream events), and the call and its
// output sent back as input items reach the upstream as the assistant's tool call and a
// tool message, after which the model answers with text.
func TestResponsesToolLoopAgainstServer(t *testing.T) {
	up := newToolUpstream(t)
	_, base := realServerURL(t, up.options(t))
	tools := `[{"type":"function","name":"get_weather","description":"Current weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]`
	first := `{"model":"openai/gpt-4o-mini","instructions":"Be brief.","input":"Weather in Paris?","tools":` + tools + `}`

	resp, b := responsesCall(t, base, testKey, first)
	var o map[string]any
	if err := json.Unmarshal(b, &o); err != nil || resp.StatusCode != 200 {
		t.Fatalf("first: %d %s", resp.StatusCode, b)
	}
	out := o["output"].([]any)
	fc := out[len(out)-1].(map[string]any)
	if o["object"] != "response" || o["status"] != "completed" || !strings.HasPrefix(o["id"].(string), "resp_") ||
		fc["type"] != "function_call" || fc["call_id"] != "call_1" || fc["name"] != "get_weather" || fc["arguments"] != `{"city": "Paris"}` {
		t.Fatalf("first response %s", b)
	}
	if u := o["usage"].(map[string]any); u["input_tokens"].(float64) != 30 || u["output_tokens"].(float64) != 10 || u["total_tokens"].(float64) != 40 {
		t.Fatalf("usage %v", u)
	}
	msgs, _ := json.Marshal(up.last()["messages"])
	if !strings.Contains(string(msgs), `{"content":"Be brief.","role":"system"}`) || !strings.Contains(string(msgs), `{"content":"Weather in Paris?","role":"user"}`) {
		t.Fatalf("upstream got %s", msgs)
	}

	// Streamed: typed events in order, sequence numbers increasing, arguments in pieces.
	resp, b = responsesCall(t, base, testKey, strings.Replace(first, `"input"`, `"stream":true,"input"`, 1))
	evs := parseEvents(t, b)
	var names []string
	var args strings.Builder
	for i, e := range evs {
		names = append(names, e.name)
		if int(e.data["sequence_number"].(float64)) != i {
			t.Fatalf("event %d has sequence_number %v", i, e.data["sequence_number"])
		}
		if e.name == "response.function_call_arguments.delta" {
			args.WriteString(e.data["delta"].(string))
		}
	}
	want := "response.created,response.in_progress,response.output_item.added,response.function_call_arguments.delta,response.function_call_arguments.delta,response.function_call_arguments.delta,response.function_call_arguments.done,response.output_item.done,response.completed"
	if resp.StatusCode != 200 || strings.Join(names, ",") != want || args.String() != `{"city": "Paris"}` {
		t.Fatalf("stream events %v (args %q)", names, args.String())
	}
	final := evs[len(evs)-1].data["response"].(map[string]any)
	item := final["output"].([]any)[0].(map[string]any)
	if final["status"] != "completed" || item["call_id"] != "call_1" || item["arguments"] != `{"city": "Paris"}` || final["usage"] == nil {
		t.Fatalf("completed response %v", final)
	}

	// Step two: the call and its output go back as input items.
	second := `{"model":"openai/gpt-4o-mini","tools":` + tools + `,"input":[
		{"role":"user","content":"Weather in Paris?"},
		{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\": \"Paris\"}"},
		{"type":"function_call_output","call_id":"call_1","output":"18°C"}]}`
	resp, b = responsesCall(t, base, testKey, second)
	o = nil
	if err := json.Unmarshal(b, &o); err != nil || resp.StatusCode != 200 {
		t.Fatalf("second: %d %s", resp.StatusCode, b)
	}
	msg := o["output"].([]any)[0].(map[string]any)
	part := msg["content"].([]any)[0].(map[string]any)
	if msg["type"] != "message" || msg["role"] != "assistant" || part["type"] != "output_text" || part["text"] != "It is 18°C in Paris." {
		t.Fatalf("second response %s", b)
	}
	msgs, _ = json.Marshal(up.last()["messages"])
	if !strings.Contains(string(msgs), `"tool_calls":[{"function":{"arguments":"{\"city\": \"Paris\"}","name":"get_weather"},"id":"call_1","type":"function"}]`) ||
		!strings.Contains(string(msgs), `{"content":"18°C","role":"tool","tool_call_id":"call_1"}`) {
		t.Fatalf("upstream got messages %s", msgs)
	}

	// What the gateway does not do is refused, naming the field (web_search, which the
	// model may do without, is left out instead: TestResponsesCodexTools).
	for field, body := range map[string]string{
		"conversation":  `{"model":"openai/gpt-4o-mini","input":"hi","conversation":"conv_1"}`,
		"tools[0].type": `{"model":"openai/gpt-4o-mini","input":"hi","tools":[{"type":"file_search","vector_store_ids":["vs_1"]}]}`,
		"input[0].type": `{"model":"openai/gpt-4o-mini","input":[{"type":"input_image","image_url":"x"}]}`,
	} {
		resp, b := responsesCall(t, base, testKey, body)
		if resp.StatusCode != 400 || !strings.Contains(string(b), field) {
			t.Errorf("%s: %d %s", field, resp.StatusCode, b)
		}
	}
}

// realServerURL is realServer that also returns the server's base URL.
func realServerURL(t *testing.T, mk func(st *store.Store, baseURL string) []server.Option) (*client.Client, string) {
	t.Helper()
	var url string
	c, _ := realServer(t, func(st *store.Store, baseURL string) []server.Option {
		url = baseURL
		return mk(st, baseURL)
	})
	return c, url
}

// TestResponsesItemReferencesAgainstServer: clients of OpenAI's stored responses (the Vercel
// AI SDK's default provider) send earlier output back as item_reference items; the gateway
// resolves those of its own recent answers — streamed or whole — to the items themselves,
// and refuses one it does not know, naming it.
func TestResponsesItemReferencesAgainstServer(t *testing.T) {
	up := newToolUpstream(t)
	_, base := realServerURL(t, up.options(t))
	tools := `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]`
	user := `{"role":"user","content":"Weather in Paris?"}`

	// Streamed: the call's item is kept when the stream completes.
	resp, b := responsesCall(t, base, testKey, `{"model":"openai/gpt-4o-mini","stream":true,"input":[`+user+`],`+tools+`}`)
	var callID string
	for _, e := range parseEvents(t, b) {
		if it, _ := e.data["item"].(map[string]any); e.name == "response.output_item.done" && it["type"] == "function_call" {
			callID = it["id"].(string)
		}
	}
	if resp.StatusCode != 200 || callID == "" {
		t.Fatalf("first: %d %s", resp.StatusCode, b)
	}
	resp, b = responsesCall(t, base, testKey, `{"model":"openai/gpt-4o-mini","input":[`+user+`,{"type":"item_reference","id":"`+callID+`"},`+
		`{"type":"function_call_output","call_id":"call_1","output":"18°C"}],`+tools+`}`)
	var o map[string]any
	if err := json.Unmarshal(b, &o); err != nil || resp.StatusCode != 200 {
		t.Fatalf("second: %d %s", resp.StatusCode, b)
	}
	msgs, _ := json.Marshal(up.last()["messages"])
	if !strings.Contains(string(msgs), `"tool_calls":[{"function":{"arguments":"{\"city\": \"Paris\"}","name":"get_weather"},"id":"call_1","type":"function"}]`) {
		t.Fatalf("the reference reached the upstream as %s", msgs)
	}

	// Whole: the answer's message is kept too, and referenced in the next turn.
	msg := o["output"].([]any)[0].(map[string]any)
	resp, b = responsesCall(t, base, testKey, `{"model":"openai/gpt-4o-mini","input":[`+user+`,{"type":"item_reference","id":"`+msg["id"].(string)+`"},`+
		`{"role":"user","content":"And tomorrow?"}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("third: %d %s", resp.StatusCode, b)
	}
	msgs, _ = json.Marshal(up.last()["messages"])
	if !strings.Contains(string(msgs), `{"content":"It is 18°C in Paris.","role":"assistant"}`) {
		t.Fatalf("the message reference reached the upstream as %s", msgs)
	}

	resp, b = responsesCall(t, base, testKey, `{"model":"openai/gpt-4o-mini","input":[`+user+`,{"type":"item_reference","id":"msg_unknown"}]}`)
	if resp.StatusCode != 400 || !strings.Contains(string(b), `"param":"input[1].id"`) || !strings.Contains(string(b), "msg_unknown") {
		t.Errorf("unknown reference: %d %s", resp.StatusCode, b)
	}
}
