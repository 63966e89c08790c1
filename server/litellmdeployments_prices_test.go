package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/deployments"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/routing"
)

// TestDeploymentPricesReachModelSelect: a deployment added by POST /model/new with its own
// prices is priced by POST /api/v1/model-select (tradeoff cost) and by the trainer's price
// lookup at once, as serve wires them (routing.LiveProvidersCatalog over
// completions.Gateway.Prices); /model/update's new prices take effect, and /model/delete
// makes the model unpriced again.
func TestDeploymentPricesReachModelSelect(t *testing.T) {
	st := newTestStore(t)
	t.Cleanup(func() { st.Close() })
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := deployments.New(deployments.Options{Store: st, Gateway: g, Registry: reg,
		SecretKey: []byte("salt-for-tests"), LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	live := routing.LiveProvidersCatalog(func() *providers.Catalog {
		c, _ := g.Prices().(*providers.Catalog)
		return c
	})
	trainerPrice := routing.CatalogPrice(live) // what serve hands trainer.WithPrices
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	for _, opt := range []Option{Completions(g), StoredDeployments(svc),
		ModelSelection(routing.NewSelector(routing.Options{Store: st, Catalog: live}))} {
		if err := opt(s); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	call := func(path, body string) string {
		t.Helper()
		code, b := adminCall(t, hs, "POST", path, body)
		if code != http.StatusOK {
			t.Fatalf("%s %s: %d %s", path, body, code, b)
		}
		return b
	}
	const house = "openai/house-model-7x"
	// Every candidate within the tolerance: the cheapest known price is first.
	pick := func() string {
		t.Helper()
		_, out := postSelect(t, hs, "/api/v1/model-select", testKey, `{"messages":[{"role":"user","content":"Summarize the plot of Hamlet."}],`+
			`"llm_providers":[{"provider":"openai","model":"gpt-4o"},{"provider":"openai","model":"house-model-7x"}],"tradeoff":"cost","tradeoff_tolerance":1}`)
		label, _ := out["llm_label"].(string)
		return label
	}
	if got := pick(); got != "openai/gpt-4o" {
		t.Fatalf("before the deployment: picked %q, want openai/gpt-4o (%s unpriced)", got, house)
	}
	if _, ok := trainerPrice(house); ok {
		t.Fatalf("%s priced before its deployment", house)
	}

	call("/model/new", `{"model_name":"house","litellm_params":{"model":"`+house+`"},"model_info":{"id":"house-1","input_cost_per_token":0.0000001,"output_cost_per_token":0.0000003}}`)
	if got := pick(); got != house {
		t.Errorf("after /model/new at $0.1/$0.3 per 1M: picked %q, want %s", got, house)
	}
	if p, ok := trainerPrice(house); !ok || p < 0.199 || p > 0.201 {
		t.Errorf("trainer price of %s after /model/new = %v %v, want 0.2", house, p, ok)
	}

	call("/model/update", `{"model_name":"house","litellm_params":{"model":"`+house+`","input_cost_per_token":0.001,"output_cost_per_token":0.001},"model_info":{"id":"house-1"}}`)
	if got := pick(); got != "openai/gpt-4o" {
		t.Errorf("after /model/update to $1000 per 1M: picked %q, want openai/gpt-4o", got)
	}
	if p, ok := trainerPrice(house); !ok || p < 999 || p > 1001 {
		t.Errorf("trainer price of %s after /model/update = %v %v, want 1000", house, p, ok)
	}

	call("/model/delete", `{"id":"house-1"}`)
	if got := pick(); got != "openai/gpt-4o" {
		t.Errorf("after /model/delete: picked %q, want openai/gpt-4o", got)
	}
	if p, ok := trainerPrice(house); ok {
		t.Errorf("%s still priced (%v) after /model/delete", house, p)
	}
}
