package completions

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

func messagesRequest(t *testing.T, body string) (*AnthropicMessagesRequest, *OpenAIChatRequest, error) {
	t.Helper()
	var r AnthropicMessagesRequest
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	c, err := r.ToChatRequest()
	return &r, c, err
}

// TestAnthropicMessagesTranslation: a Messages request becomes the chat request the
// gateway answers — system blocks, turns in order, tool_use blocks as calls, tool_result
// blocks as tool messages before the turn's other blocks, images and PDFs as parts,
// thinking blocks kept with their assistant turn, tool_choice and its parallel flag, metadata.user_id as user.
func TestAnthropicMessagesTranslation(t *testing.T) {
	_, c, err := messagesRequest(t, `{"model":"a/m","max_tokens":100,"temperature":0.5,"stop_sequences":["END"],
		"system":[{"type":"text","text":"Be brief."},{"type":"text","text":"Use tools.","cache_control":{"type":"ephemeral"}}],
		"metadata":{"user_id":"u-1"},"thinking":{"type":"enabled","budget_tokens":1024},"top_k":5,
		"tools":[{"name":"look","description":"Look","input_schema":{"type":"object","properties":{"q":{"type":"string"}}}}],
		"tool_choice":{"type":"any","disable_parallel_tool_use":true},
		"messages":[
			{"role":"user","content":"Find cats."},
			{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"s"},{"type":"text","text":"Looking."},
				{"type":"tool_use","id":"toolu_1","name":"look","input":{"q":"cats"}},{"type":"tool_use","id":"toolu_2","name":"look","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"a cat"},{"type":"text","text":"a lion"}]},
				{"type":"tool_result","tool_use_id":"toolu_2","content":"nothing","is_error":true},
				{"type":"text","text":"And this?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
				{"type":"image","source":{"type":"url","url":"https://example.com/a.jpg"}},
				{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjQK"},"title":"q3.pdf"},
				{"type":"document","source":{"type":"text","media_type":"text/plain","data":"plain notes"}}]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(c.Messages)
	want := `[{"role":"system","content":"Be brief.\nUse tools."},{"role":"user","content":"Find cats."},` +
		`{"role":"assistant","content":"Looking.","tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"look","arguments":"{\"q\":\"cats\"}"}},` +
		`{"id":"toolu_2","type":"function","function":{"name":"look","arguments":"{}"}}],"thinking_blocks":[{"type":"thinking","thinking":"hmm","signature":"s"}]},` +
		`{"role":"tool","content":"a cat\na lion","tool_call_id":"toolu_1"},{"role":"tool","content":"Error: nothing","tool_call_id":"toolu_2"},` +
		`{"role":"user","content":[{"type":"text","text":"And this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},` +
		`{"type":"image_url","image_url":{"url":"https://example.com/a.jpg"}},{"type":"file","file":{"file_data":"data:application/pdf;base64,JVBERi0xLjQK","filename":"q3.pdf"}},` +
		`{"type":"text","text":"plain notes"}]}]`
	if string(got) != want {
		t.Errorf("messages =\n%s\nwant\n%s", got, want)
	}
	if c.topK == nil || *c.topK != 5 {
		t.Errorf("top_k %v, want 5", c.topK)
	}
	if *c.MaxCompletionTokens != 100 || *c.Temperature != 0.5 || c.Stop[0] != "END" || c.User != "u-1" ||
		c.ToolChoice.Mode != providers.ToolChoiceRequired || *c.ParallelToolCalls || len(c.Tools) != 1 || c.Tools[0].Function.Name != "look" {
		t.Errorf("request %+v", c)
	}
	if _, err := c.ToRequest(); err != nil {
		t.Errorf("ToRequest: %v", err)
	}
	for tc, want := range map[string]OpenAIToolChoice{`{"type":"auto"}`: {Mode: "auto"}, `{"type":"none"}`: {Mode: "none"},
		`{"type":"tool","name":"look"}`: {Mode: "function", Name: "look"}} {
		_, c, err := messagesRequest(t, `{"model":"a/m","max_tokens":1,"messages":[{"role":"user","content":"x"}],"tool_choice":`+tc+`}`)
		if err != nil || *c.ToolChoice != want || c.ParallelToolCalls != nil {
			t.Errorf("tool_choice %s: %+v, %v", tc, c, err)
		}
	}
}

func TestAnthropicMessagesRefusals(t *testing.T) {
	for _, c := range []struct{ body, field, msg string }{
		{`{"model":"a/m","messages":[{"role":"user","content":"x"}]}`, "max_tokens", "is required"},
		{`{"model":"a/m","max_tokens":0,"messages":[{"role":"user","content":"x"}]}`, "max_tokens", "at least 1"},
		{`{"model":"a/m","max_tokens":5,"temperature":1.5,"messages":[{"role":"user","content":"x"}]}`, "temperature", "between 0 and 1"},
		{`{"model":"a/m","max_tokens":5,"top_k":0,"messages":[{"role":"user","content":"x"}]}`, "top_k", "at least 1"},
		{`{"model":"a/m","max_tokens":5,"messages":[]}`, "messages", "at least one"},
		{`{"model":"a/m","max_tokens":5,"messages":[{"role":"tool","content":"x"}]}`, "messages[0].role", `"user", "assistant" or "system"`},
		{`{"model":"a/m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"output_config":{"format":{"type":"regex"}}}`, "output_config.format.type", "json_schema"},
		{`{"model":"a/m","max_tokens":5,"system":[{"type":"image"}],"messages":[{"role":"user","content":"x"}]}`, "system[0].type", `must be "text"`},
		{`{"model":"a/m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_use","id":"t","name":"n","input":{}}]}]}`, "messages[0].content[0].type", "assistant turns"},
		{`{"model":"a/m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"t"}]}]}`, "messages[0].content[0].type", "user turns"},
		{`{"model":"a/m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result"}]}]}`, "messages[0].content[0].tool_use_id", "is required"},
		{`{"model":"a/m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"search_result"}]}]}]}`,
			"messages[0].content[0].content[0].type", "text, image or document"},
		{`{"model":"a/m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"base64","media_type":"image/bmp","data":"AAAA"}}]}]}]}`,
			"messages[0].content[0].content[0].source", `type "image/bmp"`},
		{`{"model":"a/m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/bmp","data":"AAAA"}}]}]}`,
			"messages[0].content[0].source", `type "image/bmp"`},
		{`{"model":"a/m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"image"}]}]}`, "messages[0].content[0].source", "is required"},
		{`{"model":"a/m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}]}`, "messages[0].content[0].source.type", "base64 or url"},
		{`{"model":"a/m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"search_result"}]}]}`, "messages[0].content[0].type", "must be text"},
		{`{"model":"a/m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"type":"code_execution_20250522","name":"code_execution"}]}`, "tools[0].type", "server tool"},
		{`{"model":"a/m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"tool"}}`, "tool_choice.name", "is required"},
		{`{"model":"a/m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"some"}}`, "tool_choice.type", "auto, any, tool or none"},
	} {
		_, _, err := messagesRequest(t, c.body)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field || !strings.Contains(ve.Message, c.msg) {
			t.Errorf("%s:\n  err = %v, want field %s with %q", c.body, err, c.field, c.msg)
		}
	}
	// The gateway's own checks name the Messages API's fields.
	h := newHarness(t, nil)
	for body, field := range map[string]string{
		`{"model":"a/m","max_tokens":5,"system":"Be brief.","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"},{"role":"user","content":"  "}]}`: "messages[2].content",
		`{"model":"a/m","max_tokens":5,"stop_sequences":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"],"messages":[{"role":"user","content":"x"}]}`: "stop_sequences",
		`{"model":"nope","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`:                                                                                       "model",
		// a/m has no web search: the web_search tool that asks for it is the field.
		`{"model":"a/m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":8}]}`: "tools[0]",
	} {
		_, c, err := messagesRequest(t, body)
		if err != nil {
			t.Fatal(err)
		}
		req, err := c.ToRequest()
		if err == nil {
			_, err = h.g.Complete(context.Background(), Scope{}, req)
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("%s:\n  err = %v, want field %s", body, err, field)
		}
	}
}

func TestAnthropicResponse(t *testing.T) {
	resp := &Response{ResponseMessageID: "r1", Provider: "a", Model: "m", FinishReason: "tool_calls",
		Message:   AssistantMessage{Role: "assistant", Type: "text", Content: []ContentBlock{{Type: "text", Text: "Looking."}}},
		ToolCalls: []providers.ToolCall{{ID: "call_1", Name: "look", Arguments: `{"q": "cats"}`}, {ID: "call_2", Name: "look", Arguments: `{"q": "ca`}},
		Usage:     Usage{PromptTokens: 100, CachedTokens: 60, CompletionTokens: 7, TotalTokens: 107}}
	got, _ := json.Marshal(NewAnthropicResponse(resp, "claude-x"))
	for _, want := range []string{`"id":"msg_r1"`, `"type":"message"`, `"model":"claude-x"`, `"stop_reason":"tool_use"`, `"stop_sequence":null`,
		`"content":[{"type":"text","text":"Looking."},{"type":"tool_use","id":"call_1","name":"look","input":{"q":"cats"}},{"type":"tool_use","id":"call_2","name":"look","input":{}}]`,
		`"usage":{"input_tokens":40,"output_tokens":7,"cache_read_input_tokens":60,"cache_creation_input_tokens":0}`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("message %s\nlacks %s", got, want)
		}
	}
	for finish, want := range map[string]string{"stop": "end_turn", "length": "max_tokens", "content_filter": "refusal", "": "end_turn"} {
		r := &Response{FinishReason: finish}
		if got := *NewAnthropicResponse(r, "m").StopReason; got != want {
			t.Errorf("finish %q: stop_reason %q, want %q", finish, got, want)
		}
	}
	if m := NewAnthropicResponse(&Response{FinishReason: "stop", StopSequence: "END"}, "m"); *m.StopReason != "stop_sequence" || m.StopSequence == nil || *m.StopSequence != "END" {
		t.Errorf("a stop sequence's answer: stop_reason %v, stop_sequence %v", *m.StopReason, m.StopSequence)
	}
	if m := NewAnthropicResponse(&Response{}, "m"); m.Content == nil || len(m.Content) != 0 {
		t.Errorf("an empty answer's content %#v, want []", m.Content)
	}
}

// TestAnthropicStream: text streams as one text block of text_deltas; tool calls — here
// interleaved by the upstream — arrive as whole tool_use blocks after it; message_delta
// has the stop reason and the usage.
func TestAnthropicStream(t *testing.T) {
	names, datas := anthropicStreamEvents(t, interleavedCalls("Let me check."))
	wantNames := "message_start ping content_block_start content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_stop content_block_start content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(names, " "); got != wantNames {
		t.Fatalf("events\n%s\nwant\n%s", got, wantNames)
	}
	if d := datas[3]["delta"].(map[string]any); d["type"] != "text_delta" || d["text"] != "Let me check." {
		t.Errorf("text delta %v", d)
	}
	for i, want := range map[int][3]string{5: {"call_a", "get_weather", `{"location": "Paris"}`}, 8: {"call_b", "get_time", `{"tz": "Europe/Paris"}`}} {
		cb := datas[i]["content_block"].(map[string]any)
		delta := datas[i+1]["delta"].(map[string]any)
		if cb["type"] != "tool_use" || cb["id"] != want[0] || cb["name"] != want[1] || datas[i]["index"] != float64((i-2)/3) ||
			delta["type"] != "input_json_delta" || delta["partial_json"] != want[2] {
			t.Errorf("tool block %d: %v %v, want %v", i, cb, delta, want)
		}
	}
	md := datas[11]
	if md["delta"].(map[string]any)["stop_reason"] != "tool_use" || md["usage"].(map[string]any)["output_tokens"] != float64(12) ||
		md["usage"].(map[string]any)["input_tokens"] != float64(40) {
		t.Errorf("message_delta %v", md)
	}

	// While the upstream is silent — a model thinking, a long tool call held — pings keep
	// the connection visibly alive, and the blocks are the same.
	defer func(d time.Duration) { anthropicKeepalive = d }(anthropicKeepalive)
	anthropicKeepalive = 5 * time.Millisecond
	names, _ = anthropicStreamEvents(t, func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		startStream(w)
		writeEvent(w, `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}`)
		time.Sleep(200 * time.Millisecond) // 40 keepalive periods
		writeEvent(w, `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`)
		writeEvent(w, "[DONE]")
	})
	if n := strings.Count(strings.Join(names, " "), "ping"); n < 2 {
		t.Errorf("%d pings while the upstream was silent: %v", n, names)
	}
	var blocks []string
	for _, n := range names {
		if n != "ping" {
			blocks = append(blocks, n)
		}
	}
	if got := strings.Join(blocks, " "); got != "message_start content_block_start content_block_stop message_delta message_stop" {
		t.Errorf("events without pings: %s", got)
	}
}

