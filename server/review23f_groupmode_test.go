package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview23fEmbeddingModelGroupHealth: a model group of embedding models (which the
// embeddings route serves) is checked with an embedding request, not a chat completion the
// model cannot answer, and /model/info and /model_group/info give it mode embedding with
// the embedding catalogue's price.
func TestReview23fEmbeddingModelGroupHealth(t *testing.T) {
	var mu sync.Mutex
	paths := map[string]int{}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		paths[r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/v1/embeddings" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"message":"This is not a chat model","type":"invalid_request_error"}}`)
			return
		}
		io.WriteString(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":1,"total_tokens":1}}`)
	}))
	t.Cleanup(up.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "sk-test"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		ModelGroups: map[string]completions.ModelGroup{"embed": {Models: []string{"openai/text-embedding-3-small"}}}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	h := healthOf(t, do(t, s, "GET", "/health", testKey, ""))
	if h.HealthyCount != 1 || h.UnhealthyCount != 0 || paths["/v1/chat/completions"] != 0 || paths["/v1/embeddings"] != 1 {
		t.Errorf("the embedding group's health: %+v, upstream paths %v: want one embedding request", h, paths)
	}
	var info struct{ Data []modelInfoRow }
	r := do(t, s, "GET", "/model/info", testKey, "")
	json.Unmarshal([]byte(r.raw), &info)
	found := false
	for _, row := range info.Data {
		if row.ModelName != "embed" {
			continue
		}
		found = true
		if row.ModelInfo["mode"] != "embedding" || row.ModelInfo["input_cost_per_token"] != 2e-8 {
			t.Errorf("the embedding group's model_info: %v", row.ModelInfo)
		}
	}
	if !found {
		t.Fatalf("no deployment of embed: %s", r.raw)
	}
	r = do(t, s, "GET", "/model_group/info?model_group=embed", testKey, "")
	if !strings.Contains(r.raw, `"mode":"embedding"`) {
		t.Errorf("/model_group/info of embed: %s", r.raw)
	}
}
