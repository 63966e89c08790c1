package server

import (
	"net/http"
	"testing"
)

// TestReview24iFailedUserNewKeepsKeysOfItsID: keys made with a user_id before any user had
// it (a label, as before users existed) are not revoked when /user/new for that id fails
// making its own key (a key_alias taken): taking the new user back out takes only the user.
func TestReview24iFailedUserNewKeepsKeysOfItsID(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	old := litellmGenerate(t, s, `{"user_id":"ann","key_alias":"ann-key"}`)
	r := do(t, s, "POST", "/user/new", testKey, `{"user_id":"ann","key_alias":"ann-key"}`)
	if r.status == http.StatusOK {
		t.Fatalf("/user/new with a key_alias taken: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "GET", "/user/info?user_id=ann", testKey, ""); r.status != http.StatusNotFound {
		t.Fatalf("the failed /user/new left its user: %d %s", r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, old.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("the key made for user_id ann before /user/new failed: %d %s", st, b)
	}
}
