package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// doIfMatch is do with an If-Match header (none when ifMatch is "").
func doIfMatch(t *testing.T, h http.Handler, method, path, key, ifMatch, body string) reply {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	out := reply{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	json.Unmarshal(rec.Body.Bytes(), &out.body)
	return out
}

// keyETag is the ETag of GET /api/v1/keys/{id}, which must have one.
func keyETag(t *testing.T, s *Server, id string) string {
	t.Helper()
	r := do(t, s, "GET", "/api/v1/keys/"+id, testKey, "")
	tag := r.header.Get("ETag")
	if r.status != http.StatusOK || len(tag) < 3 || tag[0] != '"' || tag[len(tag)-1] != '"' {
		t.Fatalf("GET key %s: %d ETag %q %s", id, r.status, tag, r.raw)
	}
	return tag
}

// TestKeyETagIfMatch: a virtual key's ETag changes with every rotation and every PATCH that
// changes it, the answers of issue, rotate and PATCH carry the tag GET then shows, and a
// rotate or PATCH with If-Match goes ahead only at that version: a stale tag (or a weak
// one) is a 412 naming If-Match that changes nothing, "*" and the current tag go ahead,
// and without If-Match a rotation goes ahead as before.
func TestKeyETagIfMatch(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	issued := do(t, s, "POST", "/api/v1/keys", testKey, `{"name":"bot"}`)
	id, _ := issued.body["id"].(string)
	key, _ := issued.body["key"].(string)
	v0 := keyETag(t, s, id)
	if issued.header.Get("ETag") != v0 {
		t.Fatalf("issue's ETag %q, GET's %q", issued.header.Get("ETag"), v0)
	}
	if strings.Contains(v0, key) || strings.Contains(issued.raw, v0[1:len(v0)-1]) {
		t.Fatalf("the ETag %q shows the key or a field of the answer", v0)
	}
	if again := keyETag(t, s, id); again != v0 {
		t.Fatalf("ETag changed without a change: %q then %q", v0, again)
	}
	// Use changes the spend, not the version.
	if st, b := chatStatus(t, hs.URL, key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("chat: %d %s", st, b)
	}
	if after := keyETag(t, s, id); after != v0 {
		t.Fatalf("ETag changed with spend: %q then %q", v0, after)
	}

	// Rotation without If-Match: as before, and a new version.
	r := do(t, s, "POST", "/api/v1/keys/"+id+"/rotate", testKey, "")
	if r.status != http.StatusOK {
		t.Fatalf("rotate: %d %s", r.status, r.raw)
	}
	v1 := keyETag(t, s, id)
	if v1 == v0 || r.header.Get("ETag") != v1 {
		t.Fatalf("rotate: ETag %q (answer %q), before %q", v1, r.header.Get("ETag"), v0)
	}
	key1, _ := r.body["key"].(string)

	// A stale tag: 412 naming If-Match, no new key.
	r = doIfMatch(t, s, "POST", "/api/v1/keys/"+id+"/rotate", testKey, v0, "")
	wantError(t, r, http.StatusPreconditionFailed, KindPreconditionFailed, "If-Match")
	if r.header.Get("ETag") != v1 || !strings.Contains(r.raw, v1[1:len(v1)-1]) {
		t.Fatalf("412 without the current ETag: %v %s", r.header, r.raw)
	}
	if keyETag(t, s, id) != v1 {
		t.Fatal("a refused rotation changed the key")
	}
	if st, b := chatStatus(t, hs.URL, key1, "openai/ok"); st != http.StatusOK {
		t.Fatalf("the key after a refused rotation: %d %s", st, b)
	}
	// A weak tag never matches (If-Match compares strongly).
	wantError(t, doIfMatch(t, s, "POST", "/api/v1/keys/"+id+"/rotate", testKey, "W/"+v1, ""), http.StatusPreconditionFailed, KindPreconditionFailed, "If-Match")

	// The current tag, among others: rotated.
	r = doIfMatch(t, s, "POST", "/api/v1/keys/"+id+"/rotate", testKey, v0+", "+v1, "")
	if r.status != http.StatusOK {
		t.Fatalf("rotate If-Match current: %d %s", r.status, r.raw)
	}
	v2 := keyETag(t, s, id)
	if v2 == v1 || v2 == v0 || r.header.Get("ETag") != v2 {
		t.Fatalf("rotate If-Match: ETag %q (answer %q), before %q", v2, r.header.Get("ETag"), v1)
	}
	if st, _ := chatStatus(t, hs.URL, key1, "openai/ok"); st != http.StatusUnauthorized {
		t.Fatalf("the key rotated away: %d", st)
	}
	// "*": any version of a key that exists.
	if r := doIfMatch(t, s, "POST", "/api/v1/keys/"+id+"/rotate", testKey, "*", ""); r.status != http.StatusOK {
		t.Fatalf("rotate If-Match *: %d %s", r.status, r.raw)
	}
	if r := doIfMatch(t, s, "POST", "/api/v1/keys/vk_0000000000000000/rotate", testKey, "*", ""); r.status != http.StatusNotFound {
		t.Fatalf("rotate an unknown key If-Match *: %d %s", r.status, r.raw)
	}
	v3 := keyETag(t, s, id)

	// PATCH: a stale tag changes nothing; the current one changes the key and its tag.
	r = doIfMatch(t, s, "PATCH", "/api/v1/keys/"+id, testKey, v2, `{"name":"renamed"}`)
	wantError(t, r, http.StatusPreconditionFailed, KindPreconditionFailed, "If-Match")
	if info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+id); info.Name != "bot" {
		t.Fatalf("a refused PATCH renamed the key: %+v", info)
	}
	r = doIfMatch(t, s, "PATCH", "/api/v1/keys/"+id, testKey, v3, `{"name":"renamed"}`)
	if r.status != http.StatusOK {
		t.Fatalf("PATCH If-Match current: %d %s", r.status, r.raw)
	}
	v4 := keyETag(t, s, id)
	if v4 == v3 || r.header.Get("ETag") != v4 {
		t.Fatalf("PATCH: ETag %q (answer %q), before %q", v4, r.header.Get("ETag"), v3)
	}
	// Without If-Match, PATCH goes ahead as before.
	if r := do(t, s, "PATCH", "/api/v1/keys/"+id, testKey, `{"max_requests":5}`); r.status != http.StatusOK || keyETag(t, s, id) == v4 {
		t.Fatalf("PATCH without If-Match: %d %s", r.status, r.raw)
	}
}

