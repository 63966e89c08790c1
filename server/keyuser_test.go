package server

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestNativeKeyUserID: POST /api/v1/keys with user_id links the key to that user (kept as
// metadata.user_id, the one record of it /key/generate writes too), answers it as
// user_id and lists the key under the user; a user_id naming no user is a 404 and a
// malformed one a 422, each naming user_id; one beside a different metadata.user_id is a
// 422. PATCH user_id moves the key to another user, "" or null unlinks it; a metadata
// replaced without user_id keeps the key its user's.
func TestNativeKeyUserID(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	nativeUserDo(t, s, "POST", "/api/v1/users", `{"user_id":"ann"}`, http.StatusCreated, nil)
	nativeUserDo(t, s, "POST", "/api/v1/users", `{"user_id":"bob"}`, http.StatusCreated, nil)
	keysOf := func(user string) []string {
		t.Helper()
		var u nativeUser
		nativeUserDo(t, s, "GET", "/api/v1/users/"+user, "", http.StatusOK, &u)
		return u.KeyIDs
	}

	key := func(method, path, body string) virtualKey { // a fresh value each time: a decoded map merges into one reused
		t.Helper()
		want := http.StatusOK
		if method == "POST" {
			want = http.StatusCreated
		}
		var vk virtualKey
		nativeUserDo(t, s, method, path, body, want, &vk)
		return vk
	}
	vk := key("POST", "/api/v1/keys", `{"name":"a","user_id":"ann","metadata":{"dept":"eng"}}`)
	if vk.UserID != "ann" || vk.Metadata["user_id"] != "ann" || vk.Metadata["dept"] != "eng" {
		t.Fatalf("issued: %+v", vk)
	}
	if got := keysOf("ann"); !slices.Equal(got, []string{vk.ID}) {
		t.Fatalf("ann's keys: %v", got)
	}
	if read := key("GET", "/api/v1/keys/"+vk.ID, ""); read.UserID != "ann" {
		t.Fatalf("GET: %+v", read)
	}

	wantFieldError(t, do(t, s, "POST", "/api/v1/keys", testKey, `{"user_id":"nobody"}`), http.StatusNotFound, "user_id")
	wantFieldError(t, do(t, s, "POST", "/api/v1/keys", testKey, `{"user_id":"a b"}`), http.StatusUnprocessableEntity, "user_id")
	wantFieldError(t, do(t, s, "POST", "/api/v1/keys", testKey, `{"user_id":"ann","metadata":{"user_id":"bob"}}`), http.StatusUnprocessableEntity, "user_id")
	wantFieldError(t, do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, `{"user_id":"nobody"}`), http.StatusNotFound, "user_id")
	if got := keysOf("ann"); !slices.Equal(got, []string{vk.ID}) {
		t.Fatalf("a refused PATCH changed the key's user: %v", got)
	}

	read := key("PATCH", "/api/v1/keys/"+vk.ID, `{"metadata":{"dept":"ops"}}`)
	if read.UserID != "ann" || read.Metadata["dept"] != "ops" || read.Metadata["user_id"] != "ann" {
		t.Fatalf("a metadata PATCH without user_id: %+v", read)
	}
	read = key("PATCH", "/api/v1/keys/"+vk.ID, `{"user_id":"bob"}`)
	if read.UserID != "bob" || read.Metadata["user_id"] != "bob" || read.Metadata["dept"] != "ops" {
		t.Fatalf("PATCH user_id: %+v", read)
	}
	if a, b := keysOf("ann"), keysOf("bob"); len(a) != 0 || !slices.Equal(b, []string{vk.ID}) {
		t.Fatalf("after the move: ann %v, bob %v", a, b)
	}
	read = key("PATCH", "/api/v1/keys/"+vk.ID, `{"user_id":null}`)
	if read.UserID != "" || read.Metadata["user_id"] != nil || read.Metadata["dept"] != "ops" {
		t.Fatalf("PATCH user_id null: %+v", read)
	}
	nativeUserDo(t, s, "PATCH", "/api/v1/keys/"+vk.ID, `{"user_id":"ann"}`, http.StatusOK, nil)
	read = key("PATCH", "/api/v1/keys/"+vk.ID, `{"user_id":""}`)
	if read.UserID != "" || len(keysOf("ann")) != 0 {
		t.Fatalf(`PATCH user_id "": %+v`, read)
	}
	doc := loadOpenAPI(t, s)
	for _, op := range []struct{ method, template string }{{"POST", "/api/v1/keys"}, {"PATCH", "/api/v1/keys/{key_id}"}} {
		resp := doc.Paths.Find(op.template).GetOperation(op.method).Responses.Value("404")
		if resp == nil || resp.Value == nil || resp.Value.Description == nil || !strings.Contains(*resp.Value.Description, "user_id") {
			t.Errorf("%s %s: the document lists no 404 for a user_id naming no user", op.method, op.template)
		}
		body := doc.Paths.Find(op.template).GetOperation(op.method).RequestBody.Value.Content.Get("application/json").Schema.Value
		if body == nil || body.Properties["user_id"] == nil {
			t.Errorf("%s %s: the request schema has no user_id", op.method, op.template)
		}
	}
	if answer := doc.Paths.Find("/api/v1/keys").GetOperation("POST").Responses.Value("201").Value.Content.Get("application/json").Schema.Value; answer == nil || answer.Properties["user_id"] == nil {
		t.Error("POST /api/v1/keys: the answer's schema has no user_id")
	}
	// A key of LiteLLM's /key/generate user_id answers it natively too.
	g := litellmGenerate(t, s, `{"user_id":"bob"}`)
	if read = key("GET", "/api/v1/keys/"+g.Token, ""); read.UserID != "bob" {
		t.Fatalf("a /key/generate key of bob: %+v", read)
	}
}
