package server

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// TestRegenerateByHashedTokenOnlyTheCurrentKey: LiteLLM names a key by its hashed token
// (the SHA-256 hex of the key), which changes with every regeneration, and answers 404
// "Key … not found" for a token regenerated away. Named so (in the body or the path),
// our regenerate rotates only the key that hash is the current key of: once the key was
// regenerated the old hash is a 404 and changes nothing, and of concurrent regenerations
// naming one hash exactly one succeeds and the rest get that 404, on every store driver.
func TestRegenerateByHashedTokenOnlyTheCurrentKey(t *testing.T) {
	hashOf := func(key string) string { h := sha256.Sum256([]byte(key)); return hex.EncodeToString(h[:]) }
	drivertest.ForEach(t, func(t *testing.T, drv store.Driver) {
		const n = 10
		d := &gatedUpdateDriver{Driver: drv, n: n, open: make(chan struct{})}
		hs, s := keysServer(t, store.New(d), 0)
		g := litellmGenerate(t, s, `{"key_alias":"bot"}`)
		old := hashOf(g.Key)
		d.armed.Store(true)
		replies := atOnce(n, func(i int) reply {
			if i%2 == 0 {
				return do(t, s, "POST", "/key/regenerate", testKey, `{"key":"`+old+`"}`)
			}
			return do(t, s, "POST", "/key/"+old+"/regenerate", testKey, "")
		})
		d.armed.Store(false)
		var newKey string
		for i, r := range replies {
			switch {
			case r.status == http.StatusOK && newKey == "":
				newKey, _ = r.body["key"].(string)
			case r.status == http.StatusOK:
				t.Fatalf("request %d also regenerated the key named by %s: %s", i, old, r.raw)
			case r.status != http.StatusNotFound || !strings.Contains(r.raw, old):
				t.Errorf("request %d: %d %s, want 404 naming the token", i, r.status, r.raw)
			}
		}
		if newKey == "" {
			t.Fatal("no regeneration succeeded")
		}
		// Afterwards: the old hash, both ways, is a 404 that changes nothing.
		for _, r := range []reply{
			do(t, s, "POST", "/key/regenerate", testKey, `{"key":"`+old+`"}`),
			do(t, s, "POST", "/key/"+old+"/regenerate", testKey, `{"max_budget":5}`),
		} {
			if r.status != http.StatusNotFound {
				t.Fatalf("regenerate by a hashed token regenerated away: %d %s", r.status, r.raw)
			}
		}
		if st, b := chatStatus(t, hs.URL, newKey, "openai/ok"); st != http.StatusOK {
			t.Fatalf("the one new key: %d %s", st, b)
		}
		if info := keyInfoViaLiteLLM(t, s, testKey, newKey); info.Token != g.Token || info.MaxBudget != nil {
			t.Fatalf("the key after the refusals: %+v", info)
		}
		// The new key's hash is its token now.
		if r := do(t, s, "POST", "/key/"+hashOf(newKey)+"/regenerate", testKey, ""); r.status != http.StatusOK {
			t.Fatalf("regenerate by the current hashed token: %d %s", r.status, r.raw)
		}
	})
}
