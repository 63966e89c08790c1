package server

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// Any key can stop everyone's durable spend: one completion naming a model longer than
// bbolt's 32 KiB key limit (the upstream echoes it, it becomes the last segment of the
// rollup key) makes every flush's single transaction fail, so another key's
// GET /api/v1/usage/spend answers 500 and nothing is written again until restart.
func TestReview12eLongModelNameBreaksOtherKeysSpend(t *testing.T) {
	ups := httptest.NewServer(&fakeOpenAIUpstream{})
	t.Cleanup(ups.Close)
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "s.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	roll := usagelog.NewRollup(st, usagelog.RollupOptions{FlushEvery: time.Hour})
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: ups.URL + "/v1", APIKey: "sk-up"}))
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, Observer: roll})
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
	long := "up/" + strings.Repeat("x", 40000)
	resp, b := do2(t, "POST", hs.URL+"/v1/chat/completions", completionsOtherKey, `{"model":"`+long+`","messages":[{"role":"user","content":"x"}]}`, nil)
	t.Logf("attacker's completion: %d %.100s", resp.StatusCode, b)
	resp, b = do2(t, "POST", hs.URL+"/v1/chat/completions", testKey, `{"model":"up/ok","messages":[{"role":"user","content":"x"}]}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	code, m := getJSON(t, hs.URL+"/api/v1/usage/spend?by=model", testKey)
	if code != 200 {
		t.Fatalf("victim's spend: %d %v", code, m)
	}
	if rows, _ := m["data"].([]any); len(rows) != 1 {
		t.Fatalf("victim's spend: %v", m)
	}
}
