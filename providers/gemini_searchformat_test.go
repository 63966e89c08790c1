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

// TestGeminiJSONFormatWithSearch: a JSON response format (a json_schema, or json_object)
// beside Google Search reaches Gemini 3, which grounds a structured answer ("Gemini 3 lets
// you combine Structured Outputs with built-in tools, including Grounding with Google
// Search"), as both; Gemini 2.x, which answers 400 "controlled generation is not supported
// with google_search tool", is refused before the call with a reason saying so.
func TestGeminiJSONFormatWithSearch(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		body = nil
		_ = json.Unmarshal(raw, &body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"{\"city\":\"Paris\"}"}]},"finishReason":"STOP","index":0,
			"groundingMetadata":{"webSearchQueries":["capital of France"]}}],"usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":10,"totalTokenCount":30}}`)
	}))
	defer srv.Close()
	g := providers.NewGemini(providers.Config{Name: "gemini", BaseURL: srv.URL, APIKey: "k"})
	msgs := []providers.Message{{Role: "user", Content: "Capital of France?"}}
	schema := &providers.ResponseFormat{Type: providers.ResponseJSONSchema, Name: "city",
		Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}
	object := &providers.ResponseFormat{Type: providers.ResponseJSONObject}

	for _, model := range []string{"gemini-3-flash-preview", "gemini-3.1-pro-preview", "models/gemini-3-pro-preview"} {
		for _, f := range []*providers.ResponseFormat{schema, object} {
			req := &providers.Request{Model: model, Messages: msgs, Search: true, ResponseFormat: f}
			if err := g.Check(model, req); err != nil {
				t.Fatalf("%s %s: Check: %v", model, f.Type, err)
			}
			resp, err := g.Complete(context.Background(), req)
			if err != nil {
				t.Fatalf("%s %s: %v", model, f.Type, err)
			}
			gc, _ := body["generationConfig"].(map[string]any)
			tools, _ := json.Marshal(body["tools"])
			if gc["responseMimeType"] != "application/json" || string(tools) != `[{"google_search":{}}]` {
				t.Errorf("%s %s: generationConfig %v tools %s", model, f.Type, gc, tools)
			}
			if _, has := gc["responseSchema"]; has != (f == schema) {
				t.Errorf("%s %s: responseSchema %v", model, f.Type, gc["responseSchema"])
			}
			if resp.Text != `{"city":"Paris"}` || resp.Usage.WebSearches == 0 {
				t.Errorf("%s %s: answer %q, searches %d", model, f.Type, resp.Text, resp.Usage.WebSearches)
			}
		}
	}

	for _, model := range []string{"gemini-2.5-flash", "gemini-2.0-flash"} {
		body = nil
		req := &providers.Request{Model: model, Messages: msgs, Search: true, ResponseFormat: schema}
		var ue *providers.UnsupportedError
		if err := g.Check(model, req); !errors.As(err, &ue) || ue.Field != "response_format" ||
			!strings.Contains(ue.Reason, "Google Search") || !strings.Contains(ue.Reason, "Gemini 3") {
			t.Errorf("%s: Check: %v", model, err)
		}
		if _, err := g.Complete(context.Background(), req); err == nil || !strings.Contains(err.Error(), "response_format") {
			t.Errorf("%s: Complete: %v", model, err)
		}
		if body != nil {
			t.Errorf("%s: called Gemini with %v", model, body)
		}
	}
}
