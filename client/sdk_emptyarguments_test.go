package client_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestEmptyArgumentsNodeSDK: an OpenAI-compatible upstream that calls a function without
// parameters with arguments "" — which the official OpenAI Node SDK's runTools helper
// failed to parse, sending the parse error back as the tool's result without calling the
// function — gives the SDK "{}", so the helper calls the function, whole and streamed
// (testdata/openai_empty_arguments_check.mjs). Skips, saying why, without node and npm or
// the package.
func TestEmptyArgumentsNodeSDK(t *testing.T) {
	run := nodeSDK(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream   bool `json:"stream"`
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		answered := req.Messages[len(req.Messages)-1].Role == "tool"
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			if answered {
				fmt.Fprint(w, `{"id":"c2","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"It is noon."},"finish_reason":"stop"}]}`)
				return
			}
			fmt.Fprint(w, `{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"now","arguments":""}}]},"finish_reason":"tool_calls"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if answered {
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"It is noon.\"},\"finish_reason\":null}]}\n\n"+
				"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
			return
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"now\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n"+
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(up.Close)
	_, base := realServerURL(t, envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.URL}))
	out := run("testdata/openai_empty_arguments_check.mjs", base)
	var got map[string]struct {
		Args  []map[string]any `json:"args"`
		Final string           `json:"final"`
		Error string           `json:"error"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	for _, mode := range []string{"whole", "stream"} {
		if g := got[mode]; g.Error != "" || len(g.Args) != 1 || len(g.Args[0]) != 0 || g.Final != "It is noon." {
			t.Errorf("%s: %+v", mode, g)
		}
	}
}
