package server

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// TestCustomerUnblock: /customer/unblock answers LiteLLM's {"blocked_users": [...]} (the
// ids of this key's end users still blocked); an id that is no end user of the key is a
// 404 naming user_ids that unblocks none and makes nothing.
func TestCustomerUnblock(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	if r := do(t, s, "POST", "/customer/block", testKey, `{"user_ids":["amy","ben"]}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	before := countStored(t, s, store.EndUsers)
	r := do(t, s, "POST", "/customer/unblock", testKey, `{"user_ids":["amy","ghost"]}`)
	wantStatusMessage(t, r, http.StatusNotFound, "End User Id(s)=ghost do not exist in db")
	if n := countStored(t, s, store.EndUsers); n != before || !customerInfo(t, s, "amy").Blocked {
		t.Fatalf("a refused unblock made %d end users or unblocked amy", n-before)
	}
	r = do(t, s, "POST", "/end_user/unblock", testKey, `{"user_ids":["amy"]}`)
	var out struct {
		BlockedUsers []string `json:"blocked_users"`
	}
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &out) != nil || len(out.BlockedUsers) != 1 || out.BlockedUsers[0] != "ben" {
		t.Fatalf("/end_user/unblock: %d %s", r.status, r.raw)
	}
	if customerInfo(t, s, "amy").Blocked || !customerInfo(t, s, "ben").Blocked {
		t.Fatal("amy still blocked or ben unblocked")
	}
}
