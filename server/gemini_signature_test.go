package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// sigA is the thought signature the scripted Gemini upstream puts on its first function
// call: base64 with the characters a careless re-encoding would change.
const sigA = "CiQB0e2Kb+/sig+A/==\u003c"

// fakeGeminiSignatureUpstream is a scripted Gemini API (generateContent and
// streamGenerateContent?alt=sse) recording each request body: a conversation whose last
// turn holds functionResponse parts is answered "Sunny." with a text signature; any other
// is answered with two parallel calls, get_weather (thoughtSignature sigA) and get_time
// (none, as Gemini 3 signs only a turn's first call). Streamed, each call comes in an
// event of its own.
type fakeGeminiSignatureUpstream struct {
	mu     sync.Mutex
	bodies []map[string]any
}

func (u *fakeGeminiSignatureUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"code":400,"message":"bad body","status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
		return
	}
	u.mu.Lock()
	u.bodies = append(u.bodies, req)
	u.mu.Unlock()
	contents, _ := req["contents"].([]any)
	last, _ := contents[len(contents)-1].(map[string]any)
	parts, _ := last["parts"].([]any)
	answered := false
	for _, p := range parts {
		if _, ok := p.(map[string]any)["functionResponse"]; ok {
			answered = true
		}
	}
	var events []string
	if answered {
		events = []string{`{"candidates":[{"content":{"role":"model","parts":[{"text":"Sunny."}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":2}}`}
	} else {
		a, _ := json.Marshal(sigA)
		events = []string{
			`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":` + string(a) + `}]}}],"responseId":"r1"}`,
			`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"get_time","args":{"tz":"CET"}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":4},"responseId":"r1"}`,
		}
	}
	if strings.Contains(r.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			fmt.Fprintf(w, "data: %s\n\n", e)
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if len(events) == 1 {
		fmt.Fprint(w, events[0])
		return
	}
	a, _ := json.Marshal(sigA)
	fmt.Fprint(w, `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":`+string(a)+`},
		{"functionCall":{"name":"get_time","args":{"tz":"CET"}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":4},"responseId":"r1"}`)
}

// second is the second request's model turn: the parts of the contents entry with role model.
func (u *fakeGeminiSignatureUpstream) modelParts(t *testing.T) []map[string]any {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.bodies) != 2 {
		t.Fatalf("the upstream got %d requests, want 2", len(u.bodies))
	}
	contents, _ := u.bodies[1]["contents"].([]any)
	for _, c := range contents {
		m := c.(map[string]any)
		if m["role"] == "model" {
			var out []map[string]any
			for _, p := range m["parts"].([]any) {
				out = append(out, p.(map[string]any))
			}
			return out
		}
	}
	t.Fatalf("the second request has no model turn: %v", contents)
	return nil
}

// checkSignatures fails unless the second request's model turn carries sigA, byte for
// byte, on the get_weather call's part and no signature (not even the placeholder) on the
// get_time call's.
func (u *fakeGeminiSignatureUpstream) checkSignatures(t *testing.T) {
	t.Helper()
	var calls int
	for _, p := range u.modelParts(t) {
		fc, _ := p["functionCall"].(map[string]any)
		if fc == nil {
			continue
		}
		calls++
		sig, _ := p["thoughtSignature"].(string)
		switch fc["name"] {
		case "get_weather":
			if sig != sigA {
				t.Errorf("get_weather went back with thoughtSignature %q, want %q unchanged", sig, sigA)
			}
		case "get_time":
			if sig != "" {
				t.Errorf("get_time (unsigned upstream) went back with thoughtSignature %q, want none", sig)
			}
		}
	}
	if calls != 2 {
		t.Errorf("the model turn went back with %d function calls, want 2", calls)
	}
}

