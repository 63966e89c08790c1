package completions

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// fakeResponsesAPI is a fake of OpenAI's own API at /v1. POST /v1/responses answers as the
// Responses API does — a response object, or its typed events with stream:true — and
// refuses with a 400 what the real API refuses; POST /v1/chat/completions answers as chat
// completions do (the scripted upstream's answer). Every body is recorded.
type fakeResponsesAPI struct {
	srv *httptest.Server

	mu       sync.Mutex
	turns    map[string][]fakeTurn
	calls    map[string]int
	bodies   []map[string]any // POST /v1/responses, in order
	chats    []map[string]any // POST /v1/chat/completions, in order
	refusals []string         // the 400s answered
}

// fakeTurn scripts one Responses API answer: for a reasoning model a reasoning item (its
// summary parts when the request asks for reasoning.summary, its encrypted_content when it
// includes reasoning.encrypted_content), then the text or a function call.
type fakeTurn struct {
	summary   []string
	encrypted string
	text      string
	call      *providers.ToolCall
}

// The usage every Responses API answer reports.
const fakeResponsesUsage = `{"input_tokens":50,"input_tokens_details":{"cached_tokens":10},"output_tokens":120,"output_tokens_details":{"reasoning_tokens":64},"total_tokens":170}`

func newFakeResponsesAPI(t *testing.T) *fakeResponsesAPI {
	f := &fakeResponsesAPI{turns: map[string][]fakeTurn{}, calls: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// on scripts model's answers in order, the last one repeating.
func (f *fakeResponsesAPI) on(model string, turns ...fakeTurn) { f.turns[model] = turns }

// last is the last body sent to /v1/responses (nil before any).
func (f *fakeResponsesAPI) last() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.bodies) == 0 {
		return nil
	}
	return f.bodies[len(f.bodies)-1]
}

func (f *fakeResponsesAPI) counts() (responses, chats int, refusals []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies), len(f.chats), slices.Clone(f.refusals)
}

// fakeReasoningModel is OpenAI's reasoning models, as the fake knows them.
func fakeReasoningModel(model string) bool {
	return strings.HasPrefix(model, "o1") || strings.HasPrefix(model, "o3") || strings.HasPrefix(model, "o4") ||
		strings.HasPrefix(model, "gpt-5") || strings.Contains(model, "codex")
}

func (f *fakeResponsesAPI) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if r.Header.Get("Authorization") != "Bearer sk-test" || json.Unmarshal(raw, &body) != nil {
		f.fail(w, http.StatusUnauthorized, "bad key or JSON")
		return
	}
	model, _ := body["model"].(string)
	chat := r.URL.Path == "/v1/chat/completions"
	f.mu.Lock()
	turns, n := f.turns[model], f.calls[model]
	f.calls[model]++
	if chat {
		f.chats = append(f.chats, body)
	} else {
		f.bodies = append(f.bodies, body)
	}
	f.mu.Unlock()
	if _, effort := body["reasoning_effort"]; chat && effort && !fakeReasoningModel(model) {
		f.fail(w, http.StatusBadRequest, "Unrecognized request argument supplied: reasoning_effort")
		return
	} else if chat {
		var ur upstreamRequest
		_ = json.Unmarshal(raw, &ur)
		answer("answer from "+model)(w, r, ur)
		return
	}
	if msg := refuseResponsesBody(body); msg != "" || r.URL.Path != "/v1/responses" {
		f.fail(w, http.StatusBadRequest, cmp.Or(msg, "Invalid URL (POST "+r.URL.Path+")"))
		return
	}
	turn := fakeTurn{text: "answer from " + model}
	if len(turns) > 0 {
		turn = turns[min(n, len(turns)-1)]
	}
	output := responsesOutput(body, turn)
	if body["stream"] == true {
		streamResponsesOutput(w, model, output)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	resp, _ := json.Marshal(map[string]any{"id": "resp_1", "object": "response", "created_at": 1764000000, "status": "completed",
		"model": model, "output": output, "usage": json.RawMessage(fakeResponsesUsage)})
	w.Write(resp)
}

func (f *fakeResponsesAPI) fail(w http.ResponseWriter, code int, msg string) {
	f.mu.Lock()
	f.refusals = append(f.refusals, msg)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","param":null,"code":null}}`, msg)
}

