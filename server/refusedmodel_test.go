package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestRefusedBeforeHandlerRecordsModelAsked: a gateway request the server refuses before
// the route's handler runs (a key's rpm_limit's 429, a body over the limit's 413) is
// recorded with the model it asked for as model_group where the request names it outside
// its body — a realtime session's or call's ?model=, a Gemini route's models/{model}, an
// Azure deployment route's {deployment} (escaped or not) — and without one where only the
// body names it, which is not read on the refusal.
func TestRefusedBeforeHandlerRecordsModelAsked(t *testing.T) {
	hs, s := keysServerWith(t, nil, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey, completionsOtherKey}, MaxBodyBytes: 512})
	a := litellmGenerate(t, s, `{"rpm_limit":1,"user_id":"u-asked"}`)
	if st, _, body := postWithID(t, hs.URL+"/v1/chat/completions", a.Key, "asked-0", refusedChat); st != http.StatusOK {
		t.Fatalf("first request: %d %s", st, body) // the key's one request of the minute
	}
	send := func(method, path, rid, body string, want int) {
		t.Helper()
		req, _ := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+a.Key)
		req.Header.Set("X-Request-Id", rid)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, b, want)
		}
	}
	gemini := `{"contents":[{"parts":[{"text":"hi"}]}]}`
	send("POST", "/v1beta/models/openai/ok:generateContent", "asked-gemini", gemini, http.StatusTooManyRequests)
	send("POST", "/v1/models/models/ok2:streamGenerateContent?alt=sse", "asked-gemini-v1", gemini, http.StatusTooManyRequests)
	send("POST", "/openai/deployments/ok/chat/completions?api-version=2024-10-21", "asked-azure", `{"messages":[{"role":"user","content":"hi"}]}`, http.StatusTooManyRequests)
	send("POST", "/openai/deployments/openai%2Fok2/chat/completions", "asked-azure-escaped", `{"messages":[{"role":"user","content":"hi"}]}`, http.StatusTooManyRequests)
	send("POST", "/openai/deployments/openai/ok/embeddings", "asked-azure-slash", `{"input":"hi"}`, http.StatusTooManyRequests)
	send("POST", "/engines/ok2/completions", "asked-engine", `{"prompt":"hi"}`, http.StatusTooManyRequests)
	send("POST", "/v1/realtime/calls?model=gpt-realtime", "asked-call", "v=0", http.StatusTooManyRequests)
	send("POST", "/v1/chat/completions", "asked-body", refusedChat, http.StatusTooManyRequests)
	// GET /v1/realtime is held to no request rate; a body over the limit is refused before it.
	send("GET", "/v1/realtime?model=gpt-realtime-mini", "asked-realtime", strings.Repeat("x", 600), http.StatusRequestEntityTooLarge)

	hist := usageRequestsByID(t, s, testKey)
	for _, tc := range []struct{ rid, op, model string }{
		{"asked-gemini", "", "openai/ok"},
		{"asked-gemini-v1", "", "ok2"},
		{"asked-azure", "", "ok"},
		{"asked-azure-escaped", "", "openai/ok2"},
		{"asked-azure-slash", completions.OperationEmbeddings, "openai/ok"},
		{"asked-engine", "", "ok2"},
		{"asked-call", completions.OperationRealtime, "gpt-realtime"},
		{"asked-body", "", ""},
		{"asked-realtime", completions.OperationRealtime, "gpt-realtime-mini"},
	} {
		refusedRecorded(t, s, tc.rid, tc.op, a.Token, "", "u-asked")
		if got, _ := hist[tc.rid]["model_group"].(string); got != tc.model {
			t.Errorf("%s: model_group %q, want %q", tc.rid, got, tc.model)
		}
	}
}
