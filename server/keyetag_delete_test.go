package server

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestKeyETagIfMatchDelete: DELETE /api/v1/keys/{key_id} honours If-Match as rotate and
// PATCH do: a stale tag is a 412 naming If-Match with the current ETag, and the key is
// kept and still works; the current tag revokes it; without If-Match it is revoked as
// before. The OpenAPI document declares the header and the 412.
func TestKeyETagIfMatchDelete(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	issue := func(name string) (id, key string) {
		t.Helper()
		r := do(t, s, "POST", "/api/v1/keys", testKey, `{"name":"`+name+`"}`)
		id, _ = r.body["id"].(string)
		key, _ = r.body["key"].(string)
		if r.status != http.StatusCreated || id == "" || key == "" {
			t.Fatalf("issue: %d %s", r.status, r.raw)
		}
		return id, key
	}
	id, _ := issue("bot")
	v0 := keyETag(t, s, id)
	r := do(t, s, "POST", "/api/v1/keys/"+id+"/rotate", testKey, "")
	key1, _ := r.body["key"].(string)
	v1 := keyETag(t, s, id)
	if r.status != http.StatusOK || v1 == v0 {
		t.Fatalf("rotate: %d %s (ETag %q, before %q)", r.status, r.raw, v1, v0)
	}

	// A stale tag: 412, the key kept and working.
	r = doIfMatch(t, s, "DELETE", "/api/v1/keys/"+id, testKey, v0, "")
	wantError(t, r, http.StatusPreconditionFailed, KindPreconditionFailed, "If-Match")
	if r.header.Get("ETag") != v1 {
		t.Fatalf("412 ETag %q, want the current %q", r.header.Get("ETag"), v1)
	}
	if keyETag(t, s, id) != v1 {
		t.Fatal("a refused delete changed the key")
	}
	if st, b := chatStatus(t, hs.URL, key1, "openai/ok"); st != http.StatusOK {
		t.Fatalf("the key after a refused delete: %d %s", st, b)
	}
	// A weak tag never matches.
	wantError(t, doIfMatch(t, s, "DELETE", "/api/v1/keys/"+id, testKey, "W/"+v1, ""), http.StatusPreconditionFailed, KindPreconditionFailed, "If-Match")

	// The current tag: revoked.
	r = doIfMatch(t, s, "DELETE", "/api/v1/keys/"+id, testKey, v1, "")
	if r.status != http.StatusOK || r.body["deleted"] != true || r.body["id"] != id {
		t.Fatalf("delete If-Match current: %d %s", r.status, r.raw)
	}
	if st, _ := chatStatus(t, hs.URL, key1, "openai/ok"); st != http.StatusUnauthorized {
		t.Fatalf("the revoked key: %d", st)
	}
	if r := do(t, s, "GET", "/api/v1/keys/"+id, testKey, ""); r.status != http.StatusNotFound {
		t.Fatalf("GET the revoked key: %d %s", r.status, r.raw)
	}
	if r := doIfMatch(t, s, "DELETE", "/api/v1/keys/"+id, testKey, "*", ""); r.status != http.StatusNotFound {
		t.Fatalf("delete a revoked key If-Match *: %d %s", r.status, r.raw)
	}

	// Without If-Match: revoked whatever its version, as before.
	id2, key2 := issue("other")
	if r := do(t, s, "DELETE", "/api/v1/keys/"+id2, testKey, ""); r.status != http.StatusOK {
		t.Fatalf("delete without If-Match: %d %s", r.status, r.raw)
	}
	if st, _ := chatStatus(t, hs.URL, key2, "openai/ok"); st != http.StatusUnauthorized {
		t.Fatalf("the key deleted without If-Match: %d", st)
	}

	// The document declares the header and the 412.
	resp, err := http.Get(hs.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct{ Name, In string }
			Responses  map[string]any
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	del := doc.Paths["/api/v1/keys/{key_id}"]["delete"]
	header := false
	for _, p := range del.Parameters {
		header = header || p.Name == "If-Match" && p.In == "header"
	}
	if !header || del.Responses["412"] == nil {
		t.Fatalf("DELETE /api/v1/keys/{key_id} in the document: parameters %+v, responses %v; want If-Match and 412", del.Parameters, del.Responses)
	}
}