// TestKeyConcurrentConditionalRotationsOneWins: concurrent rotations of one key, all with
// the ETag they read before any of them wrote, on every store driver: the check of If-Match
// and the rotation are one transaction, so exactly one gets a new key (which works) and
// every other gets 412, where without the check each would rotate the key the one before
// made and all but the last caller would hold a key that no longer works.
func TestKeyConcurrentConditionalRotationsOneWins(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, drv store.Driver) {
		const n = 12
		d := &gatedUpdateDriver{Driver: drv, n: n, open: make(chan struct{})}
		hs, s := keysServer(t, store.New(d), 0)
		vk := issue(t, s, `{"name":"bot"}`)
		tag := keyETag(t, s, vk.ID)
		d.armed.Store(true)
		replies := atOnce(n, func(i int) reply {
			if i%2 == 0 {
				return doIfMatch(t, s, "POST", "/api/v1/keys/"+vk.ID+"/rotate", testKey, tag, "")
			} // LiteLLM's regenerate by the token, with Switchyard's If-Match
			return doIfMatch(t, s, "POST", "/key/"+vk.ID+"/regenerate", testKey, tag, "")
		})
		d.armed.Store(false)
		var won []string
		for i, r := range replies {
			switch r.status {
			case http.StatusOK:
				won = append(won, r.raw)
			case http.StatusPreconditionFailed:
				if !strings.Contains(r.raw, "If-Match") {
					t.Errorf("request %d: 412 not naming If-Match: %s", i, r.raw)
				}
			default:
				t.Errorf("request %d: %d %s, want 200 or 412", i, r.status, r.raw)
			}
		}
		if len(won) != 1 {
			t.Fatalf("%d of %d concurrent rotations with one If-Match succeeded, want exactly 1", len(won), n)
		}
		newKey := extractKey(t, won[0])
		if st, b := chatStatus(t, hs.URL, newKey, "openai/ok"); st != http.StatusOK {
			t.Errorf("the one new key: %d %s", st, b)
		}
		if st, _ := chatStatus(t, hs.URL, vk.Key, "openai/ok"); st != http.StatusUnauthorized {
			t.Errorf("the old key: %d", st)
		}
	})
}

