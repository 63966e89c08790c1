package providers_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// fakeOpenAIAPI is a scripted OpenAI upstream serving both chat completions and the
// Responses API: it records which path each request went to and its body, and answers the
// Responses API with the body (or event stream) the test gives it.
type fakeOpenAIAPI struct {
	srv       *httptest.Server
	mu        sync.Mutex
	paths     []string
	bodies    []map[string]any
	responses string // the Responses API's answer: a JSON body, or SSE when it starts with "event:"
}

func newFakeOpenAIAPI(t *testing.T, responses string) *fakeOpenAIAPI {
	f := &fakeOpenAIAPI{responses: responses}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		f.mu.Lock()
		f.paths, f.bodies = append(f.paths, r.URL.Path), append(f.bodies, body)
		f.mu.Unlock()
		switch r.URL.Path {
		case "/v1/responses":
			if strings.HasPrefix(f.responses, "event:") {
				w.Header().Set("Content-Type", "text/event-stream")
			} else {
				w.Header().Set("Content-Type", "application/json")
			}
			io.WriteString(w, f.responses)
		case "/v1/chat/completions":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, openAIAnswer(`"content":"chat"`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// provider is an OpenAI-format adapter named name on the fake, with mode mode.
func (f *fakeOpenAIAPI) provider(t *testing.T, name string, mode providers.ResponsesMode) providers.Provider {
	t.Helper()
	p, err := providers.New(providers.FormatOpenAI, providers.Config{Name: name, BaseURL: f.srv.URL + "/v1", APIKey: testKey,
		HTTPClient: f.srv.Client(), ResponsesAPI: mode})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// lastCall is the path and body of the last request.
func (f *fakeOpenAIAPI) lastCall(t *testing.T) (string, map[string]any) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.paths) == 0 {
		t.Fatal("no request reached the upstream")
	}
	return f.paths[len(f.paths)-1], f.bodies[len(f.bodies)-1]
}

// responsesAnswer is a completed response: reasoning with two summary parts and its
// encrypted content, a message, and a function call, as OpenAI's Responses API returns them.
const responsesAnswer = `{"id":"resp_1","object":"response","created_at":1741476777,"status":"completed","error":null,
"incomplete_details":null,"model":"o3-2025-04-16","output":[
{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"**Weather** first."},{"type":"summary_text","text":"Then answer."}],"encrypted_content":"gAAAAenc1"},
{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Let me check.","annotations":[]}]},
{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_A","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}],
"usage":{"input_tokens":50,"input_tokens_details":{"cached_tokens":10},"output_tokens":120,"output_tokens_details":{"reasoning_tokens":64},"total_tokens":170}}`

// TestOpenAIResponsesRouting: which requests go to the Responses API. On OpenAI's own API:
// the models only it serves, and reasoning models asked to show their reasoning
// (Thinking.Summary) or given their encrypted reasoning back; everything else, and every other upstream, stays on chat
// completions unless the configuration says always (or never).
func TestOpenAIResponsesRouting(t *testing.T) {
	f := newFakeOpenAIAPI(t, responsesAnswer)
	encrypted := []providers.Message{{Role: "user", Content: "Hi"},
		{Role: "assistant", Content: "Hello.", Reasoning: []providers.ReasoningBlock{{Text: "greet", Encrypted: "gAAAAenc0"}}},
		{Role: "user", Content: "Again?"}}
	signed := []providers.Message{{Role: "user", Content: "Hi"},
		{Role: "assistant", Content: "Hello.", Reasoning: []providers.ReasoningBlock{{Text: "greet", Signature: "c2ln"}}},
		{Role: "user", Content: "Again?"}}
	for _, tc := range []struct {
		name     string
		mode     providers.ResponsesMode
		model    string
		thinking bool
		history  []providers.Message
		want     string
	}{
		{"openai", "", "gpt-5-codex", false, nil, "/v1/responses"},
		{"openai", "", "codex-mini-latest", false, nil, "/v1/responses"},
		{"openai", "", "o3-pro", false, nil, "/v1/responses"},
		{"openai", "", "o3-pro-2025-06-10", false, nil, "/v1/responses"},
		{"openai", "", "gpt-5.4-pro", false, nil, "/v1/responses"},
		{"openai", "", "o4-mini-deep-research", false, nil, "/v1/responses"},
		{"openai", "", "o3", true, nil, "/v1/responses"},
		{"openai", "", "gpt-5", true, nil, "/v1/responses"},
		{"openai", "", "o3", false, encrypted, "/v1/responses"},
		{"openai", "", "o3", false, nil, "/v1/chat/completions"},
		{"openai", "", "effort-only:o3", false, nil, "/v1/chat/completions"}, // an effort alone: how hard, not shown
		{"openai", "", "o3", false, signed, "/v1/chat/completions"},          // Claude's reasoning: nothing for OpenAI
		{"openai", "", "gpt-4o", true, nil, "/v1/chat/completions"},
		{"openai", "", "gpt-5-chat-latest", true, nil, "/v1/chat/completions"},
		{"openai", "", "gpt-4o", false, encrypted, "/v1/chat/completions"},
		{"openai", providers.ResponsesNever, "o3", true, nil, "/v1/chat/completions"},
		{"openai", providers.ResponsesAlways, "gpt-4o", false, nil, "/v1/responses"},
		{"groq", "", "o3", true, nil, "/v1/chat/completions"},
		{"my-vllm", "", "gpt-5-codex", false, nil, "/v1/chat/completions"},
		{"azure", providers.ResponsesAlways, "gpt-5-codex", false, nil, "/v1/responses"},
	} {
		req := thinkingUser(tc.model, nil)
		if m, ok := strings.CutPrefix(tc.model, "effort-only:"); ok {
			req.Model, req.Thinking = m, &providers.Thinking{Effort: "high"}
		}
		if tc.thinking {
			req.Thinking = &providers.Thinking{Effort: "low", Summary: true}
		}
		if tc.history != nil {
			req.Messages = tc.history
		}
		if _, err := f.provider(t, tc.name, tc.mode).Complete(context.Background(), req); err != nil {
			t.Fatalf("%s/%s: %v", tc.name, tc.model, err)
		}
		if path, _ := f.lastCall(t); path != tc.want {
			t.Errorf("%s (%q) %s thinking %v: called %s, want %s", tc.name, tc.mode, tc.model, tc.thinking, path, tc.want)
		}
	}
}

// TestOpenAIResponsesBody: the request as the Responses API takes it.
func TestOpenAIResponsesBody(t *testing.T) {
	f := newFakeOpenAIAPI(t, responsesAnswer)
	temp, topP, no := 0.2, 0.9, false
	req := &providers.Request{Model: "o3", Temperature: &temp, TopP: &topP, MaxTokens: 8, Thinking: &providers.Thinking{Effort: "max", Summary: true},
		Messages: []providers.Message{
			{Role: "system", Content: "Be brief."},
			{Role: "system", Content: "Use tools."},
			{Role: "user", Parts: []providers.Part{{Text: "What is this?"}, {Image: &providers.Image{URL: "https://x/cat.png"}}}, Content: "What is this?"},
			{Role: "assistant", Content: "Let me check.", Reasoning: []providers.ReasoningBlock{
				{Text: "claude's", Signature: "c2ln"}, {Text: "look it up", Encrypted: "gAAAAenc1"}, {Encrypted: "gAAAAenc2"}},
				ToolCalls: []providers.ToolCall{{ID: "call_A", Name: "lookup", Arguments: `{"q":"cat"}`}, {ID: "call_B", Name: "now"}}},
			{Role: "tool", ToolCallID: "call_A", Content: "a cat"},
			{Role: "tool", ToolCallID: "call_B", Content: ""},
			{Role: "system", Content: "Answer in French."},
		},
		Tools: []providers.Tool{{Name: "lookup", Description: "Look up", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
			{Name: "now", Strict: true}},
		ToolChoice: &providers.ToolChoice{Mode: providers.ToolChoiceFunction, Name: "lookup"}, ParallelToolCalls: &no,
		ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONSchema, Name: "out", Schema: json.RawMessage(`{"type":"object"}`)},
		OpenAIOptions:  providers.OpenAIOptions{User: "u1", PromptCacheKey: "k", Verbosity: "low", Seed: new(int64), FrequencyPenalty: &temp},
	}
	if _, err := f.provider(t, "openai", "").Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	_, body := f.lastCall(t)
	want := `{"include":["reasoning.encrypted_content"],"input":[` +
		`{"content":[{"text":"What is this?","type":"input_text"},{"detail":"auto","image_url":"https://x/cat.png","type":"input_image"}],"role":"user","type":"message"},` +
		`{"encrypted_content":"gAAAAenc1","summary":[{"text":"look it up","type":"summary_text"}],"type":"reasoning"},` +
		`{"encrypted_content":"gAAAAenc2","summary":[],"type":"reasoning"},` +
		`{"content":"Let me check.","role":"assistant","type":"message"},` +
		`{"arguments":"{\"q\":\"cat\"}","call_id":"call_A","name":"lookup","type":"function_call"},` +
		`{"arguments":"{}","call_id":"call_B","name":"now","type":"function_call"},` +
		`{"call_id":"call_A","output":"a cat","type":"function_call_output"},` +
		`{"call_id":"call_B","output":"","type":"function_call_output"},` +
		`{"content":"Answer in French.","role":"developer","type":"message"}],` +
		`"instructions":"Be brief.\n\nUse tools.","max_output_tokens":16,"model":"o3","parallel_tool_calls":false,"prompt_cache_key":"k",` +
		`"reasoning":{"effort":"high","summary":"auto"},"store":false,` +
		`"text":{"format":{"name":"out","schema":{"type":"object"},"strict":false,"type":"json_schema"},"verbosity":"low"},` +
		`"tool_choice":{"name":"lookup","type":"function"},` +
		`"tools":[{"description":"Look up","name":"lookup","parameters":{"properties":{"q":{"type":"string"}},"type":"object"},"strict":false,"type":"function"},` +
		`{"name":"now","parameters":{"properties":{},"type":"object"},"strict":true,"type":"function"}],"user":"u1"}`
	if got := jsonOf(body); got != want {
		t.Errorf("body\n%s\nwant\n%s", got, want)
	}

	// A model only the Responses API serves, asked for nothing: no reasoning object, no
	// summary; its own effort is passed on; a non-reasoning model keeps its sampling.
	req = &providers.Request{Model: "gpt-5-codex", Messages: []providers.Message{{Role: "user", Content: "Fix it"}},
		OpenAIOptions: providers.OpenAIOptions{ReasoningEffort: "xhigh"}}
	if _, err := f.provider(t, "openai", "").Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if _, body := f.lastCall(t); jsonOf(body["reasoning"]) != `{"effort":"xhigh"}` || jsonOf(body["input"]) != `[{"content":"Fix it","role":"user","type":"message"}]` {
		t.Errorf("codex body %s", jsonOf(body))
	}
	// codex-mini is a reasoning model (an o4-mini): no sampling settings, its reasoning asked.
	req = &providers.Request{Model: "codex-mini-latest", Temperature: &temp, Messages: []providers.Message{{Role: "user", Content: "Fix it"}},
		Thinking: &providers.Thinking{Effort: "low", Summary: true}}
	if _, err := f.provider(t, "openai", "").Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if _, body := f.lastCall(t); body["temperature"] != nil || jsonOf(body["reasoning"]) != `{"effort":"low","summary":"auto"}` || body["include"] == nil {
		t.Errorf("codex-mini body %s", jsonOf(body))
	}
	req = &providers.Request{Model: "gpt-4o", Temperature: &temp, Messages: []providers.Message{{Role: "user", Content: "Hi"}}, Thinking: &providers.Thinking{}}
	if _, err := f.provider(t, "openai", providers.ResponsesAlways).Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if _, body := f.lastCall(t); body["temperature"] != 0.2 || body["reasoning"] != nil || body["include"] != nil {
		t.Errorf("gpt-4o body %s", jsonOf(body))
	}
}

// TestOpenAIResponsesComplete: a whole answer read back — reasoning blocks (summary parts
// as paragraphs, the encrypted content), text, calls, usage — and the statuses that end it.
func TestOpenAIResponsesComplete(t *testing.T) {
	f := newFakeOpenAIAPI(t, responsesAnswer)
	p := f.provider(t, "openai", "")
	resp, err := p.Complete(context.Background(), thinkingUser("o3", &providers.Thinking{Summary: true}))
	if err != nil {
		t.Fatal(err)
	}
	want := &providers.Response{Text: "Let me check.", FinishReason: "tool_calls", Model: "o3-2025-04-16",
		ToolCalls: []providers.ToolCall{{ID: "call_A", Name: "get_weather", Arguments: `{"city":"Paris"}`}},
		Reasoning: []providers.ReasoningBlock{{Text: "**Weather** first.\n\nThen answer.", Encrypted: "gAAAAenc1", EncryptedBy: "openai"}},
		Usage:     providers.Usage{PromptTokens: 50, CompletionTokens: 120, ReasoningTokens: 64, CachedTokens: 10}}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response\n%+v\nwant\n%+v", resp, want)
	}

	for _, tc := range []struct {
		body   string
		finish string
		kind   providers.ErrorKind
	}{
		{`{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"message","content":[{"type":"output_text","text":"Par"}]}],"usage":{"input_tokens":5,"output_tokens":16}}`, "length", 0},
		{`{"status":"completed","output":[{"type":"message","content":[{"type":"refusal","refusal":"No."}]}]}`, "stop", 0},
		{`{"status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[],"usage":{"input_tokens":5,"output_tokens":3}}`, "", providers.KindContentFilter},
		{`{"status":"failed","error":{"code":"rate_limit_exceeded","message":"Rate limit reached"},"output":[]}`, "", providers.KindRateLimited},
		{`{"status":"failed","error":{"code":"server_error","message":"The server had an error"},"output":[]}`, "", providers.KindOverloaded},
		{`{"status":"completed","output":[`, "", providers.KindStreamBroken},
	} {
		f.responses = tc.body
		resp, err := p.Complete(context.Background(), thinkingUser("gpt-5-codex", nil))
		if tc.kind != 0 {
			if providers.KindOf(err) != tc.kind {
				t.Errorf("%s: err %v, want kind %s", tc.body, err, tc.kind)
			}
			var pe *providers.Error
			if tc.kind == providers.KindContentFilter && (!errors.As(err, &pe) || pe.Usage == nil || pe.Usage.CompletionTokens != 3) {
				t.Errorf("content filter: billed usage missing: %v", err)
			}
			continue
		}
		if err != nil || resp.FinishReason != tc.finish {
			t.Errorf("%s: %+v %v, want finish %s", tc.body, resp, err, tc.finish)
		} else if strings.Contains(tc.body, "refusal") && resp.Refusal != "No." {
			t.Errorf("refusal %q", resp.Refusal)
		}
	}
}

// responsesEvents is a Responses API event stream as OpenAI sends it: reasoning with two
// summary parts, a message, a call whose arguments stream, one whose arguments come only
// whole with its done event, then the completed response.
const responsesEvents = `event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","model":"o3","output":[]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}

event: response.reasoning_summary_part.added
data: {"type":"response.reasoning_summary_part.added","item_id":"rs_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}

event: response.reasoning_summary_text.delta
data: {"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":0,"delta":"**Weather** first."}

event: response.reasoning_summary_text.delta
data: {"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":1,"delta":"Then answer."}

event: response.output_item.done
data: {"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"**Weather** first."},{"type":"summary_text","text":"Then answer."}],"encrypted_content":"gAAAAenc1"}}

event: response.output_item.added
data: {"type":"response.output_item.added","output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}

event: response.content_part.added
data: {"type":"response.content_part.added","item_id":"msg_1","output_index":1,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":"Let me check."}

event: response.output_text.done
data: {"type":"response.output_text.done","item_id":"msg_1","output_index":1,"content_index":0,"text":"Let me check."}

event: response.output_item.added
data: {"type":"response.output_item.added","output_index":2,"item":{"id":"fc_1","type":"function_call","status":"in_progress","call_id":"call_A","name":"get_weather","arguments":""}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":2,"delta":"{\"city\":"}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":2,"delta":"\"Paris\"}"}

event: response.output_item.done
data: {"type":"response.output_item.done","output_index":2,"item":{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_A","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}

event: response.output_item.added
data: {"type":"response.output_item.added","output_index":3,"item":{"id":"fc_2","type":"function_call","status":"in_progress","call_id":"call_B","name":"get_time","arguments":""}}

event: response.output_item.done
data: {"type":"response.output_item.done","output_index":3,"item":{"id":"fc_2","type":"function_call","status":"completed","call_id":"call_B","name":"get_time","arguments":"{}"}}

event: response.completed
data: {"type":"response.completed","response":{"id":"resp_1","status":"completed","model":"o3","output":[],"usage":{"input_tokens":50,"input_tokens_details":{"cached_tokens":10},"output_tokens":120,"output_tokens_details":{"reasoning_tokens":64},"total_tokens":170}}}

`

// TestOpenAIResponsesStream: the events become the adapter's chunks, in order, and the
// stream ends cleanly only after response.completed.
func TestOpenAIResponsesStream(t *testing.T) {
	f := newFakeOpenAIAPI(t, responsesEvents)
	p := f.provider(t, "openai", "")
	s, err := p.Stream(context.Background(), thinkingUser("o3", &providers.Thinking{Summary: true}))
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, s)
	r := func(d providers.ReasoningDelta) providers.Chunk { return providers.Chunk{Reasoning: &d} }
	call := func(d providers.ToolCallDelta) providers.Chunk {
		return providers.Chunk{ToolCalls: []providers.ToolCallDelta{d}}
	}
	want := []providers.Chunk{
		r(providers.ReasoningDelta{}), // the reasoning item added: the model reasons (Started)
		r(providers.ReasoningDelta{Text: "**Weather** first."}),
		r(providers.ReasoningDelta{Text: "\n\nThen answer."}),
		r(providers.ReasoningDelta{Encrypted: "gAAAAenc1", EncryptedBy: "openai"}),
		{Text: "Let me check."},
		call(providers.ToolCallDelta{Index: 0, ID: "call_A", Name: "get_weather"}),
		call(providers.ToolCallDelta{Index: 0, Arguments: `{"city":`}),
		call(providers.ToolCallDelta{Index: 0, Arguments: `"Paris"}`}),
		call(providers.ToolCallDelta{Index: 1, ID: "call_B", Name: "get_time"}),
		call(providers.ToolCallDelta{Index: 1, Arguments: `{}`}),
		{FinishReason: "tool_calls", Usage: &providers.Usage{PromptTokens: 50, CompletionTokens: 120, ReasoningTokens: 64, CachedTokens: 10}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("chunks\n%s\nwant\n%s", jsonOf(got), jsonOf(want))
	}
	if path, body := f.lastCall(t); path != "/v1/responses" || body["stream"] != true {
		t.Errorf("streamed to %s with %s", path, jsonOf(body))
	}

	for _, tc := range []struct {
		name, events string
		kind         providers.ErrorKind
	}{
		{"cut before completed", responsesEvents[:strings.Index(responsesEvents, "event: response.completed")], providers.KindStreamBroken},
		{"error event", "event: error\ndata: {\"type\":\"error\",\"code\":\"rate_limit_exceeded\",\"message\":\"Rate limit reached\"}\n\n", providers.KindRateLimited},
		{"failed", "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"boom\"}}}\n\n", providers.KindOverloaded},
		{"content filter", "event: response.incomplete\ndata: {\"type\":\"response.incomplete\",\"response\":{\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"content_filter\"},\"usage\":{\"input_tokens\":4,\"output_tokens\":2}}}\n\n", providers.KindContentFilter},
	} {
		f.responses = tc.events
		s, err := p.Stream(context.Background(), thinkingUser("gpt-5-codex", nil))
		if err != nil {
			t.Fatal(err)
		}
		for err == nil {
			_, err = s.Recv()
		}
		s.Close()
		if providers.KindOf(err) != tc.kind {
			t.Errorf("%s: %v, want kind %s", tc.name, err, tc.kind)
		}
	}
	f.responses = "event: response.incomplete\ndata: {\"type\":\"response.incomplete\",\"response\":{\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"max_output_tokens\"}}}\n\n"
	s, err = p.Stream(context.Background(), thinkingUser("gpt-5-codex", nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := collect(t, s); len(got) != 1 || got[0].FinishReason != "length" {
		t.Errorf("incomplete: %s", jsonOf(got))
	}
}

// TestOpenAIResponsesStop: the Responses API has no stop sequences: a request with them is
// refused before anything is sent (Check names the field, so a gateway can pick another
// model), while chat completions still take them.
func TestOpenAIResponsesStop(t *testing.T) {
	f := newFakeOpenAIAPI(t, responsesAnswer)
	p := f.provider(t, "openai", "")
	req := thinkingUser("gpt-5-codex", nil)
	req.Stop = []string{"END"}
	var ue *providers.UnsupportedError
	if err := providers.Check(p, req.Model, req); !errors.As(err, &ue) || ue.Field != "stop" {
		t.Errorf("Check = %v, want an UnsupportedError on stop", err)
	}
	if _, err := p.Complete(context.Background(), req); providers.KindOf(err) != providers.KindBadRequest {
		t.Errorf("Complete = %v, want bad request", err)
	}
	if len(f.paths) != 0 {
		t.Errorf("sent %v", f.paths)
	}
	req.Model = "gpt-4o"
	if err := providers.Check(p, req.Model, req); err != nil {
		t.Errorf("gpt-4o with stop: %v", err)
	}
}

// TestCatalogPricesResponsesOnlyModels: OpenAI's models only the Responses API serves are
// in the catalogue (priced, listed), other providers' responses-mode entries are not.
func TestCatalogPricesResponsesOnlyModels(t *testing.T) {
	c := providers.DefaultCatalog()
	for _, m := range []string{"openai/gpt-5-codex", "openai/o3-pro", "openai/codex-mini-latest"} {
		if p, ok := c.Lookup(m); !ok || !p.Known || p.InputPerToken <= 0 {
			t.Errorf("%s: %+v %v, want a known price", m, p, ok)
		}
		if !slices.Contains(c.ChatModels("openai"), m) {
			t.Errorf("%s not listed among openai's chat models", m)
		}
	}
	if _, ok := c.Lookup("perplexity/preset/deep-research"); ok {
		t.Error("perplexity's responses-mode preset is in the catalogue")
	}
}

// benchResponsesStream relays a Responses API stream of 1000 events like event (then the
// completed response), for comparison with the chat-completions stream benchmarks.
func benchResponsesStream(b *testing.B, added, event string) {
	var body strings.Builder
	body.WriteString("event: response.output_item.added\ndata: " + added + "\n\n")
	for range 1000 {
		body.WriteString("event: x\ndata: " + event + "\n\n")
	}
	body.WriteString("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1000}}}\n\n")
	p := providers.NewOpenAI(providers.Config{APIKey: testKey, ResponsesAPI: providers.ResponsesAlways,
		HTTPClient: &http.Client{Transport: replayTransport{[]byte(body.String())}}})
	benchRelay(b, p, thinkingUser("gpt-5-codex", nil))
}

// BenchmarkOpenAIResponsesTextStream: output_text deltas (BenchmarkOpenAITextStreamFullWalk
// is the chat-completions stream's).
func BenchmarkOpenAIResponsesTextStream(b *testing.B) {
	benchResponsesStream(b, `{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`,
		`{"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"tok7 ","logprobs":[]}`)
}

// BenchmarkOpenAIResponsesArgumentsStream: a function call's argument deltas.
func BenchmarkOpenAIResponsesArgumentsStream(b *testing.B) {
	benchResponsesStream(b, `{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","call_id":"call_A","name":"f","arguments":""}}`,
		`{"type":"response.function_call_arguments.delta","sequence_number":7,"item_id":"fc_1","output_index":0,"delta":"ation"}`)
}

// TestOpenAIResponsesSearch: on OpenAI's own API, a request with Search goes to the
// Responses API with its web_search tool for the models that have it, the search-preview
// models stay on chat completions' web_search_options, and models and upstreams without
// either have no search (SupportsSearch false, the request refused before it is sent).
func TestOpenAIResponsesSearch(t *testing.T) {
	f := newFakeOpenAIAPI(t, responsesAnswer)
	p := f.provider(t, "openai", "")
	for model, want := range map[string]bool{"gpt-4o": true, "gpt-4o-mini": true, "gpt-4.1": true, "gpt-4.1-nano": false, "gpt-5": true,
		"gpt-5-codex": true, "o3": true, "o3-mini": false, "o4-mini": true, "gpt-4o-search-preview": true, "gpt-3.5-turbo": false, "gpt-5-chat-latest": false} {
		if got := providers.SupportsSearch(p, model); got != want {
			t.Errorf("SupportsSearch(%s) = %v, want %v", model, got, want)
		}
	}
	for _, tc := range []struct{ model, path, sent string }{
		{"gpt-4o", "/v1/responses", `[{"type":"web_search"}]`},
		{"gpt-4o-search-preview", "/v1/chat/completions", `{}`},
	} {
		req := thinkingUser(tc.model, nil)
		req.Search = true
		if _, err := p.Complete(context.Background(), req); err != nil {
			t.Fatalf("%s: %v", tc.model, err)
		}
		path, body := f.lastCall(t)
		sent := body["tools"]
		if path == "/v1/chat/completions" {
			sent = body["web_search_options"]
		}
		if path != tc.path || jsonOf(sent) != tc.sent {
			t.Errorf("%s: %s with %s, want %s with %s", tc.model, path, jsonOf(sent), tc.path, tc.sent)
		}
	}
	// GPT-5 searches from low effort up.
	req := &providers.Request{Model: "gpt-5", Search: true, Messages: []providers.Message{{Role: "user", Content: "News?"}},
		OpenAIOptions: providers.OpenAIOptions{ReasoningEffort: "minimal"}}
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if _, body := f.lastCall(t); jsonOf(body["reasoning"]) != `{"effort":"low"}` {
		t.Errorf("gpt-5 minimal with search: reasoning %s", jsonOf(body["reasoning"]))
	}
	for _, cp := range []providers.Provider{f.provider(t, "groq", ""), f.provider(t, "openai", providers.ResponsesNever)} {
		if providers.SupportsSearch(cp, "gpt-4o") {
			t.Errorf("%s: gpt-4o searches", cp.Name())
		}
	}
}

// TestOpenAIReasoningModelStreamsSayTheyReason: OpenAI's reasoning models show nothing of
// their reasoning on chat completions, so their streams on OpenAI's own API begin by saying
// they reason (ReasoningDelta.Started), which a relay reads as work, not silence; other
// models and other upstreams do not.
func TestOpenAIReasoningModelStreamsSayTheyReason(t *testing.T) {
	up := newFakeUpstream(t, "text/event-stream", "data: "+`{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	for _, tc := range []struct {
		name, model string
		want        bool
	}{{"openai", "o3", true}, {"openai", "gpt-5-mini", true}, {"openai", "gpt-4o", false}, {"groq", "o3", false}} {
		p, err := providers.New(providers.FormatOpenAI, providers.Config{Name: tc.name, BaseURL: up.srv.URL + "/v1", APIKey: testKey, HTTPClient: up.srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		s, err := p.Stream(context.Background(), thinkingUser(tc.model, nil))
		if err != nil {
			t.Fatal(err)
		}
		got := collect(t, s)
		said := len(got) > 0 && got[0].Reasoning != nil && got[0].Reasoning.Started()
		if said != tc.want || got[len(got)-1].Text != "Hi" && got[len(got)-1].FinishReason == "" {
			t.Errorf("%s/%s: chunks %s, want a first Started reasoning delta: %v", tc.name, tc.model, jsonOf(got), tc.want)
		}
	}
}

// TestOpenAIResponsesSearchCalls: the web_search_call items of an answer (OpenAI bills each)
// are counted in its usage, whole and streamed, and priced from the catalogue: Claude's and
// Gemini's per-query fees as LiteLLM lists them, OpenAI's web_search call at its list price.
func TestOpenAIResponsesSearchCalls(t *testing.T) {
	const answer = `{"status":"completed","model":"gpt-5","output":[{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}},` +
		`{"type":"web_search_call","id":"ws_2","status":"completed"},{"type":"message","content":[{"type":"output_text","text":"Found.","annotations":[` +
		`{"type":"url_citation","start_index":0,"end_index":6,"url":"https://example.com/a","title":"A"},{"type":"url_citation","start_index":0,"end_index":6,"url":"https://example.com/a","title":"A"}]}]}],` +
		`"usage":{"input_tokens":10,"output_tokens":5}}`
	f := newFakeOpenAIAPI(t, answer)
	p := f.provider(t, "openai", "")
	req := thinkingUser("gpt-5", nil)
	req.Search = true
	resp, err := p.Complete(context.Background(), req)
	if err != nil || resp.Usage.WebSearches != 2 || resp.Text != "Found." || len(resp.Sources) != 1 || resp.Sources[0].URL != "https://example.com/a" {
		t.Fatalf("%+v %v", resp, err)
	}
	f.responses = "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"web_search_call\",\"id\":\"ws_1\",\"status\":\"completed\"}}\n\n" +
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":1,\"delta\":\"Found.\"}\n\n" +
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"usage\":{\"input_tokens\":10,\"output_tokens\":5}}}\n\n"
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, s)
	if last := got[len(got)-1]; last.Usage == nil || last.Usage.WebSearches != 1 {
		t.Errorf("streamed usage %s", jsonOf(last))
	}

	c := providers.DefaultCatalog()
	for model, want := range map[string]float64{"openai/gpt-5": 0.01, "openai/o3": 0.01, "openai/gpt-4o": 0.025, "openai/gpt-3.5-turbo": 0,
		"anthropic/claude-sonnet-4-5": 0.01, "gemini/gemini-2.5-flash": 0.035} {
		if p, ok := c.Lookup(model); !ok || p.SearchPerQuery != want {
			t.Errorf("%s: search fee %v (%v), want %v", model, p.SearchPerQuery, ok, want)
		}
	}
	if cost := c.Cost("openai/gpt-5", providers.Usage{PromptTokens: 10, WebSearches: 3}); cost.SearchUSD != 0.03 || cost.TotalUSD >= 0.001 {
		t.Errorf("cost %+v", cost)
	}
}

// TestOpenAIResponsesUnverifiedOrganisation: OpenAI refuses reasoning summaries to an
// organisation that is not verified; the call is made again at once without the summary
// (the answer and its encrypted reasoning still come), and no summary is asked afterwards.
func TestOpenAIResponsesUnverifiedOrganisation(t *testing.T) {
	var mu sync.Mutex
	var summaries []any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		reasoning, _ := body["reasoning"].(map[string]any)
		mu.Lock()
		summaries = append(summaries, reasoning["summary"])
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if reasoning["summary"] != nil {
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"message":"Your organization must be verified to generate reasoning summaries. Please go to: https://platform.openai.com/settings/organization/general and click on Verify Organization.","type":"invalid_request_error","param":"reasoning.summary","code":"unsupported_value"}}`)
			return
		}
		io.WriteString(w, responsesAnswer)
	}))
	t.Cleanup(srv.Close)
	p := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL + "/v1", APIKey: testKey, HTTPClient: srv.Client()})
	for i := range 2 {
		resp, err := p.Complete(context.Background(), thinkingUser("o3", &providers.Thinking{Effort: "low", Summary: true}))
		if err != nil || resp.Text != "Let me check." || len(resp.Reasoning) != 1 || resp.Reasoning[0].Encrypted == "" {
			t.Fatalf("request %d: %+v %v", i, resp, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(summaries) != 3 || summaries[0] != "auto" || summaries[1] != nil || summaries[2] != nil {
		t.Errorf("summaries asked, call by call: %v; want auto once, then none", summaries)
	}
}
