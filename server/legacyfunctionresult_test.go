package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// fakeRecordingUpstream is a scripted upstream of one wire format that keeps each request
// body and answers "ok" in that format (OpenAI, Anthropic or Gemini).
type fakeRecordingUpstream struct {
	format providers.Format
	mu     sync.Mutex
	bodies [][]byte
}

func (u *fakeRecordingUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.bodies = append(u.bodies, b)
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch u.format {
	case providers.FormatAnthropic:
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}}`)
	case providers.FormatGemini:
		io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1,"totalTokenCount":6}}`)
	default:
		io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
	}
}

// last is the last request body u received, decoded.
func (u *fakeRecordingUpstream) last(t *testing.T) map[string]any {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.bodies) == 0 {
		t.Fatal("no request reached the upstream")
	}
	var m map[string]any
	if err := json.Unmarshal(u.bodies[len(u.bodies)-1], &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestLegacyFunctionResultWithoutCall: a "function" message answering no earlier
// function_call (an agent trimmed its history), which OpenAI takes, is answered: each
// provider gets a made-up call of that function (arguments {}) just before the result —
// an assistant tool call and a tool message on OpenAI, tool_use and tool_result on
// Anthropic, functionCall and functionResponse on Gemini; the call is the preceding
// assistant text's own when there is one — and a later bad message is still named by the
// caller's index.
// legacyResultServer is a server over three recording upstreams, by provider name: "up"
// (OpenAI), "anthropic" and "gemini".
func legacyResultServer(t *testing.T) (*httptest.Server, map[string]*fakeRecordingUpstream) {
	t.Helper()
	ups := map[string]*fakeRecordingUpstream{}
	var provs []providers.Provider
	for name, format := range map[string]providers.Format{"up": providers.FormatOpenAI, "anthropic": providers.FormatAnthropic, "gemini": providers.FormatGemini} {
		u := &fakeRecordingUpstream{format: format}
		hs := httptest.NewServer(u)
		t.Cleanup(hs.Close)
		base := hs.URL
		if format == providers.FormatOpenAI {
			base += "/v1"
		}
		p, err := providers.New(format, providers.Config{Name: name, BaseURL: base, APIKey: "sk-" + name})
		if err != nil {
			t.Fatal(err)
		}
		ups[name], provs = u, append(provs, p)
	}
	g, err := completions.New(completions.Options{Providers: providers.NewRegistry(provs...), Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: newTestStore(t), APIKeys: []string{testKey}}, Completions(g))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, ups
}

func TestLegacyFunctionResultWithoutCall(t *testing.T) {
	hs, ups := legacyResultServer(t)

	const messages = `"messages":[{"role":"user","content":"Weather in Rome?"},
		{"role":"function","name":"weather","content":"{\"sky\":\"sunny\"}"},
		{"role":"user","content":"Thanks. And Paris?"}]`
	const functions = `"functions":[{"name":"weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}],`

	resp, body := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"up/gpt-4o-mini",`+functions+messages+`}`)
	if resp.StatusCode != 200 {
		t.Fatalf("OpenAI: %d %s", resp.StatusCode, body)
	}
	want := `[{"content":"Weather in Rome?","role":"user"},` +
		`{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"weather"},"id":"call_fn1","type":"function"}]},` +
		`{"content":"{\"sky\":\"sunny\"}","role":"tool","tool_call_id":"call_fn1"},` +
		`{"content":"Thanks. And Paris?","role":"user"}]`
	if got, _ := json.Marshal(ups["up"].last(t)["messages"]); string(got) != want {
		t.Errorf("OpenAI got messages\n%s\nwant\n%s", got, want)
	}

	resp, body = post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"anthropic/claude-sonnet-4-5",`+functions+messages+`}`)
	if resp.StatusCode != 200 {
		t.Fatalf("Anthropic: %d %s", resp.StatusCode, body)
	}
	var am []struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	}
	raw, _ := json.Marshal(ups["anthropic"].last(t)["messages"])
	json.Unmarshal(raw, &am)
	if len(am) != 3 || am[1].Role != "assistant" || am[2].Role != "user" ||
		!strings.Contains(string(raw), `{"id":"call_fn1","input":{},"name":"weather","type":"tool_use"}`) ||
		!strings.Contains(string(raw), `"tool_use_id":"call_fn1","type":"tool_result"`) {
		t.Errorf("Anthropic got messages %s, want the made-up tool_use then its tool_result joined by the user's text", raw)
	}

	resp, body = post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"gemini/gemini-2.5-flash",`+messages+`}`)
	if resp.StatusCode != 200 {
		t.Fatalf("Gemini (no functions declared): %d %s", resp.StatusCode, body)
	}
	raw, _ = json.Marshal(ups["gemini"].last(t)["contents"])
	var gc []struct {
		Role  string           `json:"role"`
		Parts []map[string]any `json:"parts"`
	}
	json.Unmarshal(raw, &gc)
	if len(gc) < 3 || gc[1].Role != "model" || gc[1].Parts[0]["functionCall"] == nil || gc[2].Parts[0]["functionResponse"] == nil ||
		!strings.Contains(string(raw), `"functionResponse":{"name":"weather"`) {
		t.Errorf("Gemini got contents %s, want the made-up functionCall then the functionResponse named weather", raw)
	}

	// After the assistant's text, the made-up call is that message's: Gemini refuses a
	// call in a model turn following another.
	resp, body = post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"gemini/gemini-2.5-flash","messages":[
		{"role":"user","content":"Weather in Rome?"},{"role":"assistant","content":"Let me look."},
		{"role":"function","name":"weather","content":"sunny"},{"role":"user","content":"Thanks."}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("Gemini after text: %d %s", resp.StatusCode, body)
	}
	raw, _ = json.Marshal(ups["gemini"].last(t)["contents"])
	gc = nil
	json.Unmarshal(raw, &gc)
	if len(gc) != 4 || gc[1].Role != "model" || len(gc[1].Parts) != 2 || gc[1].Parts[0]["text"] != "Let me look." || gc[1].Parts[1]["functionCall"] == nil ||
		gc[2].Parts[0]["functionResponse"] == nil {
		t.Errorf("Gemini got contents %s, want the text and the made-up call in one model turn, then the result", raw)
	}

	// Two results of trimmed calls in a row, and an error after them names the caller's index.
	resp, body = post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"up/gpt-4o-mini","messages":[
		{"role":"function","name":"weather","content":"sunny"},{"role":"function","name":"time","content":"noon"},
		{"role":"user","content":"x"},{"role":"tool","tool_call_id":"nope","content":"1"}]}`)
	if resp.StatusCode != 400 || !strings.Contains(string(body), `"param":"messages[3].tool_call_id"`) {
		t.Errorf("a bad tool message after two made-up calls: %d %s, want a 400 naming messages[3].tool_call_id", resp.StatusCode, body)
	}

	// An undeclared function named by function_call is refused as a function.
	resp, body = post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"up/gpt-4o-mini","functions":[{"name":"f"}],"function_call":{"name":"g"},"messages":[{"role":"user","content":"x"}]}`)
	if resp.StatusCode != 400 || !strings.Contains(string(body), `\"g\" is not one of the functions`) || !strings.Contains(string(body), `"param":"function_call.name"`) {
		t.Errorf("undeclared function_call: %d %s, want a 400 saying g is not one of the functions", resp.StatusCode, body)
	}
}

