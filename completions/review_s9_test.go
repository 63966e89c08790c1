package completions

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// reviewS9Gemini is a fake of Gemini's generateContent that refuses, as Google's API does
// (Gemini 2.x; Gemini 3 with an API key), a google_search tool next to function
// declarations: 400 "Tool use with function calling is unsupported by the model."
type reviewS9Gemini struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
}

func newReviewS9Gemini(t *testing.T) *reviewS9Gemini {
	f := &reviewS9Gemini{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		f.mu.Unlock()
		tools, _ := body["tools"].([]any)
		search, functions := false, false
		for _, t := range tools {
			tm, _ := t.(map[string]any)
			search = search || tm["google_search"] != nil || tm["googleSearch"] != nil
			functions = functions || tm["functionDeclarations"] != nil || tm["function_declarations"] != nil
		}
		w.Header().Set("Content-Type", "application/json")
		if search && functions {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"code":400,"message":"Tool use with function calling is unsupported by the model.","status":"INVALID_ARGUMENT"}}`)
			return
		}
		io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"answer from gemini"}]},"finishReason":"STOP","index":0}],
			"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":3,"totalTokenCount":8},"modelVersion":"gemini-2.5-flash"}`)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// reviewS9ResponsesErr answers a /v1/responses body through g as POST /v1/responses does,
// non-streamed, returning the error instead of failing the test.
func reviewS9ResponsesErr(g *Gateway, body string) (*Response, error) {
	var rreq ResponsesRequest
	if err := json.Unmarshal([]byte(body), &rreq); err != nil {
		return nil, err
	}
	return viaGateway(g, "")(rreq.ToChatRequest())
}

func reviewS9GeminiGateway(t *testing.T) (*Gateway, *reviewS9Gemini) {
	t.Helper()
	gm := newReviewS9Gemini(t)
	reg := fakeRegistry{"gemini": providers.NewGemini(providers.Config{Name: "gemini", BaseURL: gm.srv.URL, APIKey: "k"})}
	g, err := New(Options{Providers: reg, Prices: fakePrices{}, DefaultMaxRetries: -1, Sleep: (&sleepRecorder{}).sleep})
	if err != nil {
		t.Fatal(err)
	}
	return g, gm
}

// TestReviewS9WebSearchGeminiWithFunctionTools: BUG (Gateway.attemptRequest /
// Request.searchIfAvailable). Codex sends a web_search tool next to its function tools with
// every /v1/responses request. The gateway then turns search on for every model whose
// provider "supports search", Gemini included, so Gemini is sent google_search together
// with functionDeclarations — which Google's API refuses with a 400 ("Tool use with
// function calling is unsupported by the model"). Every Codex request to a Gemini model
// fails, where the README promises that models answer "without searching rather than
// failing the request". Expected: search is only added where the target can take it with
// the rest of the request (for Gemini: not with function tools), and the request is
// answered.
func TestReviewS9WebSearchGeminiWithFunctionTools(t *testing.T) {
	g, gm := reviewS9GeminiGateway(t)
	resp, err := reviewS9ResponsesErr(g, `{"model":"gemini/gemini-2.5-flash","input":"Weather in Oslo?",
		"tools":[{"type":"web_search"},{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"location":{"type":"string"}}}}]}`)
	if err != nil {
		gm.mu.Lock()
		defer gm.mu.Unlock()
		t.Fatalf("a web_search tool next to a function tool fails the Gemini request: %v (upstream bodies %v)", err, gm.bodies)
	}
	if resp.Text() != "answer from gemini" {
		t.Errorf("answer %q", resp.Text())
	}
}

// TestReviewS9WebSearchGeminiJSONFormat: BUG (Gateway.attemptRequest). A /v1/responses
// request with a web_search tool and a JSON text.format is valid for Gemini as checked by
// checkProviders (search off), but attemptRequest then turns search on, and the Gemini
// adapter's own body refuses "a JSON response format with tools or search": the request
// fails with a 400 about response_format although the web_search tool was optional.
// Expected: the model answers without search (or searchIfAvailable is decided where
// Check sees it).
func TestReviewS9WebSearchGeminiJSONFormat(t *testing.T) {
	g, _ := reviewS9GeminiGateway(t)
	_, err := reviewS9ResponsesErr(g, `{"model":"gemini/gemini-2.5-flash","input":"Reply with {\"ok\":true}.",
		"tools":[{"type":"web_search"}],"text":{"format":{"type":"json_object"}}}`)
	if err != nil {
		t.Fatalf("an optional web_search tool with a JSON format fails the Gemini request: %v", err)
	}
}

