package completions

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestAzureDeploymentPricedAsItsBaseModel: an Azure deployment of a user-chosen name is
// priced as the model its configuration says it runs (base_models), one named after its
// model by its name, and any other has no price (price_known false), never a made-up one.
func TestAzureDeploymentPricedAsItsBaseModel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":100}}`)
	}))
	defer srv.Close()
	fc, err := providers.ParseConfig([]byte(`{"providers": [{"name": "azure", "base_models": {"team-prod": "gpt-4o-2024-08-06"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		return map[string]string{"AZURE_API_KEY": "k", "AZURE_API_BASE": srv.URL}[k]
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
	for model, want := range map[string]providers.Cost{
		"azure/team-prod":  cat.Cost("azure/gpt-4o-2024-08-06", u),
		"azure/gpt-4o":     cat.Cost("azure/gpt-4o", u),
		"azure/team-other": {},
	} {
		resp, err := g.Complete(context.Background(), Scope{}, userReq("hi", model))
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		c := resp.Usage.Costs
		if c.PriceKnown != want.Known || c.TotalTokensCost != want.TotalUSD || want.Known && want.TotalUSD <= 0 {
			t.Errorf("%s: costs %+v, want %+v", model, c, want)
		}
	}
}
