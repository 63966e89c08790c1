package server

import (
	"net/http"
	"testing"
)

// TestBodyFallbacksRouterFormatOnSurfaces: LiteLLM's body fallbacks in its router's
// format ([{"up/down": ["good"]}]) are accepted on /v1/chat/completions, /v1/responses
// and /v1/messages as that request's fallbacks for the model asked (they were a 400), an
// entry for another model giving none, not the server's.
func TestBodyFallbacksRouterFormatOnSurfaces(t *testing.T) {
	hs, up := routerSettingsServer(t)
	for _, route := range []struct {
		name string
		send func(model, fallbacks string) (*http.Response, []byte)
	}{
		{"/v1/chat/completions", func(model, fallbacks string) (*http.Response, []byte) {
			return post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"`+model+`","max_retries":0,"fallbacks":`+fallbacks+`,"messages":[{"role":"user","content":"hi"}]}`)
		}},
		{"/v1/responses", func(model, fallbacks string) (*http.Response, []byte) {
			return post(t, hs.URL+"/v1/responses", testKey, `{"model":"`+model+`","max_retries":0,"fallbacks":`+fallbacks+`,"input":"hi"}`)
		}},
		{"/v1/messages", func(model, fallbacks string) (*http.Response, []byte) {
			return post(t, hs.URL+"/v1/messages", testKey, `{"model":"`+model+`","max_retries":0,"max_tokens":10,"fallbacks":`+fallbacks+`,"messages":[{"role":"user","content":"hi"}]}`)
		}},
	} {
		if resp, out := route.send("up/down", `[{"up/down":["good"]}]`); resp.StatusCode != http.StatusOK || up.count("down") != 1 || up.count("ok") != 1 {
			t.Errorf("%s: the entry of the model asked: %d %s", route.name, resp.StatusCode, out)
		}
		// The group flaky falls back to up/ok on the server: an entry for another model
		// leaves none.
		if resp, out := route.send("flaky", `[{"other":["good"]}]`); resp.StatusCode == http.StatusOK || up.count("down") != 1 || up.count("ok") != 0 {
			t.Errorf("%s: no entry for the model asked: %d %s", route.name, resp.StatusCode, out)
		}
	}
}
