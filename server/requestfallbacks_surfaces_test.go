package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestRequestFallbacksOnMessagesAndGemini: LiteLLM's request-body fallbacks and
// context_window_fallbacks are read on /v1/messages and on the Gemini API's
// generateContent as on /v1/chat/completions (LiteLLM's proxy sends those routes' bodies
// through its router, which reads them): the request's context window entry is tried on a
// prompt too long, [] leaves its 400 standing, a failing model goes to the plain
// fallbacks; a malformed list or an unknown fallback is a 400 in the surface's own error
// shape naming the field. The Gemini route keeps the model names as written (not made
// lowerCamelCase) and takes the snake_case spelling too.
func TestRequestFallbacksOnMessagesAndGemini(t *testing.T) {
	hs, up := routerSettingsServer(t)
	for _, route := range []struct {
		name string
		send func(model, extra string) (*http.Response, []byte)
	}{
		{"/v1/messages", func(model, extra string) (*http.Response, []byte) {
			return post(t, hs.URL+"/v1/messages", testKey, `{"model":"`+model+`","max_tokens":10,"messages":[{"role":"user","content":"hi"}],`+extra+`}`)
		}},
		{"generateContent", func(model, extra string) (*http.Response, []byte) {
			return geminiPost(t, hs.URL+"/v1beta/models/"+model+":generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],`+extra+`}`)
		}},
	} {
		for _, field := range []string{"context_window_fallbacks", "contextWindowFallbacks"} {
			if route.name == "/v1/messages" && field != "context_window_fallbacks" {
				continue
			}
			if resp, out := route.send("up/toolong", `"`+field+`":[{"up/toolong":["good"]}]`); resp.StatusCode != http.StatusOK || up.count("toolong") != 1 || up.count("ok") != 1 {
				t.Errorf("%s %s: the request's entry: %d %s", route.name, field, resp.StatusCode, out)
			}
		}
		if resp, out := route.send("up/toolong", `"context_window_fallbacks":[]`); resp.StatusCode != http.StatusBadRequest || up.count("toolong") != 1 || up.count("ok")+up.count("down") != 0 {
			t.Errorf("%s: []: %d %s", route.name, resp.StatusCode, out)
		}
		if resp, out := route.send("up/down", `"fallbacks":["good"]`); resp.StatusCode != http.StatusOK || up.count("down") == 0 || up.count("ok") != 1 {
			t.Errorf("%s: fallbacks: %d %s", route.name, resp.StatusCode, out)
		}
		for extra, field := range map[string]string{
			`"context_window_fallbacks":{"up/toolong":["good"]}`:       "context_window_fallbacks",
			`"context_window_fallbacks":[{"up/toolong":["nosuch/x"]}]`: `context_window_fallbacks[0]["up/toolong"]`,
			`"fallbacks":[{"model":"good"}]`:                           "fallbacks[0]",
		} {
			resp, out := route.send("up/toolong", extra)
			e, _ := decodeMap(t, out)["error"].(map[string]any)
			msg, _ := e["message"].(string)
			shape := e["type"] == "invalid_request_error" && decodeMap(t, out)["type"] == "error" // Anthropic's
			if route.name == "generateContent" {
				shape = e["status"] == "INVALID_ARGUMENT" && e["code"] == float64(400) // Google's
			}
			if resp.StatusCode != http.StatusBadRequest || !shape || !strings.Contains(msg, field) || up.count("toolong") != 0 {
				t.Errorf("%s %s: %d %s (want a 400 in the route's shape naming %s)", route.name, extra, resp.StatusCode, out, field)
			}
		}
	}
}