// anthropicStreamEvents streams what the upstream behaviour answers through
// WriteAnthropicStream and returns the events' names and data.
func anthropicStreamEvents(t *testing.T, answer behaviour) ([]string, []map[string]any) {
	t.Helper()
	g, up := responsesGateway(t)
	up.on("m", answer)
	_, c, err := messagesRequest(t, `{"model":"up/m","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"Weather and time?"}],
		"tools":[{"name":"get_weather","input_schema":{"type":"object"}},{"name":"get_time","input_schema":{"type":"object"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	req, err := c.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := g.Stream(ctx, Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := WriteAnthropicStream(rec, st, "up/m"); err != nil {
		t.Fatal(err)
	}
	var names []string
	var datas []map[string]any
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, name)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var m map[string]any
			json.Unmarshal([]byte(data), &m)
			if m["type"] != names[len(names)-1] {
				t.Errorf("event %s carries type %v", names[len(names)-1], m["type"])
			}
			datas = append(datas, m)
		}
	}
	return names, datas
}

// TestAnthropicMessagesClaudeCodeShapes: what Claude Code sends beyond the basics — system
// turns in the conversation, its billing header among the system blocks, images in tool
// results (moved to the user turn after the results, where every provider takes them),
// structured output through output_config — and its max_tokens, fitted to each model.
func TestAnthropicMessagesClaudeCodeShapes(t *testing.T) {
	_, c, err := messagesRequest(t, `{"model":"a/m","max_tokens":100,
		"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.197; cch=abc;"},{"type":"text","text":"You are Claude Code."}],
		"output_config":{"format":{"type":"json_schema","schema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}},
		"messages":[{"role":"user","content":"Look at the screenshot."},
			{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"a.png"}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]},
				{"type":"text","text":"What is it?"}]},
			{"role":"system","content":"The user is on a slow network."}]}`)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(c.Messages)
	want := `[{"role":"system","content":"You are Claude Code."},{"role":"user","content":"Look at the screenshot."},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"a.png\"}"}}]},` +
		`{"role":"tool","content":"(the result is the image or document that follows)","tool_call_id":"toolu_1"},` +
		`{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},{"type":"text","text":"What is it?"}]},` +
		`{"role":"system","content":"The user is on a slow network."}]`
	if string(got) != want {
		t.Errorf("messages =\n%s\nwant\n%s", got, want)
	}
	if f := c.ResponseFormat; f == nil || f.Type != providers.ResponseJSONSchema || f.JSONSchema == nil || string(f.JSONSchema.Schema) != `{"type":"object","properties":{"ok":{"type":"boolean"}}}` {
		t.Errorf("response format %+v", c.ResponseFormat)
	}
	req, err := c.ToRequest()
	if err != nil {
		t.Fatal(err)
	}

	// max_tokens is fitted to each model's catalogued output limit on this surface only.
	fake := newFake("openai")
	fake.on("gpt-4o-mini", step{text: "{\"ok\":true}"})
	h := newHarness(t, func(o *Options) { o.Providers = fakeRegistry{"openai": fake}; o.Prices = providers.DefaultCatalog() })
	limit, _ := providers.DefaultCatalog().Lookup("openai/gpt-4o-mini")
	if limit.MaxOutputTokens == 0 || limit.MaxOutputTokens >= 32000 {
		t.Fatalf("catalogue limit %d", limit.MaxOutputTokens)
	}
	_, c, _ = messagesRequest(t, `{"model":"openai/gpt-4o-mini","max_tokens":32000,"messages":[{"role":"user","content":"hi"}]}`)
	if req, err = c.ToRequest(); err != nil {
		t.Fatal(err)
	}
	if _, err := h.g.Complete(context.Background(), Scope{}, req); err != nil {
		t.Fatal(err)
	}
	if got := fake.lastRequest().MaxTokens; got != limit.MaxOutputTokens {
		t.Errorf("the upstream got max_tokens %d, want the model's limit %d", got, limit.MaxOutputTokens)
	}
	var o OpenAIChatRequest
	json.Unmarshal([]byte(`{"model":"openai/gpt-4o-mini","max_tokens":32000,"messages":[{"role":"user","content":"hi"}]}`), &o)
	oreq, _ := o.ToRequest()
	if _, err := h.g.Complete(context.Background(), Scope{}, oreq); err != nil {
		t.Fatal(err)
	}
	if got := fake.lastRequest().MaxTokens; got != 32000 {
		t.Errorf("on /v1/chat/completions the upstream got max_tokens %d, want the caller's 32000", got)
	}
}

// TestAnthropicPromptCache: a Messages request that marks cache_control anywhere asks the
// providers for prompt caching; one that marks none does not; the answer reports cache
// reads and writes apart from the other input tokens.
func TestAnthropicPromptCache(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "ok", usage: providers.Usage{PromptTokens: 2000, CompletionTokens: 5, CachedTokens: 1500, CacheCreationTokens: 400}})
	for body, want := range map[string]bool{
		`{"model":"a/m","max_tokens":5,"system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"x"}]}`:                                                                                                                                                           true,
		`{"model":"a/m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}]}]}`:                                                                                                                                                                        true,
		`{"model":"a/m","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"r","cache_control":{"type":"ephemeral"}}]}]}]}`: true,
		`{"model":"a/m","max_tokens":5,"tools":[{"name":"f","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"x"}]}`:                                                                                                                                         true,
		`{"model":"a/m","max_tokens":5,"system":"S","top_k":7,"messages":[{"role":"user","content":"x"}]}`:                                                                                                                                                                                                               false,
	} {
		_, c, err := messagesRequest(t, body)
		if err != nil {
			t.Fatal(err)
		}
		req, err := c.ToRequest()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := h.g.Complete(context.Background(), Scope{}, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := h.a.lastRequest().PromptCache; got != want {
			t.Errorf("%s: PromptCache %v, want %v", body, got, want)
		}
		if k := h.a.lastRequest().TopK; strings.Contains(body, "top_k") != (k != nil && *k == 7) {
			t.Errorf("%s: top_k reached the provider as %v", body, k)
		}
		u := NewAnthropicResponse(resp, "a/m").Usage
		if u.InputTokens != 100 || u.CacheReadInputTokens != 1500 || u.CacheCreationInputTokens != 400 || u.OutputTokens != 5 {
			t.Errorf("usage %+v, want 100 input, 1,500 read, 400 written", u)
		}
	}
}

