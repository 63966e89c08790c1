package providers_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestGeminiJSONFormatWithCodeExecutionOrURLContext: a JSON response format beside the code
// execution or URL context tool reaches Gemini 3 as both; Gemini 2.x, which refuses it as
// it refuses search ("controlled generation is not supported with ... tool"), is refused
// before the call naming response_format and the tool.
func TestGeminiJSONFormatWithCodeExecutionOrURLContext(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		body = nil
		_ = json.Unmarshal(raw, &body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"{\"n\":4}"}]},"finishReason":"STOP","index":0}],
			"usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":10,"totalTokenCount":30}}`)
	}))
	defer srv.Close()
	g := providers.NewGemini(providers.Config{Name: "gemini", BaseURL: srv.URL, APIKey: "k"})
	msgs := []providers.Message{{Role: "user", Content: "2+2?"}}
	format := &providers.ResponseFormat{Type: providers.ResponseJSONObject}
	for _, c := range []struct {
		code, url   bool
		tools, says string
	}{
		{true, false, `[{"codeExecution":{}}]`, "code execution"},
		{false, true, `[{"urlContext":{}}]`, "URL context"},
		{true, true, `[{"codeExecution":{}},{"urlContext":{}}]`, "code execution and URL context"},
	} {
		model := "gemini-3-flash-preview"
		req := &providers.Request{Model: model, Messages: msgs, CodeExecution: c.code, URLContext: c.url, ResponseFormat: format}
		if err := g.Check(model, req); err != nil {
			t.Fatalf("%s %s: Check: %v", model, c.says, err)
		}
		if _, err := g.Complete(context.Background(), req); err != nil {
			t.Fatalf("%s %s: %v", model, c.says, err)
		}
		gc, _ := body["generationConfig"].(map[string]any)
		tools, _ := json.Marshal(body["tools"])
		if gc["responseMimeType"] != "application/json" || string(tools) != c.tools {
			t.Errorf("%s %s: generationConfig %v tools %s", model, c.says, gc, tools)
		}

		for _, model := range []string{"gemini-2.5-flash", "gemini-2.0-flash"} {
			body = nil
			req := &providers.Request{Model: model, Messages: msgs, CodeExecution: c.code, URLContext: c.url, ResponseFormat: format}
			var ue *providers.UnsupportedError
			if err := g.Check(model, req); !errors.As(err, &ue) || ue.Field != "response_format" ||
				!strings.Contains(ue.Reason, c.says+" tool") || !strings.Contains(ue.Reason, "Gemini 3") {
				t.Errorf("%s %s: Check: %v", model, c.says, err)
			}
			if _, err := g.Complete(context.Background(), req); err == nil || !strings.Contains(err.Error(), "response_format") {
				t.Errorf("%s %s: Complete: %v", model, c.says, err)
			}
			if body != nil {
				t.Errorf("%s %s: called Gemini with %v", model, c.says, body)
			}
			// Without the JSON format the tool is sent.
			req.ResponseFormat = nil
			if _, err := g.Complete(context.Background(), req); err != nil {
				t.Errorf("%s %s without a JSON format: %v", model, c.says, err)
			}
		}
	}
}
