package client_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestGeminiStructuredOutputWithToolsNodeSDK drives a Gemini model with a json_schema
// response format beside tools (what an OpenAI Agents SDK agent with tools and an output
// type sends) through the official OpenAI Node SDK
// (testdata/openai_gemini_output_check.mjs): the gateway refused it with a 400 (Gemini
// takes no JSON response schema beside functions); now a scripted Gemini that calls the
// answer function it is offered gives the SDK the JSON as the content with finish_reason
// stop, whole, streamed and from the Responses API. Skips, saying why, without node and
// npm or the package.
func TestGeminiStructuredOutputWithToolsNodeSDK(t *testing.T) {
	run := nodeSDK(t)
	const answer = `{"city":"Paris","temp":18}`
	gem := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Tools []struct {
				FunctionDeclarations []struct{ Name string } `json:"functionDeclarations"`
			} `json:"tools"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		// Call the last function offered: the answer function, as the gateway adds it.
		decls := body.Tools[0].FunctionDeclarations
		resp := fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":%q,"args":%s}}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":10,"totalTokenCount":30}}`,
			decls[len(decls)-1].Name, answer)
		if strings.Contains(r.URL.Path, "streamGenerateContent") {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\n", resp)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, resp)
	}))
	t.Cleanup(gem.Close)
	_, base := realServerURL(t, envGateway(t, map[string]string{"GEMINI_API_KEY": "g-test", "GEMINI_BASE_URL": gem.URL}))
	out := run("testdata/openai_gemini_output_check.mjs", base)
	var got struct {
		Chat, Stream, Responses map[string]any
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	for name, c := range map[string]map[string]any{"chat": got.Chat, "stream": got.Stream} {
		if c["content"] != answer || c["finish"] != "stop" || c["calls"] != float64(0) {
			t.Errorf("%s: %v", name, c)
		}
	}
	if got.Responses["text"] != answer || got.Responses["status"] != "completed" || fmt.Sprint(got.Responses["types"]) != "[message]" {
		t.Errorf("responses: %v", got.Responses)
	}
}
