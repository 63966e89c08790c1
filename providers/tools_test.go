package providers_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/switchyard-ai/switchyard/providers"
)

// fakeUpstream is a scripted upstream: it answers every request with body and records the
// request bodies it received.
type fakeUpstream struct {
	mu     sync.Mutex
	bodies [][]byte
	srv    *httptest.Server
}

func newFakeUpstream(t *testing.T, contentType, body string) *fakeUpstream {
	f := &fakeUpstream{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.bodies = append(f.bodies, b)
		f.mu.Unlock()
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeUpstream) last(t *testing.T) map[string]any {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.bodies) == 0 {
		t.Fatal("no request reached the upstream")
	}
	var m map[string]any
	if err := json.Unmarshal(f.bodies[len(f.bodies)-1], &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func (f *fakeUpstream) provider(t *testing.T, format providers.Format) providers.Provider {
	cfg := providers.Config{Name: string(format), BaseURL: f.srv.URL, APIKey: testKey, HTTPClient: f.srv.Client()}
	if format == providers.FormatOpenAI {
		cfg.BaseURL += "/v1"
	}
	p, err := providers.New(format, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func testdata(t *testing.T, name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// OpenAI's structured-output refusal is the answer's Refusal, not text and not an error.
func TestOpenAIRefusal(t *testing.T) {
	up := newFakeUpstream(t, "application/json", testdata(t, "openai/docs-refusal.json"))
	resp, err := up.provider(t, providers.FormatOpenAI).Complete(context.Background(), &providers.Request{Model: "gpt-4o",
		Messages:       []providers.Message{{Role: "user", Content: "x"}},
		ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONObject}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Refusal != "I'm sorry, I cannot assist with that request." || resp.Text != "" {
		t.Fatalf("refusal %q text %q", resp.Refusal, resp.Text)
	}
	if got := jsonOf(up.last(t)["response_format"]); got != `{"type":"json_object"}` {
		t.Fatalf("response_format = %s", got)
	}
}

// OpenAI bodies: an assistant turn that only called tools has content null, a tool turn
// has tool_call_id, a named tool_choice is the object form, and tool_choice and
// parallel_tool_calls are left out without tools.
func TestOpenAIToolMessages(t *testing.T) {
	up := newFakeUpstream(t, "application/json", testdata(t, "openai/docs-structured-output.json"))
	p := up.provider(t, providers.FormatOpenAI)
	req := &providers.Request{Model: "gpt-4o", Messages: []providers.Message{
		{Role: "user", Content: "Weather?"},
		{Role: "assistant", ToolCalls: []providers.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"location":"Paris"}`}}},
		{Role: "tool", ToolCallID: "call_1", Content: "sunny"},
	}, Tools: []providers.Tool{{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object"}`), Strict: true}},
		ToolChoice: &providers.ToolChoice{Mode: providers.ToolChoiceFunction, Name: "get_weather"}, ParallelToolCalls: new(bool)}
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	m := up.last(t)
	want := `[{"content":"Weather?","role":"user"},{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"location\":\"Paris\"}","name":"get_weather"},"id":"call_1","type":"function"}]},{"content":"sunny","role":"tool","tool_call_id":"call_1"}]`
	if got := jsonOf(m["messages"]); got != want {
		t.Errorf("messages = %s\nwant %s", got, want)
	}
	if got := jsonOf(m["tool_choice"]); got != `{"function":{"name":"get_weather"},"type":"function"}` {
		t.Errorf("tool_choice = %s", got)
	}
	if got := jsonOf(m["tools"]); got != `[{"function":{"name":"get_weather","parameters":{"type":"object"},"strict":true},"type":"function"}]` {
		t.Errorf("tools = %s", got)
	}
	if m["parallel_tool_calls"] != false {
		t.Errorf("parallel_tool_calls = %v", m["parallel_tool_calls"])
	}

	req.Tools = nil
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	m = up.last(t)
	if _, ok := m["tool_choice"]; ok {
		t.Errorf("tool_choice sent without tools")
	}
	if _, ok := m["parallel_tool_calls"]; ok {
		t.Errorf("parallel_tool_calls sent without tools")
	}
}

// JSON mode on Anthropic is the forced json_answer tool with an open object schema; on
// Gemini it is responseMimeType alone.
func TestJSONModeBodies(t *testing.T) {
	req := func(model string) *providers.Request {
		return &providers.Request{Model: model, Messages: []providers.Message{{Role: "user", Content: "Give me JSON."}},
			ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONObject}}
	}
	an := newFakeUpstream(t, "application/json", testdata(t, "anthropic/docs-json_tool_response.json"))
	// The recorded answer calls record_summary, not json_answer: then it is a tool call of
	// an unknown tool, which the adapter must not turn into the answer's text.
	resp, err := an.provider(t, providers.FormatAnthropic).Complete(context.Background(), req("claude-sonnet-4-5"))
	if err != nil {
		t.Fatal(err)
	}
	m := an.last(t)
	if got := jsonOf(m["tools"]); got != `[{"description":"Give your final answer by calling this tool: its input is the answer.","input_schema":{"type":"object"},"name":"json_answer"}]` {
		t.Errorf("tools = %s", got)
	}
	if got := jsonOf(m["tool_choice"]); got != `{"name":"json_answer","type":"tool"}` {
		t.Errorf("tool_choice = %s", got)
	}
	if resp.Text != "" || len(resp.ToolCalls) != 1 || resp.FinishReason != "tool_calls" {
		t.Errorf("answer = %+v", resp)
	}

	ge := newFakeUpstream(t, "application/json", testdata(t, "gemini/docs/unary-structured-output.json"))
	if _, err := ge.provider(t, providers.FormatGemini).Complete(context.Background(), req("gemini-2.5-flash")); err != nil {
		t.Fatal(err)
	}
	if got := jsonOf(ge.last(t)["generationConfig"]); got != `{"responseMimeType":"application/json"}` {
		t.Errorf("generationConfig = %s", got)
	}
}

// A Gemini 3 model refuses past function calls without a thought signature; the adapter
// sends Google's documented placeholder on the first call of each model turn, and only to
// models that check it.
func TestGeminiThoughtSignature(t *testing.T) {
	up := newFakeUpstream(t, "application/json", testdata(t, "gemini/docs/unary-function-call.json"))
	p := up.provider(t, providers.FormatGemini)
	for _, tc := range []struct {
		model string
		want  bool
	}{{"gemini-3-pro-preview", true}, {"gemini-2.5-flash", false}} {
		req := &providers.Request{Model: tc.model, Messages: []providers.Message{
			{Role: "user", Content: "Lights"},
			{Role: "assistant", ToolCalls: []providers.ToolCall{{ID: "c1", Name: "a", Arguments: "{}"}, {ID: "c2", Name: "b"}}},
			{Role: "tool", ToolCallID: "c1", Content: "ok"}, {Role: "tool", ToolCallID: "c2", Content: "[1,2]"},
		}, Tools: []providers.Tool{{Name: "a"}, {Name: "b"}}}
		if _, err := p.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		contents := jsonOf(up.last(t)["contents"])
		has := strings.Contains(contents, `"thoughtSignature":"skip_thought_signature_validator"`)
		if has != tc.want || strings.Count(contents, "thoughtSignature") > 1 {
			t.Errorf("%s: contents = %s", tc.model, contents)
		}
		if !strings.Contains(contents, `{"functionCall":{"args":{},"name":"b"}`) || !strings.Contains(contents, `"response":{"result":[1,2]}`) {
			t.Errorf("%s: contents = %s", tc.model, contents)
		}
	}
}

// Gemini's synthesized call ids are the same whether the answer is streamed or not, and
// distinct for distinct calls.
func TestGeminiCallIDs(t *testing.T) {
	plain := testdata(t, "gemini/docs/unary-parallel-function-calls.json")
	// With Gemini's responseId the ids come from the answer: the same streamed or not.
	var withID map[string]any
	json.Unmarshal([]byte(plain), &withID)
	withID["responseId"] = "resp-1"
	body, _ := json.Marshal(withID)
	up := newFakeUpstream(t, "application/json", string(body))
	p := up.provider(t, providers.FormatGemini)
	req := &providers.Request{Model: "gemini-2.5-flash", Messages: []providers.Message{{Role: "user", Content: "Party"}}}
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	st := newFakeUpstream(t, "text/event-stream", "data: "+string(body)+"\n\n")
	s, err := st.provider(t, providers.FormatGemini).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []string
	for {
		c, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range c.ToolCalls {
			ids = append(ids, d.ID)
		}
	}
	if len(ids) != 3 || len(resp.ToolCalls) != 3 {
		t.Fatalf("stream ids %v, response %+v", ids, resp.ToolCalls)
	}
	seen := map[string]bool{}
	for i, id := range ids {
		if id != resp.ToolCalls[i].ID || seen[id] {
			t.Errorf("call %d: stream id %q, response id %q", i, id, resp.ToolCalls[i].ID)
		}
		seen[id] = true
	}
	// The same calls in another answer get other ids (an agent repeating "git status"
	// must not see an id it has already answered), with or without a responseId.
	withID["responseId"] = "resp-2"
	body2, _ := json.Marshal(withID)
	for _, b := range []string{string(body2), plain, plain} {
		r, err := newFakeUpstream(t, "application/json", b).provider(t, providers.FormatGemini).Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range r.ToolCalls {
			if seen[c.ID] {
				t.Errorf("id %s of an earlier answer again", c.ID)
			}
			seen[c.ID] = true
		}
	}
}

// Schemas Gemini's dialect cannot express, and JSON schemas Anthropic cannot take as a tool
// input, are refused by Check with the field named, before any call.
func TestCheckRefusesWhatCannotBeMapped(t *testing.T) {
	up := newFakeUpstream(t, "application/json", "{}")
	gem, an, oa := up.provider(t, providers.FormatGemini), up.provider(t, providers.FormatAnthropic), up.provider(t, providers.FormatOpenAI)
	recursive := json.RawMessage(`{"type":"object","properties":{"node":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`)
	array := json.RawMessage(`{"type":"array","items":{"type":"string"}}`)
	cases := []struct {
		p     providers.Provider
		req   providers.Request
		field string // "" when it is accepted
	}{
		{gem, providers.Request{Tools: []providers.Tool{{Name: "ok"}, {Name: "tree", Parameters: recursive}}}, "tools[1].function.parameters"},
		{gem, providers.Request{ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONSchema, Name: "t", Schema: recursive}}, "response_format.json_schema.schema"},
		{gem, providers.Request{ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONSchema, Name: "t", Schema: array}}, ""},
		{an, providers.Request{ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONSchema, Name: "t", Schema: array}}, "response_format.json_schema.schema"},
		{an, providers.Request{ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONSchema, Name: "t", Schema: recursive}}, ""},
		{oa, providers.Request{ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONSchema, Name: "t", Schema: array}}, ""},
		// Gemini answers 400 to function calling or search with a JSON mime type.
		{gem, providers.Request{Tools: []providers.Tool{{Name: "ok"}}, ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONObject}}, "response_format"},
		{gem, providers.Request{Search: true, ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONSchema, Name: "t", Schema: array}}, "response_format"},
		{an, providers.Request{Tools: []providers.Tool{{Name: "ok"}}, ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONObject}}, ""},
		// Anthropic's input_schema root must be an object: an anyOf root is refused before the
		// call, a root with properties but no type is given "type": "object".
		{an, providers.Request{ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONSchema, Name: "t",
			Schema: json.RawMessage(`{"anyOf":[{"type":"object"},{"type":"string"}]}`)}}, "response_format.json_schema.schema"},
		{an, providers.Request{ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONSchema, Name: "t",
			Schema: json.RawMessage(`{"properties":{"a":{"type":"string"}}}`)}}, ""},
	}
	for i, tc := range cases {
		err := providers.Check(tc.p, "m", &tc.req)
		var ue *providers.UnsupportedError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("case %d (%s): %v", i, tc.p.Name(), err)
		case tc.field != "" && (!errors.As(err, &ue) || ue.Field != tc.field):
			t.Errorf("case %d (%s): err = %v, want field %s", i, tc.p.Name(), err, tc.field)
		}
	}
	// Called directly, the adapter fails the same way without calling upstream.
	up.mu.Lock()
	before := len(up.bodies)
	up.mu.Unlock()
	_, err := gem.Complete(context.Background(), &providers.Request{Model: "gemini-2.5-flash", Messages: []providers.Message{{Role: "user", Content: "x"}},
		Tools: []providers.Tool{{Name: "tree", Parameters: recursive}}})
	if providers.KindOf(err) != providers.KindBadRequest {
		t.Fatalf("err = %v", err)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.bodies) != before {
		t.Fatal("upstream called")
	}
}

