package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// doIfMatchSent is do with an If-Match header sent with value ifMatch, even an empty one
// (doIfMatch sends none for "").
func doIfMatchSent(t *testing.T, h http.Handler, method, path, ifMatch, body string) reply {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header["If-Match"] = []string{ifMatch}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	out := reply{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	json.Unmarshal(rec.Body.Bytes(), &out.body)
	return out
}

// wantPreconditionFailed fails unless r is a 412 naming If-Match with the key's current
// ETag current in its header.
func wantPreconditionFailed(t *testing.T, what string, r reply, current string) {
	t.Helper()
	if r.status != http.StatusPreconditionFailed || !strings.Contains(r.raw, "If-Match") || r.header.Get("ETag") != current {
		t.Fatalf("%s: %d ETag %q %s, want 412 naming If-Match with ETag %q", what, r.status, r.header.Get("ETag"), r.raw, current)
	}
}

// TestLiteLLMKeyRoutesIfMatch: LiteLLM's /key/update, /key/block, /key/unblock and
// /key/delete honour If-Match as the native key routes do: a stale tag, and an If-Match
// sent empty (a list of no entity tag), are a 412 naming If-Match with the current ETag
// that changes nothing; the current tag goes ahead and the answer carries the new ETag;
// without If-Match they go ahead as before. /key/delete with several keys deletes them
// only if each is at a tag listed, else none.
func TestLiteLLMKeyRoutesIfMatch(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	g := litellmGenerate(t, s, `{"key_alias":"bot","max_budget":25}`)
	v0 := keyETag(t, s, g.Token)
	if r := do(t, s, "PATCH", "/api/v1/keys/"+g.Token, testKey, `{"max_budget_usd":26}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	v1 := keyETag(t, s, g.Token)
	ref := `{"key":"` + g.Token + `"}`
	for _, c := range []struct{ path, body string }{
		{"/key/update", `{"key":"` + g.Token + `","max_budget":30}`},
		{"/key/block", ref},
		{"/key/unblock", ref},
		{"/key/delete", `{"keys":["` + g.Token + `"]}`},
	} {
		wantPreconditionFailed(t, c.path+" with a stale If-Match", doIfMatch(t, s, "POST", c.path, testKey, v0, c.body), v1)
		wantPreconditionFailed(t, c.path+" with an empty If-Match", doIfMatchSent(t, s, "POST", c.path, "", c.body), v1)
		wantPreconditionFailed(t, c.path+" with a weak If-Match", doIfMatch(t, s, "POST", c.path, testKey, "W/"+v1, c.body), v1)
		if now := keyETag(t, s, g.Token); now != v1 {
			t.Fatalf("%s refused changed the key: ETag %q, was %q", c.path, now, v1)
		}
	}
	if st, b := chatStatus(t, hs.URL, g.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("the key after refused conditional requests: %d %s", st, b)
	}
	// The current tag: each goes ahead, answering the new tag for the next one.
	tag := v1
	for _, c := range []struct{ path, body string }{
		{"/key/update", `{"key":"` + g.Token + `","max_budget":30}`},
		{"/key/block", ref},
		{"/key/unblock", ref},
	} {
		r := doIfMatch(t, s, "POST", c.path, testKey, tag, c.body)
		if r.status != http.StatusOK {
			t.Fatalf("%s with the current If-Match: %d %s", c.path, r.status, r.raw)
		}
		if now := keyETag(t, s, g.Token); now == tag || r.header.Get("ETag") != now {
			t.Fatalf("%s: answered ETag %q, GET's %q, before %q", c.path, r.header.Get("ETag"), now, tag)
		}
		tag = r.header.Get("ETag")
	}
	if info := keyInfoViaLiteLLM(t, s, testKey, g.Token); info.MaxBudget == nil || *info.MaxBudget != 30 {
		t.Fatalf("after the conditional update, block and unblock: %+v", info)
	}
	if st, b := chatStatus(t, hs.URL, g.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("the key after the conditional block and unblock: %d %s", st, b)
	}
	// /key/delete of two keys: one at a listed tag, one not: none deleted; both: deleted.
	h := litellmGenerate(t, s, `{"key_alias":"other"}`)
	both := `{"keys":["` + g.Token + `","` + h.Token + `"]}`
	hTag := keyETag(t, s, h.Token)
	wantPreconditionFailed(t, "/key/delete with one key's tag of two", doIfMatch(t, s, "POST", "/key/delete", testKey, tag, both), hTag)
	if keyETag(t, s, g.Token) != tag {
		t.Fatal("a refused /key/delete of two keys deleted or changed the first")
	}
	if r := doIfMatch(t, s, "POST", "/key/delete", testKey, tag+", "+hTag, both); r.status != http.StatusOK {
		t.Fatalf("/key/delete with both keys' tags: %d %s", r.status, r.raw)
	}
	for _, id := range []string{g.Token, h.Token} {
		if r := do(t, s, "GET", "/api/v1/keys/"+id, testKey, ""); r.status != http.StatusNotFound {
			t.Fatalf("key %s after the conditional delete: %d %s", id, r.status, r.raw)
		}
	}
	// Without If-Match: unconditional, as before.
	k := litellmGenerate(t, s, `{}`)
	for _, path := range []string{"/key/block", "/key/unblock"} {
		if r := do(t, s, "POST", path, testKey, `{"key":"`+k.Token+`"}`); r.status != http.StatusOK {
			t.Fatalf("%s without If-Match: %d %s", path, r.status, r.raw)
		}
	}
}

// TestEmptyIfMatchRefusedOnNativeKeyRoutes: an If-Match sent empty names no entity tag
// (RFC 9110's #entity-tag list of none), which no version matches: the native PATCH,
// rotate and DELETE and LiteLLM's regenerate answer 412 and change nothing, where they
// used to read it as no If-Match and go ahead.
func TestEmptyIfMatchRefusedOnNativeKeyRoutes(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	vk := issue(t, s, `{"name":"bot"}`)
	tag := keyETag(t, s, vk.ID)
	for _, c := range []struct{ method, path, body string }{
		{"PATCH", "/api/v1/keys/" + vk.ID, `{"max_budget_usd":3}`},
		{"POST", "/api/v1/keys/" + vk.ID + "/rotate", ""},
		{"DELETE", "/api/v1/keys/" + vk.ID, ""},
		{"POST", "/key/" + vk.ID + "/regenerate", ""},
		{"POST", "/key/regenerate", `{"key":"` + vk.ID + `"}`},
	} {
		for _, empty := range []string{"", " , "} {
			what := fmt.Sprintf("%s %s with If-Match %q", c.method, c.path, empty)
			wantPreconditionFailed(t, what, doIfMatchSent(t, s, c.method, c.path, empty, c.body), tag)
		}
	}
	if keyETag(t, s, vk.ID) != tag {
		t.Fatal("a request with an empty If-Match changed the key")
	}
	if st, b := chatStatus(t, hs.URL, vk.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("the key after refused requests: %d %s", st, b)
	}
}

// TestLiteLLMConcurrentConditionalUpdatesOneWins: concurrent /key/update and /key/block
// requests giving the ETag they read before any of them wrote: the check of If-Match and
// the change are one transaction, so exactly one goes ahead and every other gets 412.
func TestLiteLLMConcurrentConditionalUpdatesOneWins(t *testing.T) {
	const n = 8
	d := &gatedUpdateDriver{Driver: newTestDriver(t), n: n, open: make(chan struct{})}
	_, s := keysServer(t, store.New(d), 0)
	g := litellmGenerate(t, s, `{"max_budget":1}`)
	tag := keyETag(t, s, g.Token)
	d.armed.Store(true)
	replies := atOnce(n, func(i int) reply {
		if i == 0 {
			return doIfMatch(t, s, "POST", "/key/block", testKey, tag, `{"key":"`+g.Token+`"}`)
		}
		return doIfMatch(t, s, "POST", "/key/update", testKey, tag, fmt.Sprintf(`{"key":"%s","max_budget":%d}`, g.Token, i+1))
	})
	d.armed.Store(false)
	won := 0
	for i, r := range replies {
		switch r.status {
		case http.StatusOK:
			won++
		case http.StatusPreconditionFailed:
		default:
			t.Errorf("request %d: %d %s, want 200 or 412", i, r.status, r.raw)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d concurrent conditional changes with one If-Match went ahead, want exactly 1", won, n)
	}
}

// TestLiteLLMKeyIfMatchDocumented: the OpenAPI document shows If-Match as a header
// parameter and the 412 of /key/update, /key/block, /key/unblock and /key/delete.
func TestLiteLLMKeyIfMatchDocumented(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct{ Name, In string } `json:"parameters"`
			Responses  map[string]json.RawMessage  `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(s.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/key/update", "/key/block", "/key/unblock", "/key/delete"} {
		o := doc.Paths[path]["post"]
		var header bool
		for _, p := range o.Parameters {
			header = header || (p.Name == "If-Match" && p.In == "header")
		}
		if _, ok := o.Responses["412"]; !header || !ok {
			t.Errorf("POST %s: If-Match header parameter %v, 412 documented %v", path, header, ok)
		}
	}
}
