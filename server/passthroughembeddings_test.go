package server

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestPassThroughPricesEmbeddings: embeddings forwarded through /openai/v1/embeddings
// (usage reported) and Gemini's embedContent (usage estimated) are priced as the
// gateway's /v1/embeddings prices them, their input tokens at the catalogue's embedding
// price, not as chat (which knows no price for an embedding model).
func TestPassThroughPricesEmbeddings(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, ":embedContent") {
			io.WriteString(w, `{"embedding":{"values":[0.1,0.2]}}`)
			return
		}
		io.WriteString(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":1000,"total_tokens":1000}}`)
	}))
	t.Cleanup(up.Close)
	hs, s := passThroughServerOver(t, providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "server-openai-key"}),
		providers.NewGemini(providers.Config{Name: "gemini", BaseURL: up.URL, APIKey: "server-gemini-key"})))
	vk := issue(t, s, `{"name":"emb","models":["openai/text-embedding-3-small","gemini/gemini-embedding-001"],"max_budget_usd":5}`)
	cat := providers.DefaultCatalog()
	cases := []struct {
		name, path, model, body string
		estimated               bool
	}{
		{"openai", "/openai/v1/embeddings", "openai/text-embedding-3-small", `{"model":"text-embedding-3-small","input":"the quick brown fox"}`, false},
		{"gemini", "/gemini/v1beta/models/gemini-embedding-001:embedContent", "gemini/gemini-embedding-001", `{"content":{"parts":[{"text":"the quick brown fox jumps over the lazy dog"}]}}`, true},
	}
	spent := 0.0
	for i, c := range cases {
		resp, answer := sendPassThrough(t, "POST", hs.URL+c.path, c.body, map[string]string{"Authorization": "Bearer " + vk.Key})
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", c.name, resp.StatusCode, answer)
		}
		rows := passThroughHistory(t, s, vk.Key)
		if len(rows) != i+1 {
			t.Fatalf("%s: %d requests recorded, want %d", c.name, len(rows), i+1)
		}
		row := rows[0]
		want := cat.EmbeddingCost(c.model, providers.Usage{PromptTokens: row.PromptTokens})
		if !want.Known || want.TotalUSD <= 0 || row.PromptTokens <= 0 || row.UsageEstimated != c.estimated || (!c.estimated && row.PromptTokens != 1000) {
			t.Fatalf("%s: recorded %d tokens (estimated %v), embedding price %+v", c.name, row.PromptTokens, row.UsageEstimated, want)
		}
		if !row.PriceKnown || math.Abs(row.CostUSD-want.TotalUSD) > 1e-12 {
			t.Errorf("%s: recorded at %v (price known %v), want the embedding price %v", c.name, row.CostUSD, row.PriceKnown, want.TotalUSD)
		}
		spent += want.TotalUSD
		if info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID); math.Abs(info.Spend.CostUSD-spent) > 1e-12 {
			t.Errorf("%s: key spend %v, want %v", c.name, info.Spend.CostUSD, spent)
		}
	}
}
