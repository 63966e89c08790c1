package server

import (
	"net/http"
	"testing"
)

// TestNativeKeyPatchKeepsLabelUser: a key whose user_id is a label no user has (made by
// LiteLLM's /key/generate, or by a build before users) accepts a PATCH sending that
// user_id back unchanged, as a client writing back what GET answered does; a user_id
// changed to another id no user has is still a 404 naming user_id.
func TestNativeKeyPatchKeepsLabelUser(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	g := litellmGenerate(t, s, `{"user_id":"ghost"}`)
	var got virtualKey
	nativeUserDo(t, s, "GET", "/api/v1/keys/"+g.Token, "", http.StatusOK, &got)
	if got.UserID != "ghost" {
		t.Fatalf("the key's label user: %+v", got)
	}
	var vk virtualKey
	nativeUserDo(t, s, "PATCH", "/api/v1/keys/"+g.Token, `{"name":"renamed","user_id":"ghost"}`, http.StatusOK, &vk)
	if vk.Name != "renamed" || vk.UserID != "ghost" || vk.Metadata["user_id"] != "ghost" {
		t.Fatalf("PATCH with the key's own user_id: %+v", vk)
	}
	wantFieldError(t, do(t, s, "PATCH", "/api/v1/keys/"+g.Token, testKey, `{"user_id":"phantom"}`), http.StatusNotFound, "user_id")
	var after virtualKey
	nativeUserDo(t, s, "GET", "/api/v1/keys/"+g.Token, "", http.StatusOK, &after)
	if after.UserID != "ghost" {
		t.Fatalf("after a refused change: %+v", after)
	}
}
