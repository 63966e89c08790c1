package server

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/boltstore"
)

// Any key can stop everyone's durable spend: one completion naming a model longer than
// bbolt's 32 KiB key limit (the upstream echoes it, it becomes the last segment of the
// rollup key) makes every flush's single transaction fail, so another key's
// GET /api/v1/usage/spend answers 500 and nothing is written again until restart.
func TestReview12eLongModelNameBreaksOtherKeysSpend(t *testing.T) {
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "s.db"), boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	hs, _ := spendServer(t, st, "up", providers.DefaultCatalog())
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