func geminiSignatureServer(t *testing.T) (*httptest.Server, *fakeGeminiSignatureUpstream) {
	t.Helper()
	up := &fakeGeminiSignatureUpstream{}
	us := httptest.NewServer(up)
	t.Cleanup(us.Close)
	reg := providers.NewRegistry(providers.NewGemini(providers.Config{Name: "gm", BaseURL: us.URL, APIKey: "k"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, up
}

const sigModel = "gm/gemini-3-pro-preview"

const sigChatTools = `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},
	{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{"tz":{"type":"string"}}}}}]`

// sseData is the data of each event of an SSE body but [DONE].
func sseData(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || d == "[DONE]" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("event %s: %v", d, err)
		}
		out = append(out, m)
	}
	return out
}

// TestGeminiSignatureChatRoundTrip: on /v1/chat/completions, streamed and not, the call's
// thought signature comes back as extra_content.google.thought_signature and, sent back
// with the assistant message, reaches Gemini unchanged on the same call.
func TestGeminiSignatureChatRoundTrip(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			hs, up := geminiSignatureServer(t)
			resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, fmt.Sprintf(`{"model":%q,"stream":%v,"messages":[{"role":"user","content":"Weather and time?"}],%s}`, sigModel, stream, sigChatTools))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			var calls []map[string]any
			if !stream {
				var c struct {
					Choices []struct {
						Message struct {
							ToolCalls []map[string]any `json:"tool_calls"`
						} `json:"message"`
					} `json:"choices"`
				}
				if err := json.Unmarshal(b, &c); err != nil {
					t.Fatal(err)
				}
				calls = c.Choices[0].Message.ToolCalls
			} else {
				// Assemble the calls from their fragments as openai-go's accumulator does,
				// keeping extra_content from whichever fragment has it.
				byIndex := map[int]map[string]any{}
				for _, ev := range sseData(t, b) {
					for _, ch := range ev["choices"].([]any) {
						d, _ := ch.(map[string]any)["delta"].(map[string]any)
						tcs, _ := d["tool_calls"].([]any)
						for _, x := range tcs {
							f := x.(map[string]any)
							i := int(f["index"].(float64))
							c := byIndex[i]
							if c == nil {
								c = map[string]any{"type": "function", "function": map[string]any{"name": "", "arguments": ""}}
								byIndex[i] = c
							}
							if id, ok := f["id"]; ok {
								c["id"] = id
							}
							if e, ok := f["extra_content"]; ok {
								c["extra_content"] = e
							}
							fn := f["function"].(map[string]any)
							cf := c["function"].(map[string]any)
							if n, _ := fn["name"].(string); n != "" {
								cf["name"] = n
							}
							a, _ := fn["arguments"].(string)
							cf["arguments"] = cf["arguments"].(string) + a
						}
					}
				}
				for i := 0; i < len(byIndex); i++ {
					calls = append(calls, byIndex[i])
				}
			}
			if len(calls) != 2 {
				t.Fatalf("got %d tool calls, want 2: %s", len(calls), b)
			}
			e, _ := calls[0]["extra_content"].(map[string]any)
			g, _ := e["google"].(map[string]any)
			if g["thought_signature"] != sigA {
				t.Fatalf("tool_calls[0].extra_content = %v, want google.thought_signature %q", calls[0]["extra_content"], sigA)
			}
			if _, ok := calls[1]["extra_content"]; ok {
				t.Errorf("tool_calls[1] (unsigned) has extra_content %v", calls[1]["extra_content"])
			}
			msgs := []any{map[string]any{"role": "user", "content": "Weather and time?"},
				map[string]any{"role": "assistant", "content": nil, "tool_calls": calls},
				map[string]any{"role": "tool", "tool_call_id": calls[0]["id"], "content": "sunny"},
				map[string]any{"role": "tool", "tool_call_id": calls[1]["id"], "content": "noon"}}
			body, _ := json.Marshal(map[string]any{"model": sigModel, "stream": stream, "messages": msgs})
			body = []byte(strings.TrimSuffix(string(body), "}") + "," + sigChatTools + "}")
			if resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, string(body)); resp.StatusCode != http.StatusOK {
				t.Fatalf("second turn: %d %s", resp.StatusCode, b)
			}
			up.checkSignatures(t)
		})
	}
}

