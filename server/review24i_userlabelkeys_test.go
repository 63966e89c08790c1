package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// TestReview24iUserBoundsKeysOfAnEarlierBuild: a key made with a user_id by a build before
// users (its shared-key record does not name the user) draws on the user's account once
// /user/new (or /team/member_add) makes that user, as /user/info lists it as the user's:
// a user blocked by max_budget 0 stops it.
func TestReview24iUserBoundsKeysOfAnEarlierBuild(t *testing.T) {
	for _, how := range []string{"user_new", "member_add"} {
		t.Run(how, func(t *testing.T) {
			hs, s := keysServer(t, nil, 0)
			ctx, st := t.Context(), s.cfg.Store
			old := litellmGenerate(t, s, `{"user_id":"ann"}`)
			// The records an earlier build wrote: the scope document without user_id.
			var owner string
			es, err := st.List(ctx, store.VirtualKeys, store.ListOptions{})
			if err != nil || len(es) != 1 {
				t.Fatal(len(es), err)
			}
			var vk storedVirtualKey
			if err := json.Unmarshal(es[0].Value, &vk); err != nil {
				t.Fatal(err)
			}
			owner = vk.Owner
			sk, err := store.GetJSON[storedScopedKey](ctx, st, store.ScopedKeys, vk.Hash)
			if err != nil {
				t.Fatal(err)
			}
			var doc keyScopeDoc
			if err := json.Unmarshal(sk.Scope, &doc); err != nil || doc.UserID != "ann" {
				t.Fatalf("scope document %s: %v", sk.Scope, err)
			}
			doc.UserID = ""
			sk.Scope, _ = json.Marshal(doc)
			if err := store.PutJSON(ctx, st, store.ScopedKeys, vk.Hash, sk); err != nil {
				t.Fatal(err)
			}
			switch how {
			case "user_new":
				litellmUserNew(t, s, `{"user_id":"ann","max_budget":0,"auto_create_key":false}`)
			case "member_add":
				litellmTeamNew(t, s, `{"team_id":"eng"}`)
				if r := do(t, s, "POST", "/team/member_add", testKey, `{"team_id":"eng","member":{"user_id":"ann","role":"user"}}`); r.status != http.StatusOK {
					t.Fatal(r.status, r.raw)
				}
				if r := do(t, s, "POST", "/user/update", testKey, `{"user_id":"ann","max_budget":0}`); r.status != http.StatusOK {
					t.Fatal(r.status, r.raw)
				}
			}
			if info := litellmUserInfoOf(t, s, "ann"); len(info.Keys) != 1 {
				t.Fatalf("/user/info keys: %+v", info.Keys)
			}
			if st, b := chatStatus(t, hs.URL, old.Key, "openai/ok"); st == http.StatusOK || !strings.Contains(b, "User=ann is blocked") {
				t.Fatalf("a key of blocked user ann (owner %s): %d %s", owner, st, b)
			}
		})
	}
}
