package server

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/usagelog"
)

func TestUsageSpendRoute(t *testing.T) {
	hs, _ := spendServer(t, newTestStore(t), "up", providers.DefaultCatalog())
	for _, tags := range []string{"team:a", "team:a,env:prod", "team:b"} {
		resp, b := do2(t, "POST", hs.URL+"/v1/chat/completions", testKey, `{"model":"up/ok","messages":[{"role":"user","content":"x"}]}`,
			map[string]string{"X-Switchyard-Tags": tags})
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
	}
	code, m := getJSON(t, hs.URL+"/api/v1/usage/spend", testKey)
	rows, _ := m["data"].([]any)
	got := map[string]float64{}
	for _, r := range rows {
		rm := r.(map[string]any)
		got[rm["tag"].(string)] = rm["requests"].(float64)
	}
	if code != 200 || m["by"] != "tag" || got["team:a"] != 2 || got["env:prod"] != 1 || got["team:b"] != 1 || len(got) != 3 {
		t.Fatalf("spend by tag: %d %v", code, m)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	if code, m := getJSON(t, hs.URL+"/api/v1/usage/spend?by=model&from="+today+"&to="+today, testKey); code != 200 || len(m["data"].([]any)) != 1 {
		t.Fatalf("spend by model: %d %v", code, m)
	}
	if code, m := getJSON(t, hs.URL+"/api/v1/usage/spend", completionsOtherKey); code != 200 || len(m["data"].([]any)) != 0 {
		t.Fatalf("another key's spend: %d %v", code, m)
	}
	for q, want := range map[string]string{"?by=colour": "by", "?from=yesterday": "from", "?from=2024-01-01&to=2026-01-01": "days", "?from=2026-02-01&to=2026-01-01": "before"} {
		if code, m := getJSON(t, hs.URL+"/api/v1/usage/spend"+q, testKey); code != 422 || !strings.Contains(m["message"].(string), want) {
			t.Errorf("%s: %d %v", q, code, m)
		}
	}
}

// spendServer is a server over the scripted OpenAI upstream as provider, priced by prices,
// with the durable daily spend (Spend, a rollup flushed on reads) on st and the operator
// keys testKey and completionsOtherKey.
func spendServer(t *testing.T, st *store.Store, provider string, prices completions.PriceCatalogue) (*httptest.Server, *Server) {
	t.Helper()
	ups := httptest.NewServer(&fakeOpenAIUpstream{})
	t.Cleanup(ups.Close)
	roll := usagelog.NewRollup(st, usagelog.RollupOptions{FlushEvery: time.Hour})
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: provider, BaseURL: ups.URL + "/v1", APIKey: "sk-up"}))
	g, err := completions.New(completions.Options{Providers: reg, Prices: prices, Store: st, Observer: roll})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey, completionsOtherKey}}, nil)
	for _, o := range []Option{Completions(g), Spend(roll)} {
		if err := o(s); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, s
}
