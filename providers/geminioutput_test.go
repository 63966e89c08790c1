package providers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// fakeGeminiCalls is a Gemini API that answers every generateContent (streamed or not)
// with function calls of the names scripted, each with arguments args(name); it keeps the
// request bodies.
type fakeGeminiCalls struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
	names  []string
}

func newFakeGeminiCalls(t *testing.T, names ...string) *fakeGeminiCalls {
	f := &fakeGeminiCalls{names: names}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		f.mu.Unlock()
		var parts []string
		for _, n := range f.names {
			parts = append(parts, fmt.Sprintf(`{"functionCall":{"name":%q,"args":%s}}`, n, fakeGeminiArgs(n)))
		}
		resp := `{"candidates":[{"content":{"role":"model","parts":[` + strings.Join(parts, ",") + `]},"finishReason":"STOP","index":0}],
			"usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":10,"totalTokenCount":30}}`
		if strings.Contains(r.URL.Path, "streamGenerateContent") {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\n", strings.Join(strings.Fields(resp), " "))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, resp)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func fakeGeminiArgs(name string) string {
	if name == "weather" {
		return `{"city":"Paris","temp":18}`
	}
	return `{"city":"Paris"}`
}

func (f *fakeGeminiCalls) last() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[len(f.bodies)-1]
}

// TestGeminiStructuredOutputWithTools: a json_schema response format beside functions —
// what an OpenAI Agents SDK agent with tools and an output type sends — which Gemini
// refuses as responseMimeType application/json, is asked as one more function named after
// the schema, with functionCallingConfig ANY (the answer alone with tool_choice none, the
// caller's forced function kept); its call comes back as the answer's text with
// finish_reason stop, streamed or not, while the caller's function calls stay calls.
// A json_object format beside functions is still refused before any call.
func TestGeminiStructuredOutputWithTools(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"temp":{"type":"number"}},"required":["city","temp"]}`)
	format := &providers.ResponseFormat{Type: providers.ResponseJSONSchema, Name: "weather", Schema: schema, Strict: true}
	tools := []providers.Tool{{Name: "lookup", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}
	msgs := []providers.Message{{Role: "user", Content: "Weather in Paris?"}}
	ctx := context.Background()

	t.Run("answered", func(t *testing.T) {
		f := newFakeGeminiCalls(t, "weather")
		g := providers.NewGemini(providers.Config{Name: "gemini", BaseURL: f.srv.URL, APIKey: "k"})
		req := &providers.Request{Model: "gemini-2.5-flash", Messages: msgs, Tools: tools, ResponseFormat: format}
		if err := g.Check(req.Model, req); err != nil {
			t.Fatalf("Check: %v", err)
		}
		resp, err := g.Complete(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text != `{"city":"Paris","temp":18}` || len(resp.ToolCalls) != 0 || resp.FinishReason != "stop" {
			t.Errorf("answer %q, calls %v, finish %q", resp.Text, resp.ToolCalls, resp.FinishReason)
		}
		body := f.last()
		if gc, _ := body["generationConfig"].(map[string]any); gc["responseMimeType"] != nil || gc["responseSchema"] != nil {
			t.Errorf("generationConfig %v: Gemini refuses a JSON mime type beside functions", gc)
		}
		decls := body["tools"].([]any)[0].(map[string]any)["functionDeclarations"].([]any)
		if len(decls) != 2 || decls[1].(map[string]any)["name"] != "weather" || decls[1].(map[string]any)["parameters"].(map[string]any)["type"] != "OBJECT" {
			t.Errorf("functions declared %v", decls)
		}
		if got, _ := json.Marshal(body["toolConfig"]); string(got) != `{"functionCallingConfig":{"mode":"ANY"}}` {
			t.Errorf("toolConfig %s", got)
		}

		st, err := g.Stream(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		var text strings.Builder
		var calls int
		var finish string
		for {
			c, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			text.WriteString(c.Text)
			calls += len(c.ToolCalls)
			finish += c.FinishReason
		}
		if text.String() != `{"city":"Paris","temp":18}` || calls != 0 || finish != "stop" {
			t.Errorf("streamed %q, %d calls, finish %q", text.String(), calls, finish)
		}
	})

	t.Run("a function called", func(t *testing.T) {
		f := newFakeGeminiCalls(t, "lookup")
		g := providers.NewGemini(providers.Config{Name: "gemini", BaseURL: f.srv.URL, APIKey: "k"})
		resp, err := g.Complete(ctx, &providers.Request{Model: "gemini-2.5-flash", Messages: msgs, Tools: tools, ResponseFormat: format})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text != "" || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "lookup" || resp.FinishReason != "tool_calls" {
			t.Errorf("answer %q, calls %v, finish %q", resp.Text, resp.ToolCalls, resp.FinishReason)
		}
	})

	for _, tc := range []struct {
		name   string
		choice *providers.ToolChoice
		want   string
	}{
		{"tool_choice none: the answer alone", &providers.ToolChoice{Mode: providers.ToolChoiceNone}, `{"functionCallingConfig":{"allowedFunctionNames":["weather"],"mode":"ANY"}}`},
		{"a forced function stays forced", &providers.ToolChoice{Mode: providers.ToolChoiceFunction, Name: "lookup"}, `{"functionCallingConfig":{"allowedFunctionNames":["lookup"],"mode":"ANY"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeGeminiCalls(t, "weather")
			g := providers.NewGemini(providers.Config{Name: "gemini", BaseURL: f.srv.URL, APIKey: "k"})
			if _, err := g.Complete(ctx, &providers.Request{Model: "gemini-2.5-flash", Messages: msgs, Tools: tools, ResponseFormat: format, ToolChoice: tc.choice}); err != nil {
				t.Fatal(err)
			}
			if got, _ := json.Marshal(f.last()["toolConfig"]); string(got) != tc.want {
				t.Errorf("toolConfig %s, want %s", got, tc.want)
			}
		})
	}

	t.Run("json_object beside functions is refused", func(t *testing.T) {
		g := providers.NewGemini(providers.Config{Name: "gemini", BaseURL: "http://127.0.0.1:1", APIKey: "k"})
		req := &providers.Request{Model: "gemini-2.5-flash", Messages: msgs, Tools: tools, ResponseFormat: &providers.ResponseFormat{Type: providers.ResponseJSONObject}}
		var ue *providers.UnsupportedError
		if err := g.Check(req.Model, req); !errors.As(err, &ue) || ue.Field != "response_format" {
			t.Errorf("Check: %v", err)
		}
	})
}
