package completions

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// geminiRequest decodes body as a generateContent request for model and translates it to
// a gateway request.
func geminiRequest(t *testing.T, model, body string) (*OpenAIChatRequest, *Request, error) {
	t.Helper()
	var r GeminiGenerateRequest
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	r.Model = model
	c, err := r.ToChatRequest()
	if err != nil {
		return nil, nil, err
	}
	req, err := c.ToRequest()
	return c, req, err
}

// TestGeminiToChatRequest: what agents send — a system instruction, user text with an
// image and a PDF, a model turn with text and two function calls (one with an id), their
// responses, function declarations in both schema forms, toolConfig, generationConfig —
// becomes the gateway request it stands for.
func TestGeminiToChatRequest(t *testing.T) {
	c, req, err := geminiRequest(t, "models/openai/gpt-4o", `{
		"systemInstruction":{"role":"user","parts":[{"text":"You are terse."},{"text":"Answer in English."}]},
		"contents":[
			{"role":"user","parts":[{"text":"What is in these?"},{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}},
				{"inlineData":{"mimeType":"application/pdf","data":"JVBERi0="}}]},
			{"role":"model","parts":[{"text":"thinking...","thought":true},{"text":"Checking."},
				{"functionCall":{"name":"read_file","args":{"path":"a.go"}}},{"functionCall":{"id":"fc-9","name":"list","args":{}}}]},
			{"role":"user","parts":[{"functionResponse":{"id":"fc-9","name":"list","response":{"files":["a.go"]}}},
				{"functionResponse":{"name":"read_file","response":{"output":"package a"}}},{"text":"Go on."}]}],
		"tools":[{"functionDeclarations":[
			{"name":"read_file","description":"Read a file","parameters":{"type":"OBJECT","properties":{"path":{"type":"STRING"}},"required":["path"]}},
			{"name":"list","parametersJsonSchema":{"type":"object","properties":{}}}]}],
		"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["read_file"]}},
		"generationConfig":{"temperature":0.5,"topP":0.9,"topK":40,"maxOutputTokens":1000,"stopSequences":["X","Y"],"seed":7,
			"responseMimeType":"application/json","responseSchema":{"type":"OBJECT","properties":{"n":{"type":"INTEGER"}}},
			"thinkingConfig":{"thinkingBudget":2048,"includeThoughts":true}},
		"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(req.Models) != "[openai/gpt-4o]" {
		t.Errorf("models %v", req.Models)
	}
	roles := []string{}
	for _, m := range c.Messages {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,tool,tool,user" {
		t.Fatalf("roles %s", got)
	}
	if c.Messages[0].Content.Parts[0].Text != "You are terse.\nAnswer in English." {
		t.Errorf("system %+v", c.Messages[0].Content)
	}
	user := c.Messages[1].Content.Parts
	if len(user) != 3 || user[1].ImageURL == nil || user[1].ImageURL.URL != "data:image/png;base64,iVBORw0KGgo=" ||
		user[2].File == nil || user[2].File.FileData != "data:application/pdf;base64,JVBERi0=" {
		t.Errorf("user parts %+v", user)
	}
	asst := c.Messages[2]
	if asst.Content.Parts[0].Text != "Checking." || len(asst.ToolCalls) != 2 || asst.ToolCalls[0].ID != "call_1_2" ||
		asst.ToolCalls[0].Function.Arguments != `{"path":"a.go"}` || asst.ToolCalls[1].ID != "fc-9" {
		t.Errorf("model turn %+v", asst)
	}
	if m := c.Messages[3]; m.ToolCallID != "fc-9" || m.Content.Parts[0].Text != `{"files":["a.go"]}` {
		t.Errorf("first response %+v", m)
	}
	if m := c.Messages[4]; m.ToolCallID != "call_1_2" || m.Content.Parts[0].Text != "package a" {
		t.Errorf("second response %+v", m)
	}
	if len(req.Tools) != 2 || string(req.Tools[0].Parameters) != `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}` {
		t.Errorf("tools %+v", req.Tools)
	}
	if tc := req.ToolChoice; tc == nil || tc.Mode != providers.ToolChoiceFunction || tc.Name != "read_file" {
		t.Errorf("tool choice %+v", req.ToolChoice)
	}
	if *req.Temperature != 0.5 || *req.TopP != 0.9 || *req.TopK != 40 || req.MaxTokens != 1000 || fmt.Sprint(req.Stop) != "[X Y]" {
		t.Errorf("sampling %v %v %v %d %v", *req.Temperature, *req.TopP, *req.TopK, req.MaxTokens, req.Stop)
	}
	if f := req.ResponseFormat; f == nil || f.Type != providers.ResponseJSONSchema || string(f.Schema) != `{"type":"object","properties":{"n":{"type":"integer"}}}` {
		t.Errorf("response format %+v", req.ResponseFormat)
	}
	if th := req.Thinking; th == nil || th.BudgetTokens != 2048 || !th.Summary {
		t.Errorf("thinking %+v", req.Thinking)
	}
}

// TestGeminiToChatRequestOptions: the other settings — ANY with several allowed names
// keeps only those tools, NONE, a dynamic or zero thinking budget, JSON without a schema,
// candidateCount.
func TestGeminiToChatRequestOptions(t *testing.T) {
	tools := `"tools":[{"functionDeclarations":[{"name":"a"},{"name":"b"},{"name":"c"}]}]`
	_, req, err := geminiRequest(t, "m/x", `{"contents":[{"parts":[{"text":"hi"}]}],`+tools+`,"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["a","c"]}}}`)
	if err != nil || len(req.Tools) != 2 || req.Tools[1].Name != "c" || req.ToolChoice.Mode != providers.ToolChoiceRequired {
		t.Errorf("ANY with two names: %v %+v", err, req)
	}
	_, req, err = geminiRequest(t, "m/x", `{"contents":[{"parts":[{"text":"hi"}]}],`+tools+`,"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}}`)
	if err != nil || req.ToolChoice.Mode != providers.ToolChoiceNone {
		t.Errorf("NONE: %v %+v", err, req.ToolChoice)
	}
	_, req, err = geminiRequest(t, "m/x", `{"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":-1}}}`)
	if err != nil || req.Thinking == nil || req.Thinking.BudgetTokens != 0 {
		t.Errorf("dynamic thinking: %v %+v", err, req.Thinking)
	}
	_, req, err = geminiRequest(t, "m/x", `{"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":0}}}`)
	if err != nil || req.Thinking != nil {
		t.Errorf("thinking off: %v %+v", err, req.Thinking)
	}
	_, req, err = geminiRequest(t, "m/x", `{"contents":[{"parts":[{"text":"news?"}]}],"tools":[{"googleSearch":{}}]}`)
	if err != nil || !req.Search || len(req.Tools) != 0 {
		t.Errorf("googleSearch: %v search %v tools %d", err, req != nil && req.Search, len(req.Tools))
	}
	c, req, err := geminiRequest(t, "m/x", `{"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"responseMimeType":"application/json","candidateCount":3}}`)
	if err != nil || req.ResponseFormat == nil || req.ResponseFormat.Type != providers.ResponseJSONObject || c.Choices() != 3 {
		t.Errorf("JSON, 3 candidates: %v %+v", err, req.ResponseFormat)
	}
	_, req, err = geminiRequest(t, "m/x", `{"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"responseMimeType":"application/json",
		"responseJsonSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}`)
	if err != nil || string(req.ResponseFormat.Schema) != `{"type":"object","properties":{"ok":{"type":"boolean"}}}` {
		t.Errorf("responseJsonSchema: %v %+v", err, req.ResponseFormat)
	}
}

// TestGeminiToChatRequestErrors: bad input is an ErrInvalid naming the Gemini field.
func TestGeminiToChatRequestErrors(t *testing.T) {
	for body, field := range map[string]string{
		`{"contents":[]}`: "contents",
		`{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"model","parts":[{"text":"b","inlineData":{"mimeType":"image/png","data":"AA=="}}]}]}`: "contents[1].parts[0]",
		`{"contents":[{"role":"system","parts":[{"text":"a"}]}]}`:                                                                                                                      "contents[0].role",
		`{"contents":[{"role":"user","parts":[]}]}`:                                                                                                                                    "contents[0].parts",
		`{"contents":[{"role":"user","parts":[{"functionCall":{"name":"f"}}]}]}`:                                                                                                       "contents[0].parts[0].functionCall",
		`{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]}]}`:                                                                                     "contents[0].parts[0].functionResponse",
		`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":[1]}}]}]}`:                                                                                           "contents[0].parts[0].functionCall.args",
		`{"contents":[{"parts":[{"inlineData":{"mimeType":"image/tiff","data":"AAAA"}}]}]}`:                                                                                            "contents[0].parts[0].inlineData",
		`{"contents":[{"parts":[{"executableCode":{"language":"PYTHON","code":"1"}}]}]}`:                                                                                               "contents[0].parts[0]",
		`{"contents":[{"parts":[{"text":"a"}]}],"tools":[{"functionDeclarations":[{"description":"x"}]}]}`:                                                                             "tools[0].functionDeclarations[0].name",
		`{"contents":[{"parts":[{"text":"a"}]}],"toolConfig":{"functionCallingConfig":{"mode":"SOMETIMES"}}}`:                                                                          "toolConfig.functionCallingConfig.mode",
		`{"contents":[{"parts":[{"text":"a"}]}],"tools":[{"functionDeclarations":[{"name":"f"}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["g"]}}}`: "toolConfig.functionCallingConfig.allowedFunctionNames[0]",
		`{"contents":[{"parts":[{"text":"a"}]}],"generationConfig":{"responseMimeType":"text/x.enum"}}`:                                                                                "generationConfig.responseMimeType",
		`{"contents":[{"parts":[{"text":"a"}]}],"generationConfig":{"candidateCount":17}}`:                                                                                             "generationConfig.candidateCount",
		`{"contents":[{"parts":[{"text":"a"}]}],"generationConfig":{"topK":0.5}}`:                                                                                                      "generationConfig.topK",
		`{"contents":[{"parts":[{"text":"a"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":-5}}}`:                                                                          "generationConfig.thinkingConfig.thinkingBudget",
		`{"contents":[{"parts":[{"text":"a"}]}],"generationConfig":{"temperature":3}}`:                                                                                                 "generationConfig.temperature",
		`{"contents":[{"parts":[{"text":"a"}]}],"generationConfig":{"responseModalities":["IMAGE"]}}`:                                                                                  "generationConfig.responseModalities[0]",
		`{"contents":[{"parts":[{"text":"a"}]}],"cachedContent":"cachedContents/x"}`:                                                                                                   "cachedContent",
		`{"contents":[{"parts":[{"text":"a"}]}],"systemInstruction":{"parts":[{"functionCall":{"name":"f"}}]}}`:                                                                        "systemInstruction.parts[0]",
	} {
		_, _, err := geminiRequest(t, "m/x", body)
		var ve *ValidationError
		if !errors.Is(err, ErrInvalid) || !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("%s: %v, want a field %s", body, err, field)
		}
	}
	if _, _, err := geminiRequest(t, "", `{"contents":[{"parts":[{"text":"a"}]}]}`); !errors.Is(err, ErrInvalid) {
		t.Errorf("no model: %v", err)
	}
}