// TestStopSequenceThroughTheGateway: the stop sequence Claude reports reaches the answer,
// whole and streamed, and the Messages surface says stop_sequence.
func TestStopSequenceThroughTheGateway(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Stream bool }
		json.NewDecoder(r.Body).Decode(&body)
		if !body.Stream {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"m","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"one two"}],"stop_reason":"stop_sequence","stop_sequence":"END","usage":{"input_tokens":5,"output_tokens":2}}`))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range []string{
			`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude-x","content":[],"usage":{"input_tokens":5,"output_tokens":0}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"one two"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"END"},"usage":{"output_tokens":2}}`,
			`{"type":"message_stop"}`,
		} {
			var ev struct{ Type string }
			json.Unmarshal([]byte(e), &ev)
			w.Write([]byte("event: " + ev.Type + "\ndata: " + e + "\n\n"))
		}
	}))
	defer up.Close()
	claude := providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: up.URL, APIKey: "k", HTTPClient: up.Client()})
	h := newHarness(t, func(o *Options) { o.Providers = fakeRegistry{"anthropic": claude} })
	_, c, err := messagesRequest(t, `{"model":"anthropic/claude-x","max_tokens":50,"stop_sequences":["END"],"messages":[{"role":"user","content":"count"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	req, err := c.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.g.Complete(context.Background(), Scope{}, req)
	if err != nil || resp.StopSequence != "END" || *NewAnthropicResponse(resp, "anthropic/claude-x").StopReason != "stop_sequence" {
		t.Fatalf("whole: %+v, %v", resp, err)
	}
	req.Stream = true
	st, err := h.g.Stream(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := WriteAnthropicStream(rec, st, "anthropic/claude-x"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rec.Body.String(), `"delta":{"stop_reason":"stop_sequence","stop_sequence":"END"}`) {
		t.Errorf("streamed: %s", rec.Body.String())
	}
}

// TestAnthropicStreamMessageStartUsage: a Messages stream's message_start reports the
// prompt's tokens as Anthropic's does (clients such as LangChain's read the input tokens
// there): Claude's own count when it gave one at its start, else a local count.
func TestAnthropicStreamMessageStartUsage(t *testing.T) {
	claude := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":42,"cache_read_input_tokens":100,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}`,
			`{"type":"message_stop"}`,
		} {
			var typ struct{ Type string }
			json.Unmarshal([]byte(ev), &typ)
			w.Write([]byte("event: " + typ.Type + "\ndata: " + ev + "\n\n"))
		}
	}))
	defer claude.Close()
	reg := fakeRegistry{"anthropic": providers.NewAnthropic(providers.Config{BaseURL: claude.URL, APIKey: "k", HTTPClient: claude.Client()}), "b": newFake("b")}
	g, err := New(Options{Providers: reg, Prices: fakePrices{}})
	if err != nil {
		t.Fatal(err)
	}
	for model, want := range map[string]func(float64) bool{
		"anthropic/claude-sonnet-4-5": func(n float64) bool { return n == 42 },
		"b/m":                         func(n float64) bool { return n > 0 }, // counted locally
	} {
		_, c, _ := messagesRequest(t, `{"model":"`+model+`","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"Say hi to everyone in the room"}]}`)
		req, err := c.ToRequest()
		if err != nil {
			t.Fatal(err)
		}
		st, err := g.Stream(context.Background(), Scope{}, req)
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		if err := WriteAnthropicStream(rec, st, model); err != nil {
			t.Fatal(err)
		}
		_, data, _ := strings.Cut(rec.Body.String(), "data: ")
		line, _, _ := strings.Cut(data, "\n")
		var start struct {
			Message struct {
				Usage map[string]float64 `json:"usage"`
			} `json:"message"`
		}
		json.Unmarshal([]byte(line), &start)
		if u := start.Message.Usage; !want(u["input_tokens"]) || u["output_tokens"] != 1 ||
			model == "anthropic/claude-sonnet-4-5" && u["cache_read_input_tokens"] != 100 {
			t.Errorf("%s: message_start usage %v", model, u)
		}
	}
}