// TestGeminiSignatureLiteLLMForms: the forms LiteLLM gives Gemini's signatures —
// provider_specific_fields.thought_signature, and the signature appended to the call's id
// after "__thought__" — reach Gemini as the call's thoughtSignature.
func TestGeminiSignatureLiteLLMForms(t *testing.T) {
	for name, call := range map[string]string{
		"provider_specific_fields": `{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"},"provider_specific_fields":{"thought_signature":` + jsonString(sigA) + `}}`,
		"id suffix":                `{"id":"call_a__thought__` + strings.Trim(jsonString(sigA), `"`) + `","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			hs, up := geminiSignatureServer(t)
			id := "call_a"
			if name == "id suffix" {
				id = "call_a__thought__" + sigA
			}
			idJSON := jsonString(id)
			first := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hi"}],%s}`, sigModel, sigChatTools)
			if resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, first); resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[%s,
				{"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{}"}}]},
				{"role":"tool","tool_call_id":%s,"content":"sunny"},{"role":"tool","tool_call_id":"call_b","content":"noon"}],%s}`, sigModel, call, idJSON, sigChatTools)
			if resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, body); resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			up.checkSignatures(t)
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestGeminiSignaturePlaceholderOnlyWhenAbsent: a Gemini 3 call sent back without a
// signature gets Google's placeholder (on the turn's first call only); one with a signature
// never does.
func TestGeminiSignaturePlaceholderOnlyWhenAbsent(t *testing.T) {
	hs, up := geminiSignatureServer(t)
	first := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hi"}],%s}`, sigModel, sigChatTools)
	if resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, first); resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[
		{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{}"}},{"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_a","content":"sunny"},{"role":"tool","tool_call_id":"call_b","content":"noon"}],%s}`, sigModel, sigChatTools)
	if resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, body); resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	parts := up.modelParts(t)
	if len(parts) != 2 || parts[0]["thoughtSignature"] != "skip_thought_signature_validator" || parts[1]["thoughtSignature"] != nil {
		t.Errorf("unsigned calls went back as %v, want the placeholder on the first call only", parts)
	}
}

// TestGeminiSignatureNativeRoundTrip: on generateContent and streamGenerateContent the
// functionCall part's thoughtSignature reaches the client and, sent back on the same part,
// reaches Gemini unchanged.
func TestGeminiSignatureNativeRoundTrip(t *testing.T) {
	tools := `"tools":[{"functionDeclarations":[{"name":"get_weather","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"}}}},
		{"name":"get_time","parameters":{"type":"OBJECT","properties":{"tz":{"type":"STRING"}}}}]}]`
	for _, method := range []string{"generateContent", "streamGenerateContent?alt=sse"} {
		t.Run(method, func(t *testing.T) {
			hs, up := geminiSignatureServer(t)
			resp, b := geminiPost(t, hs.URL+"/v1beta/models/"+sigModel+":"+method, `{"contents":[{"role":"user","parts":[{"text":"Weather and time?"}]}],`+tools+`}`)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			var answers []map[string]any
			if strings.HasPrefix(method, "stream") {
				answers = sseData(t, b)
			} else {
				answers = []map[string]any{decodeMap(t, b)}
			}
			var parts []any
			for _, a := range answers {
				cands, _ := a["candidates"].([]any)
				if len(cands) == 0 {
					continue
				}
				content, _ := cands[0].(map[string]any)["content"].(map[string]any)
				for _, p := range content["parts"].([]any) {
					if _, ok := p.(map[string]any)["functionCall"]; ok {
						parts = append(parts, p)
					}
				}
			}
			if len(parts) != 2 || parts[0].(map[string]any)["thoughtSignature"] != sigA {
				t.Fatalf("function call parts %v, want 2 with thoughtSignature %q on the first", parts, sigA)
			}
			second := map[string]any{"contents": []any{
				map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Weather and time?"}}},
				map[string]any{"role": "model", "parts": parts},
				map[string]any{"role": "user", "parts": []any{
					map[string]any{"functionResponse": map[string]any{"name": "get_weather", "response": map[string]any{"output": "sunny"}}},
					map[string]any{"functionResponse": map[string]any{"name": "get_time", "response": map[string]any{"output": "noon"}}}}}}}
			body, _ := json.Marshal(second)
			body = []byte(strings.TrimSuffix(string(body), "}") + "," + tools + "}")
			if resp, b := geminiPost(t, hs.URL+"/v1beta/models/"+sigModel+":"+method, string(body)); resp.StatusCode != http.StatusOK {
				t.Fatalf("second turn: %d %s", resp.StatusCode, b)
			}
			up.checkSignatures(t)
		})
	}
}