// TestReviewS9EncryptedReasoningStaysWithItsProvider: BUG (providers responsesBody /
// completions blockFromSignature; README "it never goes to another provider"). OpenAI's
// encrypted reasoning is marked only "openai-encrypted:", not with the provider that
// returned it, so a later turn sent to another OpenAI-format provider that speaks the
// Responses API (responses_api: "always": an Azure deployment, a second OpenAI org) gets
// the first org's encrypted_content, which it cannot decrypt (OpenAI answers 400
// invalid_encrypted_content) — the request fails instead of going on without it. Expected:
// encrypted reasoning goes back only to the provider that returned it.
func TestReviewS9EncryptedReasoningStaysWithItsProvider(t *testing.T) {
	const enc = "gAAAAABo-org-A-only=="
	f := newFakeResponsesAPI(t)
	call := providers.ToolCall{ID: "call_x1", Name: "get_weather", Arguments: `{"location":"Oslo"}`}
	f.on("o3", fakeTurn{summary: []string{"Look it up."}, encrypted: enc, call: &call})
	reg := fakeRegistry{
		"openai": providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: f.srv.URL + "/v1", APIKey: "sk-test"}),
		"azure": providers.NewOpenAI(providers.Config{Name: "azure", BaseURL: f.srv.URL + "/v1", APIKey: "sk-test",
			ResponsesAPI: providers.ResponsesAlways}),
	}
	g, err := New(Options{Providers: reg, Prices: fakePrices{}, DefaultMaxRetries: -1, Sleep: (&sleepRecorder{}).sleep})
	if err != nil {
		t.Fatal(err)
	}
	first, err := chatVia(g, "o", `{"model":"openai/o3","thinking":{"type":"enabled","budget_tokens":2048},
		"messages":[{"role":"user","content":"Weather in Oslo?"}],`+weatherTool+`}`)
	if err != nil {
		t.Fatal(err)
	}
	m := first.Choices[0].Message
	asst, _ := json.Marshal(m)
	f.on("o3", fakeTurn{text: "Snowing."})
	_, err = chatVia(g, "o", `{"model":"azure/o3","thinking":{"type":"enabled","budget_tokens":2048},
		"messages":[{"role":"user","content":"Weather in Oslo?"},`+string(asst)+`,
		{"role":"tool","tool_call_id":"call_x1","content":"snow"}],`+weatherTool+`}`)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(f.last()["input"])
	if strings.Contains(string(raw), enc) {
		t.Errorf("provider azure was sent the encrypted reasoning provider openai returned: input %s", raw)
	}
}

// TestReviewS9ToolErrorsNameTheResponsesField: BUG (responsesTools / responsesField). The
// chat tools a /v1/responses request becomes no longer line up with its tools: web_search
// and tool_search are left out and a namespace's functions are spread out, but a tool's
// validation error still names the chat tool's index (tools[N].function.…), which on
// /v1/responses points at another tool (Codex sends web_search among its tools).
// Expected: the field of the request's own tool — tools[1].… for the function after a
// web_search tool, tools[1].tools[0].… for a namespace's function.
func TestReviewS9ToolErrorsNameTheResponsesField(t *testing.T) {
	g, _, _ := openAIGateway(t)
	for _, c := range []struct{ tools, want string }{
		{`[{"type":"web_search"},{"type":"function","name":"bad name","parameters":{"type":"object"}}]`, "tools[1]"},
		{`[{"type":"function","name":"ok","parameters":{"type":"object"}},
		   {"type":"namespace","name":"ns","tools":[{"type":"function","name":"bad name","parameters":{"type":"object"}}]}]`, "tools[1].tools[0]"},
	} {
		_, err := reviewS9ResponsesErr(g, `{"model":"openai/gpt-4o","input":"hi","tools":`+c.tools+`}`)
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("tools %s: error %v, want a validation error", c.tools, err)
			continue
		}
		if !strings.HasPrefix(ve.Field, c.want) {
			t.Errorf("tools %s: the error names %q, want a field of %s (%v)", c.tools, ve.Field, c.want, err)
		}
	}
}