// TestNewGeminiResponse: an answer's reasoning (when asked), text and calls as parts,
// finish reasons and usage in Gemini's terms.
func TestNewGeminiResponse(t *testing.T) {
	resp := &Response{ResponseMessageID: "r1", Provider: "openai", Model: "gpt-4o", FinishReason: "tool_calls",
		Message:   AssistantMessage{Content: []ContentBlock{{Type: "text", Text: "Let me look."}}},
		Reasoning: []providers.ReasoningBlock{{Text: "The user wants a file."}},
		ToolCalls: []providers.ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`}, {ID: "call_2", Name: "cut", Arguments: `{"pa`}},
		Usage:     Usage{PromptTokens: 100, CompletionTokens: 30, ReasoningTokens: 12, CachedTokens: 40}}
	b, _ := json.Marshal(NewGeminiResponse(resp, "gemini-2.5-pro", true))
	var got map[string]any
	json.Unmarshal(b, &got)
	cand := got["candidates"].([]any)[0].(map[string]any)
	parts, _ := json.Marshal(cand["content"].(map[string]any)["parts"])
	if want := `[{"text":"The user wants a file.","thought":true},{"text":"Let me look."},{"functionCall":{"args":{"path":"a.go"},"id":"call_1","name":"read_file"}},{"functionCall":{"args":{},"id":"call_2","name":"cut"}}]`; string(parts) != want {
		t.Errorf("parts %s\nwant  %s", parts, want)
	}
	usage, _ := json.Marshal(got["usageMetadata"])
	if want := `{"cachedContentTokenCount":40,"candidatesTokenCount":18,"promptTokenCount":100,"thoughtsTokenCount":12,"totalTokenCount":130}`; string(usage) != want {
		t.Errorf("usage %s", usage)
	}
	if cand["finishReason"] != "STOP" || got["modelVersion"] != "gemini-2.5-pro" || got["responseId"] != "r1" || cand["content"].(map[string]any)["role"] != "model" {
		t.Errorf("response %s", b)
	}
	if b, _ := json.Marshal(NewGeminiResponse(resp, "m", false)); strings.Contains(string(b), `"thought":true`) {
		t.Errorf("thoughts unasked: %s", b)
	}
	for finish, want := range map[string]string{"stop": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY", "recitation": "RECITATION",
		"malformed_function_call": "MALFORMED_FUNCTION_CALL", "tool_calls": "STOP", "weird": "OTHER"} {
		if got := GeminiFinishReason(finish); got != want {
			t.Errorf("finish %q: %q, want %q", finish, got, want)
		}
	}
	resp.Sources = []providers.Source{{URL: "https://example.com/a", Title: "example.com"}}
	b, _ = json.Marshal(NewGeminiResponse(resp, "m", false).Candidates[0].GroundingMetadata)
	if want := `{"groundingChunks":[{"web":{"uri":"https://example.com/a","title":"example.com"}}]}`; string(b) != want {
		t.Errorf("groundingMetadata %s", b)
	}
	resp.Sources = nil
	two := NewGeminiResponseN([]*Response{resp, resp}, "m", false)
	if len(two.Candidates) != 2 || two.Candidates[1].Index != 1 || two.UsageMetadata.PromptTokenCount != 200 {
		t.Errorf("two candidates: %+v", two)
	}
	for code, status := range map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
		429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"} {
		if got := GeminiStatus(code); got != status {
			t.Errorf("status %d: %s", code, got)
		}
	}
}