// TestGeminiSignatureResponsesRoundTrip: on /v1/responses, streamed and not, the call's
// signature comes back in a reasoning item's encrypted_content before the function_call
// item; the output items sent back as input (as Codex CLI and openai-go do) bring it to
// Gemini unchanged on the same call.
func TestGeminiSignatureResponsesRoundTrip(t *testing.T) {
	tools := `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}},
		{"type":"function","name":"get_time","parameters":{"type":"object","properties":{"tz":{"type":"string"}}}}]`
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			hs, up := geminiSignatureServer(t)
			resp, b := post(t, hs.URL+"/v1/responses", testKey, fmt.Sprintf(`{"model":%q,"stream":%v,"store":false,"input":"Weather and time?",%s}`, sigModel, stream, tools))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			var output []any
			if stream {
				for _, ev := range sseData(t, b) {
					if ev["type"] == "response.completed" {
						output, _ = ev["response"].(map[string]any)["output"].([]any)
					}
				}
			} else {
				output, _ = decodeMap(t, b)["output"].([]any)
			}
			var input []any
			input = append(input, map[string]any{"role": "user", "content": "Weather and time?"})
			var callIDs []any
			sawSig := false
			for _, it := range output {
				m := it.(map[string]any)
				if m["type"] == "reasoning" && m["encrypted_content"] != nil {
					sawSig = true
				}
				if m["type"] == "function_call" {
					callIDs = append(callIDs, m["call_id"])
				}
				input = append(input, m)
			}
			if !sawSig || len(callIDs) != 2 {
				t.Fatalf("output %v: want a reasoning item with encrypted_content and 2 function calls", output)
			}
			for i, id := range callIDs {
				input = append(input, map[string]any{"type": "function_call_output", "call_id": id, "output": []string{"sunny", "noon"}[i]})
			}
			body, _ := json.Marshal(map[string]any{"model": sigModel, "stream": stream, "store": false, "input": input})
			body = []byte(strings.TrimSuffix(string(body), "}") + "," + tools + "}")
			if resp, b := post(t, hs.URL+"/v1/responses", testKey, string(body)); resp.StatusCode != http.StatusOK {
				t.Fatalf("second turn: %d %s", resp.StatusCode, b)
			}
			up.checkSignatures(t)
		})
	}
}

// TestGeminiSignatureMessagesRoundTrip: on /v1/messages, streamed and not, the call's
// signature comes back as the signature of a thinking block just before its tool_use
// block; the content sent back (as Claude Code does) brings it to Gemini unchanged.
func TestGeminiSignatureMessagesRoundTrip(t *testing.T) {
	tools := `"tools":[{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}},
		{"name":"get_time","input_schema":{"type":"object","properties":{"tz":{"type":"string"}}}}]`
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			hs, up := geminiSignatureServer(t)
			resp, b := post(t, hs.URL+"/v1/messages", testKey, fmt.Sprintf(`{"model":%q,"max_tokens":100,"stream":%v,"messages":[{"role":"user","content":"Weather and time?"}],%s}`, sigModel, stream, tools))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			var content []map[string]any
			if stream {
				for _, ev := range sseData(t, b) {
					switch ev["type"] {
					case "content_block_start":
						content = append(content, ev["content_block"].(map[string]any))
					case "content_block_delta":
						d := ev["delta"].(map[string]any)
						blk := content[len(content)-1]
						switch d["type"] {
						case "signature_delta":
							blk["signature"] = d["signature"]
						case "input_json_delta":
							blk["input"] = json.RawMessage(d["partial_json"].(string))
						}
					}
				}
			} else {
				for _, c := range decodeMap(t, b)["content"].([]any) {
					content = append(content, c.(map[string]any))
				}
			}
			var ids []any
			for k, c := range content {
				if c["type"] == "tool_use" {
					ids = append(ids, c["id"])
					if len(ids) == 1 && (k == 0 || content[k-1]["type"] != "thinking" || content[k-1]["signature"] == nil) {
						t.Fatalf("content %v: want a signed thinking block before the first tool_use", content)
					}
				}
			}
			if len(ids) != 2 {
				t.Fatalf("content %v: want 2 tool_use blocks", content)
			}
			msgs := []any{map[string]any{"role": "user", "content": "Weather and time?"}, map[string]any{"role": "assistant", "content": content},
				map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": ids[0], "content": "sunny"},
					map[string]any{"type": "tool_result", "tool_use_id": ids[1], "content": "noon"}}}}
			body, _ := json.Marshal(map[string]any{"model": sigModel, "max_tokens": 100, "stream": stream, "messages": msgs})
			body = []byte(strings.TrimSuffix(string(body), "}") + "," + tools + "}")
			if resp, b := post(t, hs.URL+"/v1/messages", testKey, string(body)); resp.StatusCode != http.StatusOK {
				t.Fatalf("second turn: %d %s", resp.StatusCode, b)
			}
			up.checkSignatures(t)
		})
	}
}