// refuseResponsesBody is the message of the 400 the Responses API answers body with, or "".
func refuseResponsesBody(b map[string]any) string {
	known := []string{"model", "instructions", "input", "tools", "tool_choice", "parallel_tool_calls", "text", "reasoning",
		"max_output_tokens", "temperature", "top_p", "store", "include", "stream", "user", "safety_identifier", "prompt_cache_key",
		"service_tier", "metadata", "truncation"}
	for k := range b {
		if !slices.Contains(known, k) { // messages, stop, max_tokens, …
			return "Unknown parameter: '" + k + "'."
		}
	}
	if store, ok := b["store"].(bool); !ok || store {
		return "store must be false: this organization has zero data retention"
	}
	model, _ := b["model"].(string)
	if r, ok := b["reasoning"].(map[string]any); ok {
		if !fakeReasoningModel(model) {
			return "Unsupported parameter: 'reasoning.effort' is not supported with this model."
		}
		if e, ok := r["effort"]; ok && !slices.Contains([]any{"low", "medium", "high"}, e) {
			return fmt.Sprintf("Invalid value: %v for reasoning.effort", e)
		}
		if s, ok := r["summary"]; ok && !slices.Contains([]any{"auto", "concise", "detailed"}, s) {
			return fmt.Sprintf("Invalid value: %v for reasoning.summary", s)
		}
	}
	tools, _ := b["tools"].([]any)
	for i, t := range tools {
		tool, _ := t.(map[string]any)
		if tool["type"] == "web_search" {
			for k := range tool { // the hosted web search, with the options OpenAI documents
				switch k {
				case "type", "search_context_size", "user_location", "filters":
				default:
					return fmt.Sprintf("Invalid tools[%d]: unknown web_search parameter %q", i, k)
				}
			}
			continue
		}
		_, params := tool["parameters"].(map[string]any)
		_, strict := tool["strict"].(bool) // left out, the API's default (true) enforces a strict schema
		if tool["type"] != "function" || tool["name"] == nil || !params || !strict {
			return fmt.Sprintf("Invalid tools[%d]: a function needs its name, parameters and strict", i)
		}
	}
	items, ok := b["input"].([]any)
	if !ok {
		return "Invalid type for 'input': expected a list of items."
	}
	calls := map[any]bool{}
	for i, it := range items {
		item, _ := it.(map[string]any)
		ok := false
		switch item["type"] {
		case "message":
			ok = slices.Contains([]any{"user", "assistant", "system", "developer"}, item["role"]) && item["content"] != nil
		case "reasoning":
			// Without its id (nothing is stored), the item is its encrypted_content.
			_, summary := item["summary"].([]any)
			enc, _ := item["encrypted_content"].(string)
			ok = summary && enc != ""
		case "function_call":
			ok = item["call_id"] != nil && item["name"] != nil && item["arguments"] != nil
			calls[item["call_id"]] = true
		case "function_call_output":
			_, output := item["output"].(string)
			ok = output && calls[item["call_id"]] // "No tool call found for function call output with call_id …"
		}
		if !ok {
			return fmt.Sprintf("Invalid input[%d] (type %v): %v", i, item["type"], item)
		}
	}
	return ""
}

// responsesOutput is the output items of turn, as the request body asked for them.
func responsesOutput(body map[string]any, turn fakeTurn) []map[string]any {
	var out []map[string]any
	model, _ := body["model"].(string)
	if fakeReasoningModel(model) {
		item := map[string]any{"id": "rs_1", "type": "reasoning", "summary": []any{}}
		if r, _ := body["reasoning"].(map[string]any); r["summary"] != nil {
			var parts []any
			for _, s := range turn.summary {
				parts = append(parts, map[string]any{"type": "summary_text", "text": s})
			}
			item["summary"] = parts
		}
		if include, _ := body["include"].([]any); slices.Contains(include, any("reasoning.encrypted_content")) {
			item["encrypted_content"] = turn.encrypted
		}
		out = append(out, item)
	}
	if turn.call != nil {
		return append(out, map[string]any{"id": "fc_1", "type": "function_call", "status": "completed", "call_id": turn.call.ID,
			"name": turn.call.Name, "arguments": turn.call.Arguments})
	}
	return append(out, map[string]any{"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": turn.text, "annotations": []any{}}}})
}

