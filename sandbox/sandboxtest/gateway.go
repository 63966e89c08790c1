package sandboxtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// FakeGateway is a scripted OpenAI-compatible chat completions server for tests: it answers
// POST /v1/chat/completions with the upper-cased last message and counts the calls. It is a
// fake, not a gateway.
type FakeGateway struct {
	// Gateway is what to put in Job.Gateway.
	Gateway sandbox.Gateway

	mu     sync.Mutex
	calls  int
	denied int
	models map[string]int
}

// NewFakeGateway starts a FakeGateway that accepts the key "sk-job-test" and stops it when
// the test ends.
func NewFakeGateway(t testing.TB) *FakeGateway {
	g := &FakeGateway{models: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(srv.Close)
	g.Gateway = sandbox.Gateway{BaseURL: srv.URL + "/v1", APIKey: "sk-job-test", Model: "openai/gpt-test"}
	return g
}

// Calls returns how many completions were served.
func (g *FakeGateway) Calls() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls
}

// Models returns how many calls named each model.
func (g *FakeGateway) Models() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]int{}
	for k, v := range g.models {
		out[k] = v
	}
	return out
}

func (g *FakeGateway) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+g.Gateway.APIKey {
		g.mu.Lock()
		g.denied++
		g.mu.Unlock()
		http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
		return
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	g.mu.Lock()
	g.calls++
	g.models[req.Model]++
	g.mu.Unlock()
	content := strings.ToUpper(req.Messages[len(req.Messages)-1].Content)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id":     "chatcmpl-fake",
		"object": "chat.completion",
		"model":  req.Model,
		"choices": []map[string]any{{
			"index":         0,
			"message":       map[string]string{"role": "assistant", "content": content},
			"finish_reason": "stop",
		}},
		"usage": map[string]int{"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
	})
}
