package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// fakeGeminiToolUpstream is a scripted OpenAI-format upstream for the Gemini surface's
// tests, recording each request body: model "weather" calls get_weather({"city":"Paris"})
// unless the last message is a tool result, which it answers "It is <result> in Paris.";
// "think" reasons ("Let me think.") then answers "42" with 5 reasoning and 3 cached
// tokens; the rest answer "Hello from <model>". Streamed when asked.
type fakeGeminiToolUpstream struct {
	mu       sync.Mutex
	requests []map[string]any
}

func (u *fakeGeminiToolUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	u.mu.Lock()
	u.requests = append(u.requests, req)
	u.mu.Unlock()
	model, _ := req["model"].(string)
	stream, _ := req["stream"].(bool)
	msgs, _ := req["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	usage := `{"prompt_tokens":30,"completion_tokens":10,"total_tokens":40}`
	var text, reasoning string
	var call bool
	switch {
	case model == "weather" && last["role"] == "tool":
		text = fmt.Sprintf("It is %s in Paris.", last["content"])
	case model == "weather":
		call = true
	case model == "think":
		text, reasoning = "42", "Let me think."
		usage = `{"prompt_tokens":30,"completion_tokens":10,"total_tokens":40,"prompt_tokens_details":{"cached_tokens":3},"completion_tokens_details":{"reasoning_tokens":5}}`
	default:
		text = "Hello from " + model
	}
	finish := "stop"
	if call {
		finish = "tool_calls"
	}
	if !stream {
		msg := map[string]any{"role": "assistant", "content": text}
		if call {
			msg["content"] = nil
			msg["tool_calls"] = []any{map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}}
		}
		if reasoning != "" {
			msg["reasoning_content"] = reasoning
		}
		b, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion", "choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}})
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `%s,"usage":%s}`, b[:len(b)-1], usage)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(delta string) { fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":%s}]}\n\n", delta) }
	if reasoning != "" {
		event(fmt.Sprintf(`{"reasoning_content":%q}`, reasoning))
	}
	if call {
		event(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}`)
		for _, p := range []string{`{"city":`, ` "Paris"}`} {
			a, _ := json.Marshal(p)
			event(`{"tool_calls":[{"index":0,"function":{"arguments":` + string(a) + `}}]}`)
		}
	}
	for _, wd := range strings.SplitAfter(text, " ") {
		if wd != "" {
			event(fmt.Sprintf(`{"content":%q}`, wd))
		}
	}
	fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":%q}]}\n\ndata: {\"choices\":[],\"usage\":%s}\n\ndata: [DONE]\n\n", finish, usage)
}

func (u *fakeGeminiToolUpstream) last() map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.requests[len(u.requests)-1]
}

func (u *fakeGeminiToolUpstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.requests)
}

// geminiServer is a server whose gateway has provider "up" on the OpenAI-format upstream
// of completionsServer (errors by model name) and provider "tl" on fakeGeminiToolUpstream.
func geminiServer(t *testing.T) (*httptest.Server, *fakeGeminiToolUpstream) {
	t.Helper()
	ups := httptest.NewServer(&fakeOpenAIUpstream{})
	t.Cleanup(ups.Close)
	tu := &fakeGeminiToolUpstream{}
	tus := httptest.NewServer(tu)
	t.Cleanup(tus.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: ups.URL + "/v1", APIKey: "sk-up"}),
		providers.NewOpenAI(providers.Config{Name: "tl", BaseURL: tus.URL + "/v1", APIKey: "sk-tl"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		Backoff:     completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond},
		ModelGroups: map[string]completions.ModelGroup{"gemini-fast": {Models: []string{"tl/chat"}}, "gemini-pro": {Models: []string{"tl/think"}}}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, tu
}

// geminiPost posts body to path with the key in x-goog-api-key.
func geminiPost(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Goog-Api-Key", testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

const geminiWeatherTools = `"tools":[{"functionDeclarations":[{"name":"get_weather","description":"Current weather of a city",
	"parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING","nullable":true}},"required":["city"],"propertyOrdering":["city"]}}]}]`

// TestGeminiGenerateContentToolRoundTrip: a function call through generateContent and the
// function's response sent back, as Gemini CLI's tool loop does — the answer in Gemini's
// shape, the upstream given the chat request it stands for.
func TestGeminiGenerateContentToolRoundTrip(t *testing.T) {
	hs, up := geminiServer(t)
	resp, b := geminiPost(t, hs.URL+"/v1beta/models/tl/weather:generateContent", `{"systemInstruction":{"parts":[{"text":"Be brief."}]},
		"contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]}],`+geminiWeatherTools+`,
		"toolConfig":{"functionCallingConfig":{"mode":"ANY"}},"generationConfig":{"temperature":0.2,"maxOutputTokens":256,"stopSequences":["END"]}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	var got completions.GeminiResponse
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Candidates) != 1 || got.Candidates[0].FinishReason != "STOP" || got.Candidates[0].Content.Role != "model" ||
		len(got.Candidates[0].Content.Parts) != 1 || got.Candidates[0].Content.Parts[0].FunctionCall == nil {
		t.Fatalf("answer %s", b)
	}
	fc := got.Candidates[0].Content.Parts[0].FunctionCall
	if fc.Name != "get_weather" || string(fc.Args) != `{"city":"Paris"}` || fc.ID != "call_1" {
		t.Errorf("function call %+v", fc)
	}
	if u := got.UsageMetadata; u == nil || u.PromptTokenCount != 30 || u.CandidatesTokenCount != 10 || u.TotalTokenCount != 40 {
		t.Errorf("usage %+v", got.UsageMetadata)
	}
	if got.ModelVersion != "tl/weather" || got.ResponseID == "" {
		t.Errorf("modelVersion %q responseId %q", got.ModelVersion, got.ResponseID)
	}
	sent := up.last()
	msgs := sent["messages"].([]any)
	if m := msgs[0].(map[string]any); m["role"] != "system" || m["content"] != "Be brief." {
		t.Errorf("system instruction reached the upstream as %v", m)
	}
	params, _ := json.Marshal(sent["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)["parameters"])
	if want := `{"properties":{"city":{"type":["string","null"]}},"required":["city"],"type":"object"}`; string(params) != want {
		t.Errorf("parameters reached the upstream as %s, want %s", params, want)
	}
	if sent["tool_choice"] != "required" || sent["temperature"] != 0.2 || fmt.Sprint(sent["stop"]) != "[END]" {
		t.Errorf("tool_choice %v temperature %v stop %v", sent["tool_choice"], sent["temperature"], sent["stop"])
	}

	// The call and its response go back (without ids, as the REST API's clients send them).
	resp, b = geminiPost(t, hs.URL+"/v1beta/models/tl/weather:generateContent", `{"contents":[
		{"role":"user","parts":[{"text":"Weather in Paris?"}]},
		{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"output":"sunny"}}}]}],`+geminiWeatherTools+`}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	got = completions.GeminiResponse{}
	json.Unmarshal(b, &got)
	if len(got.Candidates) != 1 || len(got.Candidates[0].Content.Parts) != 1 || got.Candidates[0].Content.Parts[0].Text == nil ||
		*got.Candidates[0].Content.Parts[0].Text != "It is sunny in Paris." {
		t.Fatalf("answer after the function response: %s", b)
	}
	msgs = up.last()["messages"].([]any)
	call, result := msgs[1].(map[string]any), msgs[2].(map[string]any)
	calls, _ := call["tool_calls"].([]any)
	if call["role"] != "assistant" || len(calls) != 1 || calls[0].(map[string]any)["id"] != "call_1_0" {
		t.Errorf("the call reached the upstream as %v", call)
	}
	if result["role"] != "tool" || result["tool_call_id"] != "call_1_0" || result["content"] != "sunny" {
		t.Errorf("the function response reached the upstream as %v", result)
	}
}

// geminiEvents reads a server-sent event stream's data lines as GenerateContentResponses.
func geminiEvents(t *testing.T, body io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		out = append(out, m)
	}
	return out
}

// TestGeminiStreamGenerateContent: streamGenerateContent?alt=sse is a GenerateContentResponse
// per fragment, the last with finishReason, usage and the function calls; without alt=sse
// the same chunks are one JSON array.
func TestGeminiStreamGenerateContent(t *testing.T) {
	hs, _ := geminiServer(t)
	body := `{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}`
	req, _ := http.NewRequest("POST", hs.URL+"/v1beta/models/tl/chat:streamGenerateContent?alt=sse&key="+testKey, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	events := geminiEvents(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") || len(events) < 2 {
		t.Fatalf("%d %s: %v", resp.StatusCode, resp.Header.Get("Content-Type"), events)
	}
	var text strings.Builder
	for _, e := range events {
		b, _ := json.Marshal(e)
		var r completions.GeminiResponse
		json.Unmarshal(b, &r)
		for _, p := range r.Candidates[0].Content.Parts {
			if p.Text != nil {
				text.WriteString(*p.Text)
			}
		}
	}
	lastEvent, _ := json.Marshal(events[len(events)-1])
	var last completions.GeminiResponse
	json.Unmarshal(lastEvent, &last)
	if text.String() != "Hello from chat" || last.Candidates[0].FinishReason != "STOP" || last.UsageMetadata == nil || last.UsageMetadata.TotalTokenCount != 40 {
		t.Errorf("stream text %q, last %s", text.String(), lastEvent)
	}
	for _, e := range events[:len(events)-1] {
		if c := e["candidates"].([]any)[0].(map[string]any); c["finishReason"] != nil {
			t.Errorf("a chunk before the last has a finishReason: %v", e)
		}
	}

	// A function call streamed: whole, with its arguments object, in the last chunk.
	resp, b := geminiPost(t, hs.URL+"/v1beta/models/tl/weather:streamGenerateContent?alt=sse",
		`{"contents":[{"role":"user","parts":[{"text":"Weather?"}]}],`+geminiWeatherTools+`}`)
	events = geminiEvents(t, strings.NewReader(string(b)))
	if resp.StatusCode != http.StatusOK || len(events) == 0 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	parts := events[len(events)-1]["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any)
	if len(parts) != 1 || fmt.Sprint(parts[0]) != "map[functionCall:map[args:map[city:Paris] id:call_1 name:get_weather]]" {
		t.Errorf("streamed function call: %v", parts)
	}

	// A model group: the answer names the model that answered.
	resp, b = geminiPost(t, hs.URL+"/v1beta/models/gemini-fast:generateContent", body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"modelVersion":"tl/chat"`) {
		t.Errorf("model group: %d %s", resp.StatusCode, b)
	}

	// No alt=sse: a JSON array of the same chunks.
	resp, b = geminiPost(t, hs.URL+"/v1beta/models/tl/chat:streamGenerateContent", body)
	var arr []completions.GeminiResponse
	if err := json.Unmarshal(b, &arr); err != nil || resp.StatusCode != http.StatusOK || len(arr) < 2 || arr[len(arr)-1].Candidates[0].FinishReason != "STOP" {
		t.Errorf("JSON array stream: %d %v %s", resp.StatusCode, err, b)
	}
}

// TestGeminiThoughts: with includeThoughts the model's reasoning is thought parts and
// thoughtsTokenCount apart from the candidates' tokens; without it no thought is shown.
func TestGeminiThoughts(t *testing.T) {
	hs, _ := geminiServer(t)
	for _, include := range []bool{true, false} {
		resp, b := geminiPost(t, hs.URL+"/v1beta/models/tl/think:generateContent", fmt.Sprintf(`{"contents":[{"parts":[{"text":"6*7?"}]}],
			"generationConfig":{"thinkingConfig":{"thinkingBudget":2048,"includeThoughts":%t}}}`, include))
		var got completions.GeminiResponse
		if err := json.Unmarshal(b, &got); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		parts := got.Candidates[0].Content.Parts
		u := got.UsageMetadata
		if u.ThoughtsTokenCount != 5 || u.CandidatesTokenCount != 5 || u.CachedContentTokenCount != 3 || u.TotalTokenCount != 40 {
			t.Errorf("usage %+v", u)
		}
		answer := parts[len(parts)-1]
		if answer.Text == nil || *answer.Text != "42" || answer.Thought {
			t.Errorf("answer part %s", b)
		}
		if include && (len(parts) != 2 || !parts[0].Thought || *parts[0].Text != "Let me think.") {
			t.Errorf("includeThoughts: parts %s", b)
		}
		if !include && len(parts) != 1 {
			t.Errorf("thoughts shown unasked: %s", b)
		}
	}
}

// TestGeminiSurfaceErrors: failures on the Gemini routes are Google's envelope with its
// canonical statuses; x-goog-api-key and ?key= are keys there.
func TestGeminiSurfaceErrors(t *testing.T) {
	hs, _ := geminiServer(t)
	ok := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	for _, c := range []struct {
		path, auth, body string
		code             int
		status, msg      string
	}{
		{"/v1beta/models/up/ok:generateContent", "", ok, 401, "UNAUTHENTICATED", "x-goog-api-key"},
		{"/v1beta/models/up/ok:generateContent?key=wrong", "", ok, 401, "UNAUTHENTICATED", "invalid API key"},
		{"/v1beta/models/up/ok:generateContent", "header", `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{}]}]}`,
			400, "INVALID_ARGUMENT", "contents[1].parts[0]"},
		{"/v1beta/models/up/ok:generateContent", "header", `{"contents":[{"role":"robot","parts":[{"text":"hi"}]}]}`, 400, "INVALID_ARGUMENT", "contents[0].role"},
		{"/v1beta/models/up/ok:generateContent", "header", `{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}]}`,
			400, "INVALID_ARGUMENT", "contents[0].parts[0].functionResponse"},
		{"/v1beta/models/up/ok:generateContent", "header", `{"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"responseMimeType":"text/x.enum"}}`,
			400, "INVALID_ARGUMENT", "generationConfig.responseMimeType"},
		{"/v1beta/models/up/ok:generateContent", "header", `{"contents":[]}`, 400, "INVALID_ARGUMENT", "contents"},
		{"/v1beta/models/up/ok:generateContent", "header", `{"contents":`, 400, "INVALID_ARGUMENT", ""},
		{"/v1beta/models/up/ok:embedContent", "header", ok, 404, "NOT_FOUND", "embedContent"},
		{"/v1beta/models/nope/x:generateContent", "header", ok, 400, "INVALID_ARGUMENT", "model"},
		{"/v1beta/models/up/nosuch:generateContent", "header", ok, 404, "NOT_FOUND", "does not exist"},
		{"/v1beta/models/up/down:generateContent", "header", ok, 503, "UNAVAILABLE", "overloaded"},
		{"/v1/models/up/ok:generateContent", "query", ok, 200, "", ""},
		{"/v1beta/models/up/ok:generateContent", "query", ok, 200, "", ""},
	} {
		url := hs.URL + c.path
		if c.auth == "query" {
			url += "?key=" + testKey
		}
		req, _ := http.NewRequest("POST", url, strings.NewReader(c.body))
		if c.auth == "header" {
			req.Header.Set("X-Goog-Api-Key", testKey)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if c.code == 200 {
			if resp.StatusCode != 200 || !strings.Contains(string(b), "Hello from ok") {
				t.Errorf("%s: %d %s", c.path, resp.StatusCode, b)
			}
			continue
		}
		var body completions.GeminiErrorBody
		json.Unmarshal(b, &body)
		if resp.StatusCode != c.code || body.Error.Code != c.code || body.Error.Status != c.status || !strings.Contains(body.Error.Message, c.msg) {
			t.Errorf("%s %s: %d %s, want %d %s containing %q", c.path, c.body, resp.StatusCode, b, c.code, c.status, c.msg)
		}
	}
	// x-goog-api-key is not a key on the other routes.
	req, _ := http.NewRequest("GET", hs.URL+"/v1/models", nil)
	req.Header.Set("X-Goog-Api-Key", testKey)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /v1/models with x-goog-api-key: %v %v", resp.StatusCode, err)
	}
}

// TestGeminiCountTokensAndModels: countTokens estimates without calling the model (more
// text, more tokens), in both of its body forms; the model list is /v1/models' chat models
// in Google's shape.
func TestGeminiCountTokensAndModels(t *testing.T) {
	hs, up := geminiServer(t)
	count := func(body string) int {
		resp, b := geminiPost(t, hs.URL+"/v1beta/models/tl/chat:countTokens", body)
		var got struct{ TotalTokens int }
		if err := json.Unmarshal(b, &got); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		return got.TotalTokens
	}
	short := count(`{"contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]}]}`)
	long := count(`{"generateContentRequest":{"model":"models/tl/chat","contents":[{"role":"user","parts":[{"text":"` + strings.Repeat("Weather in Paris? ", 50) + `"}]}]}}`)
	if short < 3 || long < 10*short {
		t.Errorf("countTokens: %d and %d", short, long)
	}
	if up.count() != 0 {
		t.Error("countTokens called the upstream")
	}

	req, _ := http.NewRequest("GET", hs.URL+"/v1beta/models?pageSize=1", nil)
	req.Header.Set("X-Goog-Api-Key", testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Models []struct {
			Name                       string
			SupportedGenerationMethods []string
		}
		NextPageToken string
	}
	json.NewDecoder(resp.Body).Decode(&page)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(page.Models) != 1 || !strings.HasPrefix(page.Models[0].Name, "models/") || page.NextPageToken == "" ||
		fmt.Sprint(page.Models[0].SupportedGenerationMethods) != "[generateContent streamGenerateContent countTokens]" {
		t.Fatalf("list: %d %+v", resp.StatusCode, page)
	}
	req, _ = http.NewRequest("GET", hs.URL+"/v1beta/"+page.Models[0].Name, nil)
	req.Header.Set("X-Goog-Api-Key", testKey)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %v %v", page.Models[0].Name, resp.StatusCode, err)
	}
	req, _ = http.NewRequest("GET", hs.URL+"/v1beta/models/nope/x", nil)
	req.Header.Set("X-Goog-Api-Key", testKey)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), `"status":"NOT_FOUND"`) {
		t.Errorf("unknown model: %d %s", resp.StatusCode, b)
	}
}