// streamResponsesOutput streams output as the Responses API's typed events: each item
// added, its summary, text or arguments in deltas, and done; then response.completed.
func streamResponsesOutput(w http.ResponseWriter, model string, output []map[string]any) {
	startStream(w)
	seq := 0
	send := func(typ string, ev map[string]any) {
		ev["type"], ev["sequence_number"] = typ, seq
		seq++
		data, _ := json.Marshal(ev)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data)
		w.(http.Flusher).Flush()
	}
	resp := map[string]any{"id": "resp_1", "object": "response", "status": "in_progress", "model": model, "output": []any{}}
	send("response.created", map[string]any{"response": resp})
	for i, item := range output {
		id := item["id"]
		at := func(ev map[string]any) map[string]any { ev["item_id"], ev["output_index"] = id, i; return ev }
		switch item["type"] {
		case "reasoning":
			send("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{"id": id, "type": "reasoning", "summary": []any{}}})
			parts, _ := item["summary"].([]any)
			for j, p := range parts {
				text := p.(map[string]any)["text"].(string)
				send("response.reasoning_summary_part.added", at(map[string]any{"summary_index": j, "part": map[string]any{"type": "summary_text", "text": ""}}))
				for _, piece := range words(text) {
					send("response.reasoning_summary_text.delta", at(map[string]any{"summary_index": j, "delta": piece}))
				}
				send("response.reasoning_summary_text.done", at(map[string]any{"summary_index": j, "text": text}))
				send("response.reasoning_summary_part.done", at(map[string]any{"summary_index": j, "part": p}))
			}
		case "message":
			text := item["content"].([]any)[0].(map[string]any)["text"].(string)
			send("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
			send("response.content_part.added", at(map[string]any{"content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}))
			for _, piece := range words(text) {
				send("response.output_text.delta", at(map[string]any{"content_index": 0, "delta": piece}))
			}
			send("response.output_text.done", at(map[string]any{"content_index": 0, "text": text}))
		case "function_call":
			added := map[string]any{"id": id, "type": "function_call", "status": "in_progress", "call_id": item["call_id"], "name": item["name"], "arguments": ""}
			send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			args := item["arguments"].(string)
			for k := 0; k < len(args); k += 7 {
				send("response.function_call_arguments.delta", at(map[string]any{"delta": args[k:min(k+7, len(args))]}))
			}
			send("response.function_call_arguments.done", at(map[string]any{"arguments": args}))
		}
		send("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	resp["status"], resp["output"], resp["usage"] = "completed", output, json.RawMessage(fakeResponsesUsage)
	send("response.completed", map[string]any{"response": resp})
}

// openAIGateway is a gateway over the fake OpenAI API (provider "openai", so taken for
// OpenAI's own) and a fake Anthropic API (provider "anthropic").
func openAIGateway(t *testing.T) (*Gateway, *fakeResponsesAPI, *anthropicUpstream) {
	t.Helper()
	f := newFakeResponsesAPI(t)
	an := newAnthropicUpstream(t, "py-basic_response.sse", "docs-tool_use_response.json")
	reg := fakeRegistry{
		"openai":    providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: f.srv.URL + "/v1", APIKey: "sk-test"}),
		"anthropic": providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: an.srv.URL, APIKey: "sk-test"}),
	}
	g, err := New(Options{Providers: reg, Prices: fakePrices{}, DefaultMaxRetries: -1, Sleep: (&sleepRecorder{}).sleep})
	if err != nil {
		t.Fatal(err)
	}
	return g, f, an
}

// viaGateway answers a chat request (or one a surface translated, with its error) through
// g for owner, non-streamed, as the server's routes do.
func viaGateway(g *Gateway, owner string) func(*OpenAIChatRequest, error) (*Response, error) {
	return func(creq *OpenAIChatRequest, err error) (*Response, error) {
		if err != nil {
			return nil, err
		}
		req, err := creq.ToRequest()
		if err != nil {
			return nil, err
		}
		return g.Complete(context.Background(), Scope{Owner: owner}, req)
	}
}

// decoded is v as JSON, decoded into a map.
func decoded(t *testing.T, v any) map[string]any {
	raw, _ := json.Marshal(v)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// chatVia answers a chat completions body through g for owner as POST
// /v1/chat/completions does, non-streamed.
func chatVia(g *Gateway, owner, body string) (*OpenAIChatCompletion, error) {
	var o OpenAIChatRequest
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		return nil, err
	}
	resp, err := viaGateway(g, owner)(&o, nil)
	if err != nil {
		return nil, err
	}
	return NewOpenAIChatCompletion(resp, time.Now()), nil
}

// chatStreamVia streams a chat completions body through g for owner as POST
// /v1/chat/completions does, and reads it as an SDK accumulator does: the assistant
// message (content, reasoning_content, the last thinking_blocks, tool calls) and the usage.
func chatStreamVia(t *testing.T, g *Gateway, owner, body string) (OpenAIResponseMessage, *OpenAIUsage) {
	t.Helper()
	var o OpenAIChatRequest
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		t.Fatal(err)
	}
	req, err := o.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	st, err := g.Stream(context.Background(), Scope{Owner: owner}, req)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := WriteOpenAIStream(rec, st, true); err != nil {
		t.Fatalf("WriteOpenAIStream: %v\n%s", err, rec.Body)
	}
	content, calls, _, usage := clientToolCalls(t, rec.Body.String())
	msg := OpenAIResponseMessage{Role: "assistant", ToolCalls: calls}
	if content != "" {
		msg.Content = &content
	}
	for _, e := range parseSSE(t, rec.Body.String()) {
		var c OpenAIChunk
		if e.data == "[DONE]" || json.Unmarshal([]byte(e.data), &c) != nil || len(c.Choices) == 0 {
			continue
		}
		msg.ReasoningContent += c.Choices[0].Delta.ReasoningContent
		if tb := c.Choices[0].Delta.ThinkingBlocks; tb != nil {
			msg.ThinkingBlocks = tb
		}
	}
	return msg, usage
}

// weatherTool is the get_weather tool in chat completions' shape.
const weatherTool = `"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather","parameters":{"type":"object",
	"properties":{"location":{"type":"string"}},"required":["location"]}}}]`

// loopInput checks that a Responses API body's input is the tool loop's: the user's
// message, the reasoning item with encrypted_content enc, the function_call and its output.
func loopInput(t *testing.T, name string, body map[string]any, enc, callID string) {
	t.Helper()
	items, _ := body["input"].([]any)
	var types []string
	for _, it := range items {
		types = append(types, fmt.Sprint(it.(map[string]any)["type"]))
	}
	if want := []string{"message", "reasoning", "function_call", "function_call_output"}; !slices.Equal(types, want) {
		t.Fatalf("%s: input items %v, want %v: %v", name, types, want, items)
	}
	if r := items[1].(map[string]any); r["encrypted_content"] != enc {
		t.Errorf("%s: reasoning item sent back %v, want encrypted_content %q", name, r, enc)
	}
	if items[2].(map[string]any)["call_id"] != callID || items[3].(map[string]any)["call_id"] != callID {
		t.Errorf("%s: call and output sent %v", name, items)
	}
}

// TestOpenAIResponsesChatReasoning: openai/o3 asked for reasoning on chat completions (with
// reasoning_effort and LiteLLM's thinking) is called at /v1/responses with the effort, a
// summary asked and the encrypted reasoning included; the answer shows the summary as
// reasoning_content and the encrypted reasoning in thinking_blocks, whole and streamed,
// with the reasoning tokens in the usage.
func TestOpenAIResponsesChatReasoning(t *testing.T) {
	const enc = "gAAAAABo-o3-encrypted-reasoning=="
	const body = `{"model":"openai/o3","reasoning_effort":"high","thinking":{"type":"enabled","budget_tokens":4096},
		"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Is 91 prime?"}]%s}`
	wantBlocks := []OpenAIThinkingBlock{{Type: "thinking", Thinking: "Check small divisors.\n\n7 times 13 is 91.", Signature: "openai-encrypted:" + enc}}
	for _, stream := range []bool{false, true} {
		g, f, _ := openAIGateway(t)
		f.on("o3", fakeTurn{summary: []string{"Check small divisors.", "7 times 13 is 91."}, encrypted: enc, text: "No: 91 = 7 × 13."})
		var msg OpenAIResponseMessage
		var usage *OpenAIUsage
		if stream {
			msg, usage = chatStreamVia(t, g, "o", fmt.Sprintf(body, `,"stream":true,"stream_options":{"include_usage":true}`))
		} else {
			c, err := chatVia(g, "o", fmt.Sprintf(body, ""))
			if err != nil {
				t.Fatalf("stream=%v: %v", stream, err)
			}
			msg, usage = c.Choices[0].Message, c.Usage
		}
		n, chats, refusals := f.counts()
		if n != 1 || chats != 0 || len(refusals) > 0 {
			t.Fatalf("stream=%v: %d calls to /v1/responses, %d to chat completions, refused %q", stream, n, chats, refusals)
		}
		sent := f.last()
		reasoning, _ := sent["reasoning"].(map[string]any)
		include, _ := sent["include"].([]any)
		if reasoning["effort"] != "high" || reasoning["summary"] != "auto" || sent["instructions"] != "Be brief." ||
			!slices.Contains(include, any("reasoning.encrypted_content")) || (sent["stream"] == true) != stream {
			t.Errorf("stream=%v: upstream body %v", stream, sent)
		}
		if msg.Content == nil || *msg.Content != "No: 91 = 7 × 13." || msg.ReasoningContent != wantBlocks[0].Thinking {
			t.Errorf("stream=%v: content %v, reasoning_content %q", stream, msg.Content, msg.ReasoningContent)
		}
		if !slices.Equal(msg.ThinkingBlocks, wantBlocks) {
			t.Errorf("stream=%v: thinking_blocks %+v\nwant %+v", stream, msg.ThinkingBlocks, wantBlocks)
		}
		if usage == nil || usage.PromptTokens != 50 || usage.CompletionTokens != 120 || usage.CompletionTokensDetails == nil ||
			usage.CompletionTokensDetails.ReasoningTokens != 64 || usage.PromptTokensDetails == nil || usage.PromptTokensDetails.CachedTokens != 10 {
			u, _ := json.Marshal(usage)
			t.Errorf("stream=%v: usage %s", stream, u)
		}
	}
}

// TestOpenAIResponsesChatToolLoop: o3 asked for its reasoning (LiteLLM's thinking object)
// calls a tool with encrypted reasoning; the next request sends the call's turn back with
// its thinking_blocks, or without them as the OpenAI SDKs do (the gateway kept them),
// after a whole or a streamed first answer (this one's reasoning without a summary): either way the Responses API gets the
// reasoning item, with the same encrypted_content, before the function_call, then the
// function_call_output.
func TestOpenAIResponsesChatToolLoop(t *testing.T) {
	const enc = "gAAAAABo-weather-reasoning=="
	call := providers.ToolCall{ID: "call_w1", Name: "get_weather", Arguments: `{"location":"Paris"}`}
	const ask = `"thinking":{"type":"enabled","budget_tokens":4096}`
	body := `{"model":"openai/o3",` + ask + `,"messages":[{"role":"user","content":"Weather in Paris?"}],` + weatherTool + `%s}`
	for _, stream := range []bool{false, true} {
		for _, keepBlocks := range []bool{true, false} {
			name := fmt.Sprintf("stream=%v thinking_blocks=%v", stream, keepBlocks)
			g, f, _ := openAIGateway(t)
			first := fakeTurn{summary: []string{"Use the tool."}, encrypted: enc, call: &call}
			if stream {
				first.summary = nil // reasoning too short to summarise: the item's summary is []
			}
			f.on("o3", first, fakeTurn{text: "Sunny, 21°C.", encrypted: "gAAAAABo-2"})
			var msg OpenAIResponseMessage
			if stream {
				msg, _ = chatStreamVia(t, g, "o", fmt.Sprintf(body, `,"stream":true`))
			} else {
				c, err := chatVia(g, "o", fmt.Sprintf(body, ""))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				msg = c.Choices[0].Message
			}
			if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].ID != call.ID || len(msg.ThinkingBlocks) != 1 || msg.ThinkingBlocks[0].Signature != encryptedSignature+enc {
				b, _ := json.Marshal(msg)
				t.Fatalf("%s: first answer %s; upstream bodies %v", name, b, f.bodies)
			}
			owner := "o"
			if keepBlocks {
				owner = "someone-else" // the blocks alone carry the reasoning, not the gateway's cache
			} else {
				msg.ThinkingBlocks, msg.ReasoningContent = nil, ""
			}
			turn, _ := json.Marshal(msg)
			next := `{"model":"openai/o3",` + ask + `,"messages":[{"role":"user","content":"Weather in Paris?"},` + string(turn) +
				`,{"role":"tool","tool_call_id":"call_w1","content":"sunny, 21C"}],` + weatherTool + `}`
			c, err := chatVia(g, owner, next)
			if _, _, refusals := f.counts(); err != nil || len(refusals) > 0 {
				t.Fatalf("%s: second turn: %v; upstream refused %q", name, err, refusals)
			}
			if got := *c.Choices[0].Message.Content; got != "Sunny, 21°C." {
				t.Errorf("%s: answer %q", name, got)
			}
			loopInput(t, name, f.last(), enc, call.ID)
		}
	}
}

