package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// TestReview17fLiteLLMUpdateExpiredKeyByValue: since 02dbfe3 the LiteLLM key routes find a
// key given by its value (or hash) through its shared-key record (litellmKeyID). But the
// first use of an expired key deletes that record (Auth.sharedKey), so an expired key can
// no longer be found by its value: POST /key/update {"key": <the key>, "duration": "1h"} —
// the way LiteLLM users renew an expired key — answers 404, as do /key/info?key= and
// /key/regenerate. Before the commit the id came from the hash and the renewal worked
// (applyKeyUpdate even says "an expired key's record may be gone ... a new expiry brings it
// back"). Fix: when the shared-key record is missing, fall back to the hash-derived id
// ("vk_"+hash[:16]) and let litellmKeyOf's rec.Hash == hash check confirm it (or keep the
// shared-key record of an expired virtual key instead of deleting it).
func TestReview17fLiteLLMUpdateExpiredKeyByValue(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	vk := issue(t, s, `{"expires_at":"`+time.Now().Add(time.Hour).UTC().Format(time.RFC3339)+`"}`)
	ctx := context.Background()
	past := time.Now().Add(-time.Minute).UTC()
	rec, err := store.GetJSON[storedVirtualKey](ctx, s.cfg.Store, store.VirtualKeys, "key_"+hashPrefix(testKey)+"/"+vk.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec.ExpiresAt = &past
	sk, err := store.GetJSON[storedScopedKey](ctx, s.cfg.Store, store.ScopedKeys, rec.Hash)
	if err != nil {
		t.Fatal(err)
	}
	sk.ExpiresAt = past
	if err := store.PutJSON(ctx, s.cfg.Store, store.VirtualKeys, rec.Owner+"/"+vk.ID, rec); err != nil {
		t.Fatal(err)
	}
	if err := store.PutJSON(ctx, s.cfg.Store, store.ScopedKeys, rec.Hash, sk); err != nil {
		t.Fatal(err)
	}
	// The holder tries the expired key once: refused, and its shared-key record deleted.
	if resp, b := chatWith(t, hs, vk.Key, "openai/ok"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("after expiry: %d %s", resp.StatusCode, b)
	}
	// The admin renews it by its value, as LiteLLM's docs show.
	if r := do(t, s, "GET", "/key/info?key="+vk.Key, testKey, ""); r.status != http.StatusOK {
		t.Errorf("/key/info of the expired key by its value: %d %s", r.status, r.raw)
	}
	r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+vk.Key+`","duration":"1h"}`)
	if r.status != http.StatusOK {
		t.Fatalf("/key/update of the expired key by its value: %d %s", r.status, r.raw)
	}
	if resp, b := chatWith(t, hs, vk.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("renewed key: %d %s", resp.StatusCode, b)
	}
}
