package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestVirtualKeyRotation: POST /api/v1/keys/{key_id}/rotate gives a leaked key's holder a
// new key at once: the old key stops working on every replica, the new one works with the
// same id, limits and spend; LiteLLM's /key/{key}/regenerate does the same and /key/info
// finds the key by its new value; another owner's key is a 404.
func TestVirtualKeyRotation(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	vk := issue(t, s, `{"name":"bot","max_requests":10}`)
	if resp, b := chatWith(t, hs, vk.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("chat: %d %s", resp.StatusCode, b)
	}
	r := do(t, s, "POST", "/api/v1/keys/"+vk.ID+"/rotate", testKey, "")
	var rotated virtualKey
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &rotated) != nil || rotated.ID != vk.ID ||
		!strings.HasPrefix(rotated.Key, "sy-vk-") || rotated.Key == vk.Key || rotated.Name != "bot" || rotated.MaxRequests != 10 {
		t.Fatalf("rotate: %d %s", r.status, r.raw)
	}
	if resp, b := chatWith(t, hs, vk.Key, "openai/ok"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the old key after rotation: %d %s", resp.StatusCode, b)
	}
	if resp, b := chatWith(t, hs, rotated.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("the new key: %d %s", resp.StatusCode, b)
	}
	if info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID); info.Spend.Requests != 2 {
		t.Fatalf("spend across the rotation %+v, want 2 requests", info.Spend)
	}
	if info := keyInfoOf(t, s, rotated.Key, "/api/v1/keys/self"); info.ID != vk.ID {
		t.Fatalf("self with the new key: %+v", info)
	}
	// LiteLLM's regenerate, by the key's value; /key/info by the new value.
	r = do(t, s, "POST", "/key/"+rotated.Key+"/regenerate", testKey, "")
	var regen struct {
		Key   string `json:"key"`
		Token string `json:"token"`
	}
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &regen) != nil || regen.Token != vk.ID || regen.Key == rotated.Key || !strings.HasPrefix(regen.Key, "sy-vk-") {
		t.Fatalf("regenerate: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "GET", "/key/info?key="+regen.Key, testKey, ""); r.status != http.StatusOK || !strings.Contains(r.raw, vk.ID) {
		t.Fatalf("/key/info by the regenerated key: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "GET", "/key/info?key="+rotated.Key, testKey, ""); r.status != http.StatusNotFound {
		t.Fatalf("/key/info by a key rotated away: %d %s", r.status, r.raw)
	}
	// Another owner, and a virtual key rotating itself.
	if r := do(t, s, "POST", "/api/v1/keys/"+vk.ID+"/rotate", completionsOtherKey, ""); r.status != http.StatusNotFound {
		t.Fatalf("another owner rotates it: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/api/v1/keys/"+vk.ID+"/rotate", regen.Key, ""); r.status != http.StatusForbidden {
		t.Fatalf("a virtual key rotates itself: %d %s", r.status, r.raw)
	}
}