// TestOpenAIResponsesOnlyModelAndStop: gpt-5-codex, served only by the Responses API, goes
// there without any reasoning asked (no reasoning summary); stop sequences, which that API
// lacks, are refused before any call, naming stop; with a fallback that takes them, the
// fallback answers with them.
func TestOpenAIResponsesOnlyModelAndStop(t *testing.T) {
	g, f, _ := openAIGateway(t)
	f.on("gpt-5-codex", fakeTurn{text: "fmt.Println(\"hello\")", encrypted: "gAAAAABo-codex"})
	const msgs = `"messages":[{"role":"user","content":"Print hello in Go."}]`
	c, err := chatVia(g, "o", `{"model":"openai/gpt-5-codex",`+msgs+`}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := *c.Choices[0].Message.Content; got != `fmt.Println("hello")` {
		t.Errorf("answer %q", got)
	}
	n, chats, _ := f.counts()
	if r, _ := f.last()["reasoning"].(map[string]any); n != 1 || chats != 0 || r["summary"] != nil {
		t.Errorf("%d calls to /v1/responses, %d to chat completions; reasoning sent %v", n, chats, r)
	}

	_, err = chatVia(g, "o", `{"model":"openai/gpt-5-codex","stop":["END"],`+msgs+`}`)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "stop" {
		t.Errorf("stop to gpt-5-codex alone: error %v, want a validation error naming stop", err)
	}
	if n2, _, _ := f.counts(); n2 != n {
		t.Errorf("stop to gpt-5-codex reached the upstream")
	}

	c, err = chatVia(g, "o", `{"model":"openai/gpt-5-codex","fallback_models":["openai/gpt-4o"],"stop":["END"],`+msgs+`}`)
	if err != nil {
		t.Fatalf("with a fallback: %v", err)
	}
	n3, chats, refusals := f.counts()
	if got := *c.Choices[0].Message.Content; got != "answer from gpt-4o" || n3 != n || chats != 1 || len(refusals) > 0 {
		t.Errorf("with a fallback: answer %q; /v1/responses calls %d→%d, chat completions %d, refused %q", got, n, n3, chats, refusals)
	}
	if stop, _ := f.chats[0]["stop"].([]any); !slices.Equal(stop, []any{"END"}) {
		t.Errorf("gpt-4o sent stop %v", f.chats[0]["stop"])
	}
}

// TestOpenAIResponsesStopWithEncryptedHistory: a request that goes to the Responses API
// because its history carries OpenAI's encrypted reasoning (no reasoning asked) is refused
// stop sequences as one that asks for reasoning is: before any call, naming stop.
func TestOpenAIResponsesStopWithEncryptedHistory(t *testing.T) {
	g, f, _ := openAIGateway(t)
	_, err := chatVia(g, "o", `{"model":"openai/o3","stop":["END"],"messages":[{"role":"user","content":"Weather in Paris?"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_s1","type":"function","function":{"name":"get_weather","arguments":"{}"}}],
		 "thinking_blocks":[{"type":"thinking","thinking":"","signature":"openai-encrypted:gAAAABo-x"}]},
		{"role":"tool","tool_call_id":"call_s1","content":"sunny"}],`+weatherTool+`}`)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "stop" {
		t.Errorf("stop to o3 with encrypted history: error %v, want a validation error naming stop", err)
	}
	if n, chats, _ := f.counts(); n+chats != 0 {
		t.Errorf("%d upstream calls", n+chats)
	}
}

// responsesVia answers a /v1/responses body through g for owner as POST /v1/responses does,
// non-streamed: the response object, decoded.
func responsesVia(t *testing.T, g *Gateway, owner, body string) map[string]any {
	t.Helper()
	var rreq ResponsesRequest
	if err := json.Unmarshal([]byte(body), &rreq); err != nil {
		t.Fatal(err)
	}
	resp, err := viaGateway(g, owner)(rreq.ToChatRequest())
	if err != nil {
		t.Fatal(err)
	}
	o := NewResponseObject(&rreq, NewResponseID(resp.ResponseMessageID), time.Now())
	o.Complete(resp)
	return decoded(t, o)
}

// responsesTool is get_weather in the Responses API's flat shape.
const responsesTool = `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}]`

// TestOpenAIResponsesSurfaceRoundTrip: on the gateway's /v1/responses, o3 asked for
// reasoning (an effort and a summary) answers with a reasoning item whose encrypted_content
// is OpenAI's as it is (whole and streamed); the output items fed back as input, without
// any reasoning asked this time, reach the Responses API as a reasoning item with it,
// before the call and its output.
func TestOpenAIResponsesSurfaceRoundTrip(t *testing.T) {
	const enc = "gAAAAABo-surface-reasoning=="
	g, f, _ := openAIGateway(t)
	call := providers.ToolCall{ID: "call_r1", Name: "get_weather", Arguments: `{"location":"Oslo"}`}
	calls := fakeTurn{summary: []string{"Look it up."}, encrypted: enc, call: &call}
	f.on("o3", calls, calls, fakeTurn{text: "Snowing.", encrypted: "gAAAAABo-2"}) // whole, streamed, then the loop's next turn
	const user = `{"role":"user","content":"Weather in Oslo?"}`
	out := responsesVia(t, g, "", `{"model":"openai/o3","reasoning":{"effort":"medium","summary":"auto"},"input":[`+user+`],`+responsesTool+`}`)
	if r, _ := f.last()["reasoning"].(map[string]any); r["summary"] != "auto" {
		t.Errorf("upstream reasoning %v", r)
	}
	items, _ := out["output"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["type"] != "reasoning" || items[1].(map[string]any)["type"] != "function_call" {
		t.Fatalf("output %v", out["output"])
	}
	if rs := items[0].(map[string]any); rs["encrypted_content"] != enc {
		t.Errorf("reasoning item %v, want encrypted_content %q as OpenAI returned it", rs, enc)
	}

	evs := streamResponses(t, g, `{"model":"openai/o3","stream":true,"reasoning":{"effort":"medium","summary":"auto"},"input":[`+user+`],`+responsesTool+`}`)
	var streamed map[string]any
	for _, ev := range evs {
		if it, _ := ev["item"].(map[string]any); ev["type"] == "response.output_item.done" && it["type"] == "reasoning" {
			streamed = it
		}
	}
	if streamed["encrypted_content"] != enc {
		t.Errorf("streamed reasoning item %v", streamed)
	}

	input := []any{json.RawMessage(user)}
	input = append(input, items...)
	input = append(input, map[string]any{"type": "function_call_output", "call_id": "call_r1", "output": "snow, -3C"})
	raw, _ := json.Marshal(map[string]any{"model": "openai/o3", "input": input, "tools": json.RawMessage(strings.TrimPrefix(responsesTool, `"tools":`))})
	out = responsesVia(t, g, "someone-else", string(raw)) // not the first calls' owner: no cache
	if _, _, refusals := f.counts(); len(refusals) > 0 {
		t.Fatalf("upstream refused %q", refusals)
	}
	loopInput(t, "fed back", f.last(), enc, call.ID)
	if text, _ := json.Marshal(out["output"]); !strings.Contains(string(text), "Snowing.") {
		t.Errorf("second answer %s", text)
	}
}

// TestOpenAIResponsesSurfaceSummaryOnly: a /v1/responses request to o3 that asks for a
// reasoning summary only (reasoning {summary: "auto"}, no effort — what OpenAI's own API
// answers with reasoning items) gets the summary and the encrypted reasoning.
func TestOpenAIResponsesSurfaceSummaryOnly(t *testing.T) {
	const enc = "gAAAAABo-summary-only=="
	g, f, _ := openAIGateway(t)
	f.on("o3", fakeTurn{summary: []string{"Simple arithmetic."}, encrypted: enc, text: "4"})
	out := responsesVia(t, g, "", `{"model":"openai/o3","reasoning":{"summary":"auto"},"input":"2+2?"}`)
	n, chats, _ := f.counts()
	var rs map[string]any
	if items, _ := out["output"].([]any); len(items) > 0 {
		rs, _ = items[0].(map[string]any)
	}
	// Regression guard: before f76ad13 (found failing at e6ffe75), toRequest
	// (completions/openai.go) marked Thinking.Summary only on a Thinking it had, and a
	// summary without an effort made none: Request.Thinking stayed nil, so
	// OpenAI.useResponses kept o3 on chat completions, which return neither the summary nor
	// the encrypted reasoning the caller asked for.
	summary, _ := json.Marshal(rs["summary"])
	if n != 1 || chats != 0 || rs["type"] != "reasoning" || rs["encrypted_content"] != enc || !strings.Contains(string(summary), "Simple arithmetic.") {
		t.Errorf("reasoning {summary:auto} to o3: %d calls to /v1/responses, %d to chat completions; output %v", n, chats, out["output"])
	}
}

// messagesVia answers a /v1/messages body through g as POST /v1/messages does,
// non-streamed: the message object, decoded.
func messagesVia(t *testing.T, g *Gateway, body string) map[string]any {
	t.Helper()
	var mreq AnthropicMessagesRequest
	if err := json.Unmarshal([]byte(body), &mreq); err != nil {
		t.Fatal(err)
	}
	resp, err := viaGateway(g, "o")(mreq.ToChatRequest())
	if err != nil {
		t.Fatal(err)
	}
	return decoded(t, NewAnthropicResponse(resp, mreq.Model))
}

// TestOpenAIResponsesMessagesSurface: on /v1/messages, o3 with thinking on calls a tool
// with a thinking block whose signature is the marked encrypted reasoning; that tool-call
// turn sent back in the history of a request to Claude (thinking on) reaches Claude without
// the block, while a block with Claude's own signature in its place does reach it.
func TestOpenAIResponsesMessagesSurface(t *testing.T) {
	const enc = "gAAAAABo-messages-reasoning=="
	g, f, an := openAIGateway(t)
	call := providers.ToolCall{ID: "call_m1", Name: "get_weather", Arguments: `{"location":"Paris"}`}
	f.on("o3", fakeTurn{summary: []string{"Look up the weather."}, encrypted: enc, call: &call})
	const tools = `"tools":[{"name":"get_weather","input_schema":{"type":"object","properties":{"location":{"type":"string"}}}}]`
	const thinkingOn = `"max_tokens":8192,"thinking":{"type":"enabled","budget_tokens":2048},` + tools
	out := messagesVia(t, g, `{"model":"openai/o3",`+thinkingOn+`,"messages":[{"role":"user","content":"Weather in Paris?"}]}`)
	blocks, _ := out["content"].([]any)
	if n, _, _ := f.counts(); n != 1 || len(blocks) != 2 {
		t.Fatalf("%d calls to /v1/responses; content %v", n, out["content"])
	}
	thinking, use := blocks[0].(map[string]any), blocks[1].(map[string]any)
	if thinking["type"] != "thinking" || thinking["signature"] != encryptedSignature+enc || thinking["thinking"] != "Look up the weather." || use["type"] != "tool_use" {
		t.Fatalf("content %v", out["content"])
	}

	const claudeSig = "EqoBCkgIBxABGAIiQDc"
	for _, block := range []map[string]any{thinking, {"type": "thinking", "thinking": "Claude's own.", "signature": claudeSig}} {
		turn, _ := json.Marshal([]any{block, use})
		// The tool loop is an earlier turn: Claude thinks in the current one, and gets the
		// earlier turns' signed reasoning.
		messagesVia(t, g, `{"model":"anthropic/claude-sonnet-4-5",`+thinkingOn+`,"messages":[{"role":"user","content":"Weather in Paris?"},
			{"role":"assistant","content":`+string(turn)+`},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_m1","content":"sunny"}]},
			{"role":"assistant","content":"Sunny."},{"role":"user","content":"And in Madrid?"}]}`)
		sent, _ := json.Marshal(an.last())
		claudes := block["signature"] == claudeSig
		if claudes != strings.Contains(string(sent), claudeSig) || strings.Contains(string(sent), enc) || strings.Contains(string(sent), "Look up the weather.") {
			t.Errorf("history with %v reached Claude as %s", block, sent)
		}
		if an.last()["thinking"] == nil || !strings.Contains(string(sent), `"tool_use_id":"call_m1"`) {
			t.Errorf("thinking off for Claude, or the tool loop lost: %s", sent)
		}
	}
}

// TestOpenAIResponsesNotForNonReasoningModels: gpt-4o asked for thinking stays on chat
// completions (without reasoning_effort, which it refuses); so does o3 asked for an effort
// alone (reasoning_effort asks how hard to think, not to see the reasoning: 3850f96).
func TestOpenAIResponsesNotForNonReasoningModels(t *testing.T) {
	g, f, _ := openAIGateway(t)
	c, err := chatVia(g, "o", `{"model":"openai/gpt-4o","thinking":{"type":"enabled","budget_tokens":2048},"messages":[{"role":"user","content":"Hi"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	n, chats, refusals := f.counts()
	if got := *c.Choices[0].Message.Content; got != "answer from gpt-4o" || n != 0 || chats != 1 || len(refusals) > 0 {
		t.Errorf("answer %q; %d calls to /v1/responses, %d to chat completions, refused %q", got, n, chats, refusals)
	}
	if _, err := chatVia(g, "o", `{"model":"openai/o3","reasoning_effort":"high","messages":[{"role":"user","content":"Hi"}]}`); err != nil {
		t.Fatal(err)
	}
	if n, chats, _ := f.counts(); n != 0 || chats != 2 || f.chats[1]["reasoning_effort"] != "high" {
		t.Errorf("o3 with reasoning_effort alone: %d calls to /v1/responses, %d to chat completions (%v)", n, chats, f.chats)
	}
}
