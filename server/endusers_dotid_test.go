package server

import (
	"net/http"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// TestEndUserDotIDsRefused: "." and ".." cannot be reached through
// /api/v1/customers/{end_user_id} (a URL path cleans them away), so no route makes them:
// 400 naming user_id on LiteLLM's, 422 naming end_user_id on the native route, and a
// request naming one is refused naming user; nothing is stored.
func TestEndUserDotIDsRefused(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	for _, id := range []string{".", ".."} {
		wantStatusMessage(t, do(t, s, "POST", "/customer/new", testKey, `{"user_id":"`+id+`"}`), http.StatusBadRequest, "user_id: ")
		wantError(t, do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"`+id+`"}`), http.StatusUnprocessableEntity, KindValidation, "end_user_id")
		wantStatusMessage(t, do(t, s, "POST", "/customer/block", testKey, `{"user_ids":["`+id+`"]}`), http.StatusBadRequest, "user_ids[0]")
		st, b := postWith(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}],"user":"`+id+`"}`, nil)
		if st != http.StatusBadRequest {
			t.Fatalf("a request naming %q: %d %s", id, st, b)
		}
	}
	if n := countStored(t, s, store.EndUsers); n != 0 {
		t.Fatalf("%d end users stored", n)
	}
	if r := do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"a.b"}`); r.status != http.StatusCreated {
		t.Fatalf("an id with a dot: %d %s", r.status, r.raw)
	}
}