// extractKey is the "key" of a rotation's answer raw.
func extractKey(t *testing.T, raw string) string {
	t.Helper()
	var body struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal([]byte(raw), &body); err != nil || !strings.HasPrefix(body.Key, "sy-vk-") {
		t.Fatalf("no key in %s (%v)", raw, err)
	}
	return body.Key
}

// TestKeyIfMatchDocumented: the OpenAPI document shows If-Match as a header parameter of
// rotate and PATCH, their 412, and the ETag header of GET's answer.
func TestKeyIfMatchDocumented(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct{ Name, In string } `json:"parameters"`
			Responses  map[string]struct {
				Headers map[string]any `json:"headers"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(s.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, op := range []struct{ path, method string }{{"/api/v1/keys/{key_id}/rotate", "post"}, {"/api/v1/keys/{key_id}", "patch"}} {
		o := doc.Paths[op.path][op.method]
		var header bool
		for _, p := range o.Parameters {
			header = header || (p.Name == "If-Match" && p.In == "header")
		}
		if _, ok := o.Responses["412"]; !header || !ok {
			t.Errorf("%s %s: If-Match header parameter %v, 412 documented %v", op.method, op.path, header, ok)
		}
		if o.Responses["200"].Headers["ETag"] == nil {
			t.Errorf("%s %s: no ETag header on 200", op.method, op.path)
		}
	}
	if doc.Paths["/api/v1/keys/{key_id}"]["get"].Responses["200"].Headers["ETag"] == nil {
		t.Error("GET /api/v1/keys/{key_id}: no ETag header on 200")
	}
}

// TestLiteLLMRegenerateAnswersETag: LiteLLM's /key/regenerate answers the regenerated key's
// ETag (the one GET then shows), so a caller can chain a next conditional request without
// reading the key again; the old tag no longer matches.
func TestLiteLLMRegenerateAnswersETag(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	issued := do(t, s, "POST", "/api/v1/keys", testKey, `{"name":"bot"}`)
	id, _ := issued.body["id"].(string)
	v0 := keyETag(t, s, id)
	for i, path := range []string{"/key/regenerate", "/key/" + id + "/regenerate"} {
		body := `{"key":"` + id + `"}`
		if i == 1 {
			body = `{}`
		}
		r := doIfMatch(t, s, "POST", path, testKey, v0, body)
		v1 := r.header.Get("ETag")
		if r.status != http.StatusOK || v1 == "" || v1 == v0 || v1 != keyETag(t, s, id) {
			t.Fatalf("%s: %d ETag %q (before %q, GET %q) %s", path, r.status, v1, v0, keyETag(t, s, id), r.raw)
		}
		if r := doIfMatch(t, s, "POST", path, testKey, v0, body); r.status != http.StatusPreconditionFailed {
			t.Fatalf("%s with the old tag: %d %s", path, r.status, r.raw)
		}
		v0 = v1
	}
}
