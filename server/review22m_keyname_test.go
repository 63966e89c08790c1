package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// keyNameOf is key_name in r's info object (GET /key/info) and whether it was there.
func keyNameOf(t *testing.T, s *Server, ref string) (any, bool) {
	t.Helper()
	r := do(t, s, "GET", "/key/info?key="+url.QueryEscape(ref), testKey, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET /key/info: %d %s", r.status, r.raw)
	}
	info, _ := r.body["info"].(map[string]any)
	v, ok := info["key_name"]
	return v, ok
}

// listedKeyName is key_name of token in /key/list?return_full_object=true.
func listedKeyName(t *testing.T, s *Server, token string) (any, bool) {
	t.Helper()
	r := do(t, s, "GET", "/key/list?return_full_object=true&size=100", testKey, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET /key/list: %d %s", r.status, r.raw)
	}
	keys, _ := r.body["keys"].([]any)
	for _, k := range keys {
		if o, _ := k.(map[string]any); o["token"] == token {
			v, ok := o["key_name"]
			return v, ok
		}
	}
	t.Fatalf("/key/list has no %s: %s", token, r.raw)
	return nil, false
}

// TestReview22mKeyInfoKeyName: /key/generate and regenerate answered key_name (the key's
// short form, LiteLLM's "sk-...abcd") but /key/info and /key/list's full objects had none;
// the name is now recorded with a key made or regenerated (the key itself is not kept) and
// answered by both, kept by updates, renewed by each rotation, and null for a key stored
// by an earlier build (never made from its hash).
func TestReview22mKeyInfoKeyName(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	g := litellmGenerate(t, s, `{"key_alias":"bot"}`)
	want := abbreviateKey(g.Key)
	if g.KeyName != want {
		t.Fatalf("/key/generate key_name %q, want %q", g.KeyName, want)
	}
	if v, _ := keyNameOf(t, s, g.Token); v != want {
		t.Errorf("/key/info key_name %v, want %q", v, want)
	}
	if v, _ := listedKeyName(t, s, g.Token); v != want {
		t.Errorf("/key/list key_name %v, want %q", v, want)
	}
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","max_budget":5}`); r.status != http.StatusOK || r.body["key_name"] != want {
		t.Errorf("/key/update: %d %s", r.status, r.raw)
	}
	if v, _ := keyNameOf(t, s, g.Token); v != want {
		t.Errorf("/key/info key_name after an update %v, want %q", v, want)
	}

	// Each way of giving the key a new key records the new one's name.
	for _, req := range []struct{ path, body string }{
		{"/key/" + g.Token + "/regenerate", `{}`},
		{"/key/" + g.Token + "/regenerate", `{"max_budget":6}`},
		{"/key/regenerate", `{"key":"` + g.Token + `","rpm_limit":3}`},
		{"/api/v1/keys/" + g.Token + "/rotate", ``},
	} {
		r := do(t, s, "POST", req.path, testKey, req.body)
		key, _ := r.body["key"].(string)
		if r.status != http.StatusOK && r.status != http.StatusCreated || key == "" {
			t.Fatalf("POST %s: %d %s", req.path, r.status, r.raw)
		}
		want = abbreviateKey(key)
		if v, ok := r.body["key_name"]; ok && v != want {
			t.Errorf("POST %s answered key_name %v, want %q", req.path, v, want)
		}
		if v, _ := keyNameOf(t, s, g.Token); v != want {
			t.Errorf("/key/info key_name after POST %s: %v, want %q", req.path, v, want)
		}
		if v, _ := listedKeyName(t, s, g.Token); v != want {
			t.Errorf("/key/list key_name after POST %s: %v, want %q", req.path, v, want)
		}
	}

	// A key stored by an earlier build has no name recorded: null, before and after an update.
	old := litellmGenerate(t, s, `{"key_alias":"old"}`)
	ctx := context.Background()
	recKey := "key_" + hashPrefix(testKey) + "/" + old.Token
	raw, err := s.cfg.Store.Get(ctx, store.VirtualKeys, recKey)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	if _, ok := fields["key_name"]; !ok {
		t.Fatalf("the key's record has no key_name: %s", raw)
	}
	delete(fields, "key_name")
	raw, _ = json.Marshal(fields)
	if err := s.cfg.Store.Put(ctx, store.VirtualKeys, recKey, raw); err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{"as stored", "after an update"} {
		if v, ok := keyNameOf(t, s, old.Token); !ok || v != nil {
			t.Errorf("/key/info key_name of an earlier build's key %s: %v (present %v), want null", when, v, ok)
		}
		if v, ok := listedKeyName(t, s, old.Token); !ok || v != nil {
			t.Errorf("/key/list key_name of an earlier build's key %s: %v (present %v), want null", when, v, ok)
		}
		if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+old.Token+`","max_budget":5}`); r.status != http.StatusOK {
			t.Fatalf("/key/update: %d %s", r.status, r.raw)
		}
	}
}