// TestGeminiSignatureOpenAIGoRoundTrip: openai-go reads the signature from a tool call's
// extra fields (extra_content) and, set again on the call it sends back, the signature
// reaches Gemini unchanged.
func TestGeminiSignatureOpenAIGoRoundTrip(t *testing.T) {
	hs, up := geminiSignatureServer(t)
	client := openai.NewClient(option.WithBaseURL(hs.URL+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	params := func(msgs ...openai.ChatCompletionMessageParamUnion) openai.ChatCompletionNewParams {
		return openai.ChatCompletionNewParams{Model: sigModel, Messages: msgs, Tools: []openai.ChatCompletionToolParam{
			{Function: openai.FunctionDefinitionParam{Name: "get_weather", Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}},
			{Function: openai.FunctionDefinitionParam{Name: "get_time", Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"tz": map[string]any{"type": "string"}}}}}}}
	}
	user := openai.UserMessage("Weather and time?")
	resp, err := client.Chat.Completions.New(t.Context(), params(user))
	if err != nil {
		t.Fatal(err)
	}
	msg := resp.Choices[0].Message
	if len(msg.ToolCalls) != 2 {
		t.Fatalf("tool calls %v, want 2", msg.ToolCalls)
	}
	extra := msg.ToolCalls[0].JSON.ExtraFields["extra_content"].Raw()
	var e struct {
		Google struct {
			ThoughtSignature string `json:"thought_signature"`
		} `json:"google"`
	}
	if err := json.Unmarshal([]byte(extra), &e); err != nil || e.Google.ThoughtSignature != sigA {
		t.Fatalf("extra_content as openai-go reads it = %s (%v), want google.thought_signature %q", extra, err, sigA)
	}
	back := msg.ToParam()
	for i, c := range msg.ToolCalls {
		if raw := c.JSON.ExtraFields["extra_content"].Raw(); raw != "" {
			back.OfAssistant.ToolCalls[i].SetExtraFields(map[string]any{"extra_content": json.RawMessage(raw)})
		}
	}
	_, err = client.Chat.Completions.New(t.Context(), params(user, back,
		openai.ToolMessage("sunny", msg.ToolCalls[0].ID), openai.ToolMessage("noon", msg.ToolCalls[1].ID)))
	if err != nil {
		t.Fatal(err)
	}
	up.checkSignatures(t)
}

// fakeGeminiCodeUpstream is a scripted Gemini API recording each body and answering with
// text, executableCode, codeExecutionResult and text parts and a urlContextMetadata.
type fakeGeminiCodeUpstream struct{ bodies []map[string]any }

