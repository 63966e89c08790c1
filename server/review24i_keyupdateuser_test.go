package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestReview24iKeyMetadataUpdateKeepsItsUser: LiteLLM's /key/update with metadata and no
// user_id (an admin editing a key's labels) keeps the key its user's, as LiteLLM keeps a
// key's user_id column: it still draws on the user's account (a blocked user stops it) and
// /user/info lists it.
func TestReview24iKeyMetadataUpdateKeepsItsUser(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	litellmUserNew(t, s, `{"user_id":"dee","max_budget":0,"auto_create_key":false}`)
	k := litellmGenerate(t, s, `{"user_id":"dee","metadata":{"dept":"eng"}}`)
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+k.Token+`","metadata":{"dept":"ops"}}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if info := litellmUserInfoOf(t, s, "dee"); len(info.Keys) != 1 {
		t.Fatalf("the key left its user on a metadata update: %+v", info.Keys)
	}
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st == http.StatusOK || !strings.Contains(b, "User=dee is blocked") {
		t.Fatalf("a key of blocked user dee after a metadata update: %d %s", st, b)
	}
	// user_id null still takes the key out of its user.
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+k.Token+`","user_id":null,"metadata":{"dept":"ops"}}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if info := litellmUserInfoOf(t, s, "dee"); len(info.Keys) != 0 {
		t.Fatalf("user_id null kept the key the user's: %+v", info.Keys)
	}
}