// A streamed Anthropic tool call without input gets "{}" as its arguments.
func TestAnthropicEmptyToolInput(t *testing.T) {
	sse := `event: message_start
data: {"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"now","input":{}}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}

event: message_stop
data: {"type":"message_stop"}

`
	up := newFakeUpstream(t, "text/event-stream", sse)
	_, _, finish, _, calls, err := run(up.provider(t, providers.FormatAnthropic),
		&providers.Request{Model: "claude-sonnet-4-5", Messages: []providers.Message{{Role: "user", Content: "time?"}}, Tools: []providers.Tool{{Name: "now"}}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if finish != "tool_calls" || len(calls) != 1 || calls[0] != (providers.ToolCall{ID: "toolu_1", Name: "now", Arguments: "{}"}) {
		t.Fatalf("finish %q calls %+v", finish, calls)
	}
	if got := jsonOf(up.last(t)["tools"]); got != `[{"input_schema":{"type":"object"},"name":"now"}]` {
		t.Errorf("tools = %s", got)
	}
}

// Gemini refuses an OBJECT schema with empty properties: a function without arguments is
// declared without parameters, and an empty nested object loses its properties (and any
// required names that no longer exist).
func TestGeminiEmptyObjectSchemas(t *testing.T) {
	up := newFakeUpstream(t, "application/json", testdata(t, "gemini/docs/unary-function-call.json"))
	p := up.provider(t, providers.FormatGemini)
	req := &providers.Request{Model: "gemini-2.5-flash", Messages: []providers.Message{{Role: "user", Content: "Lights"}},
		Tools: []providers.Tool{
			{Name: "now", Parameters: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)},
			{Name: "set", Parameters: json.RawMessage(`{"type":"object","properties":{"opts":{"type":"object","properties":{}},"flag":true,"n":{"type":"integer"}},"required":["opts","flag","n"]}`)},
		}}
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := jsonOf(up.last(t)["tools"])
	want := `[{"functionDeclarations":[{"name":"now"},{"name":"set","parameters":{"properties":{"n":{"type":"INTEGER"},"opts":{"type":"OBJECT"}},"required":["opts","n"],"type":"OBJECT"}}]}]`
	if got != want {
		t.Errorf("tools = %s\nwant    %s", got, want)
	}
}

// A tool call cut off mid-arguments (finish "length") stays in the history: OpenAI takes the
// text as it is, Anthropic and Gemini, which take only objects, get it wrapped.
func TestTruncatedToolArgumentsInHistory(t *testing.T) {
	msgs := []providers.Message{{Role: "user", Content: "weather?"},
		{Role: "assistant", ToolCalls: []providers.ToolCall{{ID: "c1", Name: "weather", Arguments: `{"city":"Par`}}},
		{Role: "tool", ToolCallID: "c1", Content: "sunny"}}
	for _, tc := range []struct {
		format providers.Format
		file   string
		want   string
	}{
		{providers.FormatOpenAI, "", `"arguments":"{\"city\":\"Par"`},
		{providers.FormatAnthropic, "", `"input":{"arguments":"{\"city\":\"Par"}`},
		{providers.FormatGemini, "gemini/docs/unary-function-call.json", `"args":{"arguments":"{\"city\":\"Par"}`},
	} {
		body := `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`
		if tc.format == providers.FormatAnthropic {
			body = `{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`
		}
		if tc.file != "" {
			body = testdata(t, tc.file)
		}
		up := newFakeUpstream(t, "application/json", body)
		if _, err := up.provider(t, tc.format).Complete(context.Background(), &providers.Request{Model: "m", Messages: msgs,
			Tools: []providers.Tool{{Name: "weather"}}}); err != nil {
			t.Fatalf("%s: %v", tc.format, err)
		}
		if got := jsonOf(up.last(t)); !strings.Contains(got, tc.want) {
			t.Errorf("%s: body %s\nwant it to contain %s", tc.format, got, tc.want)
		}
	}
}

// The OpenAI API's other options reach each format as far as it has them.
func TestOpenAIOptionsPerFormat(t *testing.T) {
	seed, pen := int64(42), 0.5
	opts := providers.OpenAIOptions{Seed: &seed, FrequencyPenalty: &pen, PresencePenalty: &pen, LogitBias: map[string]float64{"50256": -100},
		User: "u-1", ReasoningEffort: "low", ServiceTier: "flex", Verbosity: "low"}
	msgs := []providers.Message{{Role: "user", Content: "hi", Name: "alice"}}
	for _, tc := range []struct {
		format providers.Format
		body   string
		want   []string
		absent []string
	}{
		{providers.FormatOpenAI, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`,
			[]string{`"seed":42`, `"frequency_penalty":0.5`, `"presence_penalty":0.5`, `"logit_bias":{"50256":-100}`, `"user":"u-1"`,
				`"reasoning_effort":"low"`, `"service_tier":"flex"`, `"verbosity":"low"`, `"name":"alice"`}, nil},
		{providers.FormatAnthropic, `{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`,
			[]string{`"metadata":{"user_id":"u-1"}`}, []string{"seed", "penalty", "alice"}},
		{providers.FormatGemini, "", []string{`"seed":42`, `"frequencyPenalty":0.5`, `"presencePenalty":0.5`}, []string{"u-1", "alice", "logit"}},
	} {
		body := tc.body
		if body == "" {
			body = testdata(t, "gemini/docs/unary-function-call.json")
		}
		up := newFakeUpstream(t, "application/json", body)
		if _, err := up.provider(t, tc.format).Complete(context.Background(), &providers.Request{Model: "m", Messages: msgs, OpenAIOptions: opts}); err != nil {
			t.Fatalf("%s: %v", tc.format, err)
		}
		got := jsonOf(up.last(t))
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: body %s lacks %s", tc.format, got, w)
			}
		}
		for _, a := range tc.absent {
			if strings.Contains(got, a) {
				t.Errorf("%s: body %s has %s", tc.format, got, a)
			}
		}
	}
}

// Mistral takes only 9-character tool-call ids: with ShortToolCallIDs (its preset's setting)
// other ids are hashed, the call and its result alike, and ids of the right form kept.
func TestShortToolCallIDs(t *testing.T) {
	up := newFakeUpstream(t, "application/json", `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	msgs := []providers.Message{{Role: "user", Content: "weather?"},
		{Role: "assistant", ToolCalls: []providers.ToolCall{{ID: "call_abc123XYZ", Name: "w", Arguments: "{}"}, {ID: "D681PevKs", Name: "w", Arguments: "{}"}}},
		{Role: "tool", ToolCallID: "call_abc123XYZ", Content: "sunny"}, {Role: "tool", ToolCallID: "D681PevKs", Content: "rain"}}
	send := func(short bool) map[string]any {
		p, err := providers.New(providers.FormatOpenAI, providers.Config{Name: "mistral", BaseURL: up.srv.URL + "/v1", APIKey: testKey, ShortToolCallIDs: short})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Complete(context.Background(), &providers.Request{Model: "m", Messages: msgs, Tools: []providers.Tool{{Name: "w"}}}); err != nil {
			t.Fatal(err)
		}
		return up.last(t)
	}
	ids := func(body map[string]any) (calls, results []string) {
		for _, m := range body["messages"].([]any) {
			mm := m.(map[string]any)
			for _, c := range asSlice(mm["tool_calls"]) {
				calls = append(calls, c.(map[string]any)["id"].(string))
			}
			if id, ok := mm["tool_call_id"].(string); ok {
				results = append(results, id)
			}
		}
		return
	}
	calls, results := ids(send(true))
	if len(calls) != 2 || len(calls[0]) != 9 || calls[0] == "call_abc1" || calls[1] != "D681PevKs" || !slices.Equal(calls, results) {
		t.Errorf("short ids: calls %v results %v", calls, results)
	}
	for _, c := range calls[0] {
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			t.Errorf("id %q has %q", calls[0], c)
		}
	}
	if again, _ := ids(send(true)); !slices.Equal(again, calls) {
		t.Errorf("ids not stable: %v then %v", calls, again)
	}
	if calls, _ := ids(send(false)); calls[0] != "call_abc123XYZ" {
		t.Errorf("without the setting the id changed: %v", calls)
	}
	for _, p := range providers.Presets() {
		if p.ShortToolCallIDs != (p.Name == "mistral") {
			t.Errorf("preset %s: ShortToolCallIDs %v", p.Name, p.ShortToolCallIDs)
		}
	}
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// A streamed answer OpenAI's filter blocked is billed: the adapter reads on to the usage
// chunk that follows the content_filter finish, and the error carries it.
func TestOpenAIStreamContentFilterBilled(t *testing.T) {
	sse := "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Once\"}}]}\n\n" +
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"content_filter\"}]}\n\n" +
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":5,\"total_tokens\":16}}\n\n" +
		"data: [DONE]\n\n"
	for _, withUsage := range []bool{true, false} {
		body := sse
		if !withUsage {
			body = strings.Replace(sse, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":5,\"total_tokens\":16}}\n\n", "", 1)
		}
		up := newFakeUpstream(t, "text/event-stream", body)
		_, _, _, _, _, err := run(up.provider(t, providers.FormatOpenAI), &providers.Request{Model: "m", Messages: []providers.Message{{Role: "user", Content: "story"}}}, true)
		var pe *providers.Error
		if !errors.As(err, &pe) || pe.Kind != providers.KindContentFilter {
			t.Fatalf("usage chunk %v: err = %v, want content_filter", withUsage, err)
		}
		if withUsage && (pe.Usage == nil || pe.Usage.PromptTokens != 11 || pe.Usage.CompletionTokens != 5) {
			t.Errorf("billed usage = %+v, want 11 in 5 out", pe.Usage)
		}
		if !withUsage && pe.Usage != nil {
			t.Errorf("usage %+v without a usage chunk", pe.Usage)
		}
	}
}

// Anthropic gets "type": "object" added to a root that has properties but no type.
func TestAnthropicInputSchemaGetsObjectType(t *testing.T) {
	up := newFakeUpstream(t, "application/json", `{"id":"m","type":"message","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"t","input":{"a":"x"}}],"stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":1}}`)
	_, err := up.provider(t, providers.FormatAnthropic).Complete(context.Background(), &providers.Request{Model: "m",
		Messages:       []providers.Message{{Role: "user", Content: "x"}},
		ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONSchema, Name: "t", Schema: json.RawMessage(`{"title":"T","properties":{"a":{"type":"string"}}}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := jsonOf(up.last(t)["tools"]); !strings.Contains(got, `"input_schema":{"properties":{"a":{"type":"string"}},"title":"T","type":"object"}`) {
		t.Errorf("tools = %s", got)
	}
}

// Gemini's MALFORMED_FUNCTION_CALL (and OTHER) with nothing in the answer is a retryable
// failure, not an empty answer, streamed or not.
func TestGeminiMalformedFunctionCallIsAFailure(t *testing.T) {
	unary := `{"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"MALFORMED_FUNCTION_CALL"}],"usageMetadata":{"promptTokenCount":5,"totalTokenCount":5}}`
	for _, stream := range []bool{false, true} {
		ct, body := "application/json", unary
		if stream {
			ct, body = "text/event-stream", "data: "+unary+"\n\n"
		}
		up := newFakeUpstream(t, ct, body)
		_, _, _, _, _, err := run(up.provider(t, providers.FormatGemini), &providers.Request{Model: "gemini-2.5-flash",
			Messages: []providers.Message{{Role: "user", Content: "x"}}, Tools: []providers.Tool{{Name: "f"}}}, stream)
		if k := providers.KindOf(err); !k.Retryable() || k != providers.KindStreamBroken {
			t.Errorf("stream %v: err = %v (kind %s), want a retryable failure", stream, err, k)
		}
	}
}

// What agents send back after tool calls reaches Anthropic in a shape it takes: ids with
// characters it refuses are rewritten (call and result alike), whitespace-only text beside
// calls and empty assistant turns are left out, and a request without tools whose history
// has tool blocks declares those functions with tool_choice none.
func TestAnthropicHistoryFromOtherProviders(t *testing.T) {
	up := newFakeUpstream(t, "application/json", `{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`)
	msgs := []providers.Message{{Role: "user", Content: "weather?"},
		{Role: "assistant", Content: "\n\n", ToolCalls: []providers.ToolCall{{ID: "functions.get_weather:0", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		{Role: "tool", ToolCallID: "functions.get_weather:0", Content: "sunny"},
		{Role: "assistant", Content: ""}, // a refusal sent back
		{Role: "user", Content: "summarise"}}
	if _, err := up.provider(t, providers.FormatAnthropic).Complete(context.Background(), &providers.Request{Model: "claude-sonnet-4-5", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	body := up.last(t)
	got := jsonOf(body)
	var ids []string
	for _, m := range body["messages"].([]any) {
		if blocks, ok := m.(map[string]any)["content"].([]any); ok {
			for _, b := range blocks {
				bm := b.(map[string]any)
				if bm["type"] == "text" && strings.TrimSpace(bm["text"].(string)) == "" {
					t.Errorf("whitespace-only text block sent: %s", got)
				}
				if id, ok := bm["id"].(string); ok {
					ids = append(ids, id)
				}
				if id, ok := bm["tool_use_id"].(string); ok {
					ids = append(ids, id)
				}
			}
		}
	}
	if len(ids) != 2 || ids[0] != ids[1] || strings.ContainsAny(ids[0], ".:") {
		t.Errorf("tool ids %v: want one rewritten id for the call and its result", ids)
	}
	if n := len(body["messages"].([]any)); n != 3 {
		t.Errorf("%d messages, want 3 (user, assistant with the call, user with the result and the question): %s", n, got)
	}
	if !strings.Contains(got, `"tool_choice":{"type":"none"}`) || !strings.Contains(got, `"tools":[{"input_schema":{"type":"object"},"name":"get_weather"}]`) {
		t.Errorf("history tools not declared: %s", got)
	}
}

// Gemini refuses a model turn without parts: an empty answer sent back is left out.
func TestGeminiDropsEmptyAssistantTurns(t *testing.T) {
	up := newFakeUpstream(t, "application/json", testdata(t, "gemini/docs/unary-function-call.json"))
	msgs := []providers.Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: ""}, {Role: "user", Content: "again"}}
	if _, err := up.provider(t, providers.FormatGemini).Complete(context.Background(), &providers.Request{Model: "gemini-2.5-flash", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	if got := jsonOf(up.last(t)["contents"]); strings.Contains(got, `"role":"model"`) {
		t.Errorf("empty model turn sent: %s", got)
	}
}

// Servers that leave "index" out of tool-call deltas: a delta with a new id starts the next
// call, pieces without an id continue the current one.
func TestToolCallDeltasWithoutIndex(t *testing.T) {
	ev := func(delta string) string {
		return "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[" + delta + "]}}]}\n\n"
	}
	sse := ev(`{"id":"call_a","type":"function","function":{"name":"weather","arguments":""}}`) +
		ev(`{"function":{"arguments":"{\"city\":"}}`) + ev(`{"function":{"arguments":"\"x\"}"}}`) +
		ev(`{"id":"call_b","type":"function","function":{"name":"time","arguments":""}}`) +
		ev(`{"function":{"arguments":"{\"tz\":\"x\"}"}}`) +
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"
	up := newFakeUpstream(t, "text/event-stream", sse)
	_, _, finish, _, calls, err := run(up.provider(t, providers.FormatOpenAI), &providers.Request{Model: "m",
		Messages: []providers.Message{{Role: "user", Content: "x"}}, Tools: []providers.Tool{{Name: "weather"}, {Name: "time"}}}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []providers.ToolCall{{ID: "call_a", Name: "weather", Arguments: `{"city":"x"}`}, {ID: "call_b", Name: "time", Arguments: `{"tz":"x"}`}}
	if finish != "tool_calls" || !slices.Equal(calls, want) {
		t.Fatalf("calls %+v, want %+v", calls, want)
	}
}
