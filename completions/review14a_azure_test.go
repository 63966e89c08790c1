package completions

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview14aAzureThroughGateway (passes): through the gateway, an Azure deployment's
// base model decides the reasoning-model handling (temperature dropped for a deployment of
// o3-mini, by base_models or by its own name; kept for gpt-4o) and its price: a second
// Azure resource of format azure (a name of its own) prices a deployment named after its
// model at Azure's rate, and a deployment whose name the catalogue does not know, and that
// base_models does not map, has no price (price_known false).
func TestReview14aAzureThroughGateway(t *testing.T) {
	var mu sync.Mutex
	bodies := map[string]map[string]any{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		mu.Lock()
		bodies[r.URL.Path] = m
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":100}}`)
	}))
	defer srv.Close()
	fc, err := providers.ParseConfig([]byte(`{"providers": [
		{"name": "azure", "base_models": {"reasoner": "o3-mini", "chat": "gpt-4o"}},
		{"name": "azure-eu", "format": "azure", "base_url": "` + srv.URL + `", "api_key_env": "EU_KEY"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		return map[string]string{"AZURE_API_KEY": "k", "AZURE_API_BASE": srv.URL, "EU_KEY": "eu"}[k]
	}
	reg := providers.FromEnv(env, providers.Options{})
	if err := reg.Configure(fc, env, providers.Options{}); err != nil {
		t.Fatal(err)
	}
	cat := providers.DefaultCatalog()
	g, err := New(Options{Providers: reg, Prices: cat})
	if err != nil {
		t.Fatal(err)
	}
	u := providers.Usage{PromptTokens: 1000, CompletionTokens: 100}
	temp := 0.3
	for _, c := range []struct {
		model, path string
		temperature bool
		price       providers.Cost
	}{
		{"azure/reasoner", "/openai/deployments/reasoner/chat/completions", false, cat.Cost("azure/o3-mini", u)},
		{"azure/o3-mini", "/openai/deployments/o3-mini/chat/completions", false, cat.Cost("azure/o3-mini", u)},
		{"azure/chat", "/openai/deployments/chat/chat/completions", true, cat.Cost("azure/gpt-4o", u)},
		{"azure-eu/gpt-4o", "/openai/deployments/gpt-4o/chat/completions", true, cat.Cost("azure/gpt-4o", u)},
		{"azure-eu/team-bot", "/openai/deployments/team-bot/chat/completions", true, providers.Cost{}},
	} {
		req := userReq("hi", c.model)
		req.Temperature = &temp
		resp, err := g.Complete(context.Background(), Scope{}, req)
		if err != nil {
			t.Fatalf("%s: %v", c.model, err)
		}
		mu.Lock()
		b, ok := bodies[c.path]
		mu.Unlock()
		if !ok {
			t.Errorf("%s: nothing sent to %s", c.model, c.path)
			continue
		}
		if _, has := b["temperature"]; has != c.temperature {
			t.Errorf("%s: temperature sent %v, want %v", c.model, has, c.temperature)
		}
		costs := resp.Usage.Costs
		if costs.PriceKnown != c.price.Known || costs.TotalTokensCost != c.price.TotalUSD || c.price.Known && c.price.TotalUSD <= 0 {
			t.Errorf("%s: costs %+v, want %+v", c.model, costs, c.price)
		}
	}
}