func (u *fakeGeminiCodeUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	_ = json.NewDecoder(r.Body).Decode(&req)
	u.bodies = append(u.bodies, req)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"Let me compute."},{"executableCode":{"language":"PYTHON","code":"print(6*7)"}},
		{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"42\n"}},{"text":"It is 42."}]},"finishReason":"STOP",
		"urlContextMetadata":{"urlMetadata":[{"retrievedUrl":"https://example.com","urlRetrievalStatus":"URL_RETRIEVAL_STATUS_SUCCESS"}]}}],
		"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":9}}`)
}

// TestGeminiSafetySettingsAndBuiltinTools: safetySettings (native) and safety_settings
// (chat) reach Gemini's body; codeExecution and urlContext reach it as tools, and the
// answer's code parts and urlContextMetadata come back as parts on the native surface and
// as Markdown code blocks in the chat message's text; a missing threshold is a 400 naming
// the field; a non-Gemini model refuses the built-in tools with a 400.
func TestGeminiSafetySettingsAndBuiltinTools(t *testing.T) {
	up := &fakeGeminiCodeUpstream{}
	us := httptest.NewServer(up)
	t.Cleanup(us.Close)
	oa := httptest.NewServer(&fakeOpenAIUpstream{})
	t.Cleanup(oa.Close)
	reg := providers.NewRegistry(providers.NewGemini(providers.Config{Name: "gm", BaseURL: us.URL, APIKey: "k"}),
		providers.NewOpenAI(providers.Config{Name: "up", BaseURL: oa.URL + "/v1", APIKey: "sk"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)

	safety := `[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]`
	resp, b := geminiPost(t, hs.URL+"/v1beta/models/gm/gemini-2.5-flash:generateContent",
		`{"contents":[{"parts":[{"text":"6*7? see https://example.com"}]}],"tools":[{"codeExecution":{}},{"urlContext":{}}],"safetySettings":`+safety+`}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	sent, _ := json.Marshal(up.bodies[0]["safetySettings"])
	if string(sent) != safety {
		t.Errorf("upstream safetySettings = %s, want %s", sent, safety)
	}
	tools, _ := json.Marshal(up.bodies[0]["tools"])
	if string(tools) != `[{"codeExecution":{}},{"urlContext":{}}]` {
		t.Errorf("upstream tools = %s, want codeExecution and urlContext", tools)
	}
	var out struct {
		Candidates []struct {
			Content struct {
				Parts []map[string]any `json:"parts"`
			} `json:"content"`
			URLContextMetadata map[string]any `json:"urlContextMetadata"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, p := range out.Candidates[0].Content.Parts {
		for k := range p {
			kinds = append(kinds, k)
		}
	}
	if strings.Join(kinds, ",") != "text,executableCode,codeExecutionResult,text" || out.Candidates[0].URLContextMetadata == nil {
		t.Errorf("parts %v (kinds %v), urlContextMetadata %v: want text, executableCode, codeExecutionResult, text and the metadata", out.Candidates[0].Content.Parts, kinds, out.Candidates[0].URLContextMetadata)
	}
	if ec, _ := out.Candidates[0].Content.Parts[1]["executableCode"].(map[string]any); ec["code"] != "print(6*7)" {
		t.Errorf("executableCode = %v", out.Candidates[0].Content.Parts[1])
	}

	// The chat surface: LiteLLM's safety_settings, and the code in the message's text.
	resp, b = post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"gm/gemini-2.5-flash","messages":[{"role":"user","content":"hi"}],"safety_settings":`+safety+`}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if sent, _ := json.Marshal(up.bodies[1]["safetySettings"]); string(sent) != safety {
		t.Errorf("chat: upstream safetySettings = %s, want %s", sent, safety)
	}
	if !strings.Contains(string(b), "```python\\nprint(6*7)\\n```") || !strings.Contains(string(b), "```\\n42\\n") {
		t.Errorf("chat answer %s: want the code and its output as Markdown code blocks", b)
	}

	// Validation and refusals.
	resp, b = post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"gm/gemini-2.5-flash","messages":[{"role":"user","content":"hi"}],"safety_settings":[{"category":"HARM_CATEGORY_HARASSMENT"}]}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "safety_settings[0].threshold") {
		t.Errorf("a setting without threshold = %d %s, want 400 naming safety_settings[0].threshold", resp.StatusCode, b)
	}
	resp, b = geminiPost(t, hs.URL+"/v1beta/models/gm/gemini-2.5-flash:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}],"safetySettings":[{"threshold":"BLOCK_NONE"}]}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "safetySettings[0].category") {
		t.Errorf("native: a setting without category = %d %s, want 400 naming safetySettings[0].category", resp.StatusCode, b)
	}
	n := len(up.bodies)
	resp, b = geminiPost(t, hs.URL+"/v1beta/models/up/gpt-4o:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}],"tools":[{"codeExecution":{}}]}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "tools.codeExecution") || len(up.bodies) != n {
		t.Errorf("codeExecution for a non-Gemini model = %d %s, want 400 naming tools.codeExecution", resp.StatusCode, b)
	}
}