// TestGeminiOpenAPI: the OpenAPI document has the Gemini routes, their failures in Google's
// envelope.
func TestGeminiOpenAPI(t *testing.T) {
	hs, _ := geminiServer(t)
	resp, err := http.Get(hs.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	for _, pm := range [][2]string{{"/v1beta/models/{model}", "post"}, {"/v1/models/{model}", "post"}, {"/v1beta/models", "get"}, {"/v1beta/models/{model}", "get"}} {
		path, method := pm[0], pm[1]
		op, ok := doc.Paths[path][method]
		if !ok {
			t.Errorf("%s %s is not documented (paths: %d)", method, path, len(doc.Paths))
			continue
		}
		if method == "post" && !strings.Contains(string(op.Responses["400"]), `"#/components/schemas/GeminiError"`) {
			t.Errorf("%s %s: 400 is not Google's envelope: %s", method, path, op.Responses["400"])
		}
	}
	if g := string(doc.Components.Schemas["GeminiError"]); !strings.Contains(g, `"status"`) || !strings.Contains(g, `"code"`) {
		t.Errorf("components/schemas/GeminiError is not Google's envelope: %s", g)
	}
}

// Proto field names and a single contents object are read as Google's API reads them; a
// top-level name it does not know is refused in its envelope, naming the field.
func TestGeminiProtoNamesAndUnknownFields(t *testing.T) {
	hs, up := geminiServer(t)
	resp, b := geminiPost(t, hs.URL+"/v1beta/models/tl/chat:generateContent",
		`{"contents":{"parts":[{"text":"Good morning!"}]},"generation_config":{"stop_sequences":["END"],"top_p":0.5}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if got := up.last(); got["top_p"] != 0.5 || got["stop"] == nil {
		t.Errorf("generation_config.top_p/stop_sequences dropped: upstream request %v", got)
	}
	resp, b = geminiPost(t, hs.URL+"/v1beta/models/tl/chat:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}],"generation_configs":{}}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"INVALID_ARGUMENT"`) || !strings.Contains(string(b), "generation_configs") {
		t.Errorf("unknown top-level name = %d %s, want 400 INVALID_ARGUMENT naming it", resp.StatusCode, b)
	}
	resp, b = geminiPost(t, hs.URL+"/v1beta/models/tl/chat:countTokens", `{"contents":{"parts":[{"text":"hi there"}]}}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"totalTokens"`) {
		t.Errorf("countTokens with one contents object = %d %s", resp.StatusCode, b)
	}
}

// The Gemini surface on /v1/models/ is POST {model}:{method} only: ?key= there, OpenAI's
// envelope on the OpenAI routes beside it.
func TestGeminiPathOnV1Models(t *testing.T) {
	for _, c := range []struct {
		method, path string
		want         bool
	}{
		{"POST", "/v1/models/up/ok:generateContent", true},
		{"POST", "/v1/models/models/x:streamGenerateContent", true},
		{"POST", "/v1/models/x:countTokens", true},
		{"GET", "/v1/models/up/ok:generateContent", false},
		{"GET", "/v1/models/ft:gpt-4o-mini:acme::abc", false},
		{"DELETE", "/v1/models/ft:gpt-4o-mini:acme::abc", false},
		{"POST", "/v1/models/ft:gpt-4o-mini:acme::abc", false},
		{"GET", "/v1beta/models/x", true},
		{"GET", "/v1beta/models", true},
	} {
		if got := geminiPath(c.method, c.path); got != c.want {
			t.Errorf("geminiPath(%s %s) = %v, want %v", c.method, c.path, got, c.want)
		}
	}
}

// A 429 on the Gemini surface carries the google.rpc details Gemini CLI classifies: a
// spent budget terminal (a daily-class QuotaFailure), a rate limit retried after
// RetryInfo's delay (the Retry-After).
func TestGeminiQuotaErrorDetails(t *testing.T) {
	decode := func(rec *httptest.ResponseRecorder) map[string]map[string]any {
		var body struct {
			Error struct {
				Code    int              `json:"code"`
				Status  string           `json:"status"`
				Details []map[string]any `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error.Code != 429 || body.Error.Status != "RESOURCE_EXHAUSTED" {
			t.Fatalf("%d %s (%v)", rec.Code, rec.Body, err)
		}
		byType := map[string]map[string]any{}
		for _, d := range body.Error.Details {
			byType[strings.TrimPrefix(d["@type"].(string), "type.googleapis.com/google.rpc.")] = d
		}
		return byType
	}

	budget := fmt.Errorf("%w: $0.0200 of $0.0200 spent", completions.ErrBudgetExceeded)
	rec := httptest.NewRecorder()
	writeGeminiError(rec, Errorf(http.StatusTooManyRequests, KindTooManyRequests, "%v", budget), budget)
	d := decode(rec)
	violations, _ := d["QuotaFailure"]["violations"].([]any)
	v, _ := violations[0].(map[string]any)
	if d["ErrorInfo"]["reason"] != "BUDGET_EXCEEDED" || !strings.Contains(fmt.Sprint(v["quotaId"]), "Daily") || d["RetryInfo"] != nil {
		t.Errorf("budget 429 details %v: want ErrorInfo BUDGET_EXCEEDED and a daily-class QuotaFailure (terminal for Gemini CLI), no RetryInfo", d)
	}

	rate := Errorf(http.StatusTooManyRequests, KindTooManyRequests, "the key's requests per minute are used")
	rate.Retryable, rate.Header = true, http.Header{"Retry-After": {"12"}}
	rec = httptest.NewRecorder()
	writeGeminiError(rec, rate, nil)
	d = decode(rec)
	if d["ErrorInfo"]["reason"] != "RATE_LIMIT_EXCEEDED" || d["RetryInfo"]["retryDelay"] != "12s" || d["QuotaFailure"] != nil || rec.Header().Get("Retry-After") != "12" {
		t.Errorf("rate limit 429 details %v, Retry-After %q: want RetryInfo 12s", d, rec.Header().Get("Retry-After"))
	}
}