// TestLegacyFunctionResultOpeningConversation: a "function" message answering no call that
// opens the conversation (after the system prompt only) gets a "Please continue." user turn
// before its made-up call, as LiteLLM puts one before a conversation opening with the
// model: Gemini and Anthropic refuse a conversation whose first turn is the model's. The
// result is still its function's, and a later error names the caller's index.
func TestLegacyFunctionResultOpeningConversation(t *testing.T) {
	hs, ups := legacyResultServer(t)
	const messages = `"messages":[{"role":"system","content":"Be brief."},
		{"role":"function","name":"weather","content":"{\"sky\":\"sunny\"}"},
		{"role":"user","content":"Thanks. And Paris?"}]`

	resp, body := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"up/gpt-4o-mini",`+messages+`}`)
	if resp.StatusCode != 200 {
		t.Fatalf("OpenAI: %d %s", resp.StatusCode, body)
	}
	want := `[{"content":"Be brief.","role":"system"},{"content":"Please continue.","role":"user"},` +
		`{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"weather"},"id":"call_fn1","type":"function"}]},` +
		`{"content":"{\"sky\":\"sunny\"}","role":"tool","tool_call_id":"call_fn1"},` +
		`{"content":"Thanks. And Paris?","role":"user"}]`
	if got, _ := json.Marshal(ups["up"].last(t)["messages"]); string(got) != want {
		t.Errorf("OpenAI got messages\n%s\nwant\n%s", got, want)
	}

	resp, body = post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"anthropic/claude-sonnet-4-5",`+messages+`}`)
	if resp.StatusCode != 200 {
		t.Fatalf("Anthropic: %d %s", resp.StatusCode, body)
	}
	var am []struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	}
	raw, _ := json.Marshal(ups["anthropic"].last(t)["messages"])
	json.Unmarshal(raw, &am)
	if len(am) != 3 || am[0].Role != "user" || !strings.Contains(string(raw), "Please continue.") || am[1].Role != "assistant" || am[2].Role != "user" ||
		!strings.Contains(string(raw), `"name":"weather","type":"tool_use"`) || !strings.Contains(string(raw), `"tool_use_id":"call_fn1","type":"tool_result"`) {
		t.Errorf("Anthropic got messages %s, want a user turn first, then the made-up tool_use and its tool_result", raw)
	}

	resp, body = post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"gemini/gemini-2.5-flash",`+messages+`}`)
	if resp.StatusCode != 200 {
		t.Fatalf("Gemini: %d %s", resp.StatusCode, body)
	}
	raw, _ = json.Marshal(ups["gemini"].last(t)["contents"])
	var gc []struct {
		Role  string           `json:"role"`
		Parts []map[string]any `json:"parts"`
	}
	json.Unmarshal(raw, &gc)
	if len(gc) < 3 || gc[0].Role != "user" || gc[0].Parts[0]["text"] != "Please continue." || gc[1].Role != "model" || gc[1].Parts[0]["functionCall"] == nil ||
		!strings.Contains(string(raw), `"functionResponse":{"name":"weather"`) {
		t.Errorf("Gemini got contents %s, want a user turn first, then the made-up functionCall and the functionResponse named weather", raw)
	}

	resp, body = post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"up/gpt-4o-mini","messages":[
		{"role":"function","name":"weather","content":"sunny"},{"role":"user","content":"x"},{"role":"tool","tool_call_id":"nope","content":"1"}]}`)
	if resp.StatusCode != 400 || !strings.Contains(string(body), `"param":"messages[2].tool_call_id"`) {
		t.Errorf("a bad tool message after an opening made-up call: %d %s, want a 400 naming messages[2].tool_call_id", resp.StatusCode, body)
	}
}