// TestAnthropicPromptCacheTTL: a cache_control ttl of "1h" on the caller's tools, system
// prompt or messages asks the provider to keep that part an hour — each as marked, so a
// caller keeping its tools an hour and its system prompt 5 minutes pays one-hour writes for
// the tools only; the answer's one-hour writes are reported as Anthropic splits them.
func TestAnthropicPromptCacheTTL(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "ok", usage: providers.Usage{PromptTokens: 2000, CompletionTokens: 5, CacheCreationTokens: 1500, CacheCreation1hTokens: 1000}})
	const (
		tools1h  = `"tools":[{"name":"f","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral","ttl":"1h"}}],`
		tools5m  = `"tools":[{"name":"f","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral","ttl":"5m"}}],`
		system1h = `"system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral","ttl":"1h"}}],`
		system5m = `"system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral","ttl":"5m"}}],`
	)
	for body, want := range map[string][3]string{ // tools, system, messages
		`{"model":"a/m","max_tokens":5,` + system1h + `"messages":[{"role":"user","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}]}]}`: {"", "1h", ""},
		`{"model":"a/m","max_tokens":5,` + tools1h + `"messages":[{"role":"user","content":"x"}]}`:                                                                {"1h", "", ""},
		`{"model":"a/m","max_tokens":5,` + tools1h + system5m + `"messages":[{"role":"user","content":"x"}]}`:                                                     {"1h", "", ""},
		`{"model":"a/m","max_tokens":5,` + tools5m + system1h + `"messages":[{"role":"user","content":"x"}]}`:                                                     {"", "1h", ""},
		`{"model":"a/m","max_tokens":5,` + tools1h + system1h + `"messages":[{"role":"user","content":"x"}]}`:                                                     {"1h", "1h", ""},
		`{"model":"a/m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral","ttl":"1h"}}]}]}`:      {"", "", "1h"},
		`{"model":"a/m","max_tokens":5,` + system5m + `"messages":[{"role":"user","content":"x"}]}`:                                                               {"", "", ""},
		// Automatic caching: one top-level cache_control.
		`{"model":"a/m","max_tokens":5,"cache_control":{"type":"ephemeral"},"messages":[{"role":"user","content":"x"}]}`:            {"", "", ""},
		`{"model":"a/m","max_tokens":5,"cache_control":{"type":"ephemeral","ttl":"1h"},"messages":[{"role":"user","content":"x"}]}`: {"", "", "1h"},
	} {
		_, c, err := messagesRequest(t, body)
		if err != nil {
			t.Fatal(err)
		}
		req, err := c.ToRequest()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := h.g.Complete(context.Background(), Scope{}, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := h.a.lastRequest(); !got.PromptCache || got.PromptCacheToolsTTL != want[0] || got.PromptCacheTTL != want[1] || got.PromptCacheTailTTL != want[2] {
			t.Errorf("%s: cache %v tools %q system %q tail %q, want %q", body, got.PromptCache, got.PromptCacheToolsTTL, got.PromptCacheTTL, got.PromptCacheTailTTL, want)
		}
		u := NewAnthropicResponse(resp, "a/m").Usage
		if u.CacheCreationInputTokens != 1500 || u.CacheCreation == nil || u.CacheCreation.Ephemeral1h != 1000 || u.CacheCreation.Ephemeral5m != 500 {
			t.Errorf("usage %+v %+v", u, u.CacheCreation)
		}
	}
}