// TestWriteGeminiStream: interleaved fragments of two tool calls come whole, in order,
// with their arguments objects, in the last chunk with finishReason and usage; the text
// before them is a chunk of its own.
func TestWriteGeminiStream(t *testing.T) {
	g, up := responsesGateway(t)
	up.on("m", interleavedCalls("Let me check."))
	_, req, err := geminiRequest(t, "up/m", `{"contents":[{"parts":[{"text":"Weather and time?"}]}],
		"tools":[{"functionDeclarations":[{"name":"get_weather"},{"name":"get_time"}]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	req.Stream = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := g.Stream(ctx, Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := WriteGeminiStream(rec, st, "up/m", false, true); err != nil {
		t.Fatal(err)
	}
	var chunks []GeminiResponse
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var c GeminiResponse
			if err := json.Unmarshal([]byte(data), &c); err != nil {
				t.Fatal(err)
			}
			chunks = append(chunks, c)
		}
	}
	if len(chunks) != 2 || *chunks[0].Candidates[0].Content.Parts[0].Text != "Let me check." || chunks[0].Candidates[0].FinishReason != "" {
		t.Fatalf("chunks %s", rec.Body)
	}
	last := chunks[1].Candidates[0]
	parts, _ := json.Marshal(last.Content.Parts)
	if want := `[{"functionCall":{"id":"call_a","name":"get_weather","args":{"location":"Paris"}}},{"functionCall":{"id":"call_b","name":"get_time","args":{"tz":"Europe/Paris"}}}]`; string(parts) != want {
		t.Errorf("calls %s\nwant  %s", parts, want)
	}
	if last.FinishReason != "STOP" || chunks[1].UsageMetadata == nil || chunks[1].ModelVersion != "up/m" || chunks[1].ResponseID == "" {
		t.Errorf("last chunk %+v", chunks[1])
	}
}

// TestGeminiSchema: Google's schema subset becomes JSON Schema at every depth.
func TestGeminiSchema(t *testing.T) {
	out, err := geminiSchema(json.RawMessage(`{"type":"ARRAY","items":{"type":"OBJECT","nullable":true,"propertyOrdering":["a"],
		"properties":{"a":{"type":"STRING","enum":["x","y"]},"b":{"anyOf":[{"type":"NUMBER"},{"type":"BOOLEAN"}]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"items":{"properties":{"a":{"enum":["x","y"],"type":"string"},"b":{"anyOf":[{"type":"number"},{"type":"boolean"}]}},"type":["object","null"]},"type":"array"}`; string(out) != want {
		t.Errorf("%s\nwant %s", out, want)
	}
	// Types alone differ: rewritten as text, keys in their order, strings untouched.
	out, err = geminiSchema(json.RawMessage(`{"type": "OBJECT", "properties": {"type": {"type": "STRING", "description": "\"type\":\"OBJECT\""}}}`))
	if want := `{"type":"object","properties":{"type":{"type":"string","description":"\"type\":\"OBJECT\""}}}`; err != nil || string(out) != want {
		t.Errorf("%s %v\nwant %s", out, err, want)
	}
	if _, err := geminiSchema(json.RawMessage(`{"properties":[1]}`)); err == nil {
		t.Error("properties not an object was accepted")
	}
}