// TestMessagesStopSequencesBeyondOpenAIs: the Messages surface takes more stop sequences
// than OpenAI's 4 (Anthropic does): a model whose API takes fewer (OpenAI's own 4,
// Gemini's 5) is skipped for such a request while another can take it, and refused naming
// the field when none can; the chat surface keeps OpenAI's 4.
func TestMessagesStopSequencesBeyondOpenAIs(t *testing.T) {
	claude := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			StopSequences []string `json:"stop_sequences"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"m","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"%d stops"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":2}}`, len(body.StopSequences))
	}))
	t.Cleanup(claude.Close)
	g, err := New(Options{Providers: fakeRegistry{
		"anthropic": providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: claude.URL, APIKey: "k"}),
		"openai":    providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: claude.URL, APIKey: "k"}),
		"gemini":    providers.NewGemini(providers.Config{BaseURL: claude.URL, APIKey: "k"}),
	}, Prices: fakePrices{}, DefaultMaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	stops := `"stop_sequences":["a","b","c","d","e","f"]`
	_, c, err := messagesRequest(t, `{"model":"openai/gpt-4o","max_tokens":5,`+stops+`,"fallback_models":["gemini/gemini-2.5-flash","anthropic/claude-x"],"messages":[{"role":"user","content":"x"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	req, err := c.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := g.Complete(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Provider != "anthropic" || resp.Text() != "6 stops" || len(resp.Attempts) != 3 || resp.Attempts[0].Outcome != OutcomeSkipped || resp.Attempts[1].Outcome != OutcomeSkipped {
		t.Errorf("answer %s from %s, attempts %+v", resp.Text(), resp.Provider, resp.Attempts)
	}
	_, c, _ = messagesRequest(t, `{"model":"openai/gpt-4o","max_tokens":5,`+stops+`,"messages":[{"role":"user","content":"x"}]}`)
	req, _ = c.ToRequest()
	var ve *ValidationError
	if _, err := g.Complete(context.Background(), Scope{}, req); !errors.As(err, &ve) || !strings.Contains(ve.Field, "stop") {
		t.Errorf("no model can take it: %v", err)
	}
	if _, err := chatBody(t, `{"model":"anthropic/claude-x","stop":["a","b","c","d","e"],"messages":[{"role":"user","content":"x"}]}`); err == nil {
		t.Error("the chat surface took 5 stop sequences")
	}
}
