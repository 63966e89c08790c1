package server

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// TestKeyTags: LiteLLM's key-level tags. /key/generate's tags (kept as metadata.tags) are
// added to every request of the key: its spend log rows carry them beside the request's
// own, and a tag budget (POST /tag/new) bounds the key's requests that name no tag;
// /key/update tags null removes them; bad tags are refused naming metadata.tags or tags;
// the key's and the request's tags together are held to the 16-tag bound.
func TestKeyTags(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	k := litellmGenerate(t, s, `{"tags":["team:search","env:prod"],"metadata":{"owner":"ann"}}`)
	if r := do(t, s, "GET", "/key/info?key="+k.Token, testKey, ""); r.status != http.StatusOK || !strings.Contains(r.raw, `"tags":["team:search","env:prod"]`) || !strings.Contains(r.raw, `"owner":"ann"`) {
		t.Fatalf("the key's metadata: %d %s", r.status, r.raw)
	}
	if st, b := tagChat(t, hs.URL, k.Key, `"feature:summary"`, ""); st != http.StatusOK {
		t.Fatal(st, b)
	}
	rows := spendLogs(t, s, testKey, "api_key="+k.Token)
	if len(rows) != 1 || !slices.Equal(rows[0].RequestTags, []string{"feature:summary", "team:search", "env:prod"}) {
		t.Fatalf("the request's tags: %+v", rows)
	}

	// A tag budget bounds the key's requests though they name no tag.
	if r := do(t, s, "POST", "/tag/new", testKey, `{"name":"team:search","max_budget":0.02}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	for range 2 { // 0.013 + 0.013: the tag had 0 when made (its account starts then)
		if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
			t.Fatalf("a request of the tagged key: %d %s", st, b)
		}
	}
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusTooManyRequests || !strings.Contains(b, "Tag=team:search") {
		t.Fatalf("a request of the tagged key past the tag's budget: %d %s", st, b)
	}
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+k.Token+`","tags":null}`); r.status != http.StatusOK || strings.Contains(r.raw, "team:search") || !strings.Contains(r.raw, `"owner":"ann"`) {
		t.Fatalf("/key/update tags null: %d %s", r.status, r.raw)
	}
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("the key without its tags: %d %s", st, b)
	}

	// Bad tags, on each surface.
	wantParam(t, do(t, s, "POST", "/key/generate", testKey, `{"tags":"team:search"}`), http.StatusBadRequest, "tags", "list of tags")
	if r := do(t, s, "POST", "/key/generate", testKey, `{"tags":["has space"]}`); r.status == http.StatusOK || !strings.Contains(r.raw, "metadata.tags") {
		t.Fatalf("a bad key tag: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/api/v1/keys", testKey, `{"metadata":{"tags":["batch:x"]}}`); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.raw, "metadata.tags") {
		t.Fatalf("a batch's tag on a key: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "PATCH", "/api/v1/keys/"+k.Token, testKey, `{"metadata":{"tags":"x"}}`); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.raw, "metadata.tags") {
		t.Fatalf("PATCH a key's tags to a string: %d %s", r.status, r.raw)
	}
	many := make([]string, 10)
	for i := range many {
		many[i] = `"k` + string(rune('a'+i)) + `"`
	}
	k2 := litellmGenerate(t, s, `{"tags":[`+strings.Join(many, ",")+`]}`)
	if st, b := tagChat(t, hs.URL, k2.Key, strings.ReplaceAll(strings.Join(many, ","), `"k`, `"r`), ""); st != http.StatusBadRequest || !strings.Contains(b, "the key's, the header's and the body's together") {
		t.Fatalf("20 tags with the key's: %d %s", st, b)
	}
}

// TestNativeKeyTags: the native keys API's tags field — kept as metadata.tags and answered
// apart; on PATCH it replaces the tags alone (the other labels kept), null removes them;
// beside a metadata.tags of other tags, or bad, it is a 422 naming tags; the key's requests
// carry them.
func TestNativeKeyTags(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	r := do(t, s, "POST", "/api/v1/keys", testKey, `{"name":"tagged","tags":["team:search"],"metadata":{"owner":"ann"}}`)
	if r.status != http.StatusCreated || !strings.Contains(r.raw, `"tags":["team:search"]`) || !strings.Contains(r.raw, `"metadata":{"owner":"ann","tags":["team:search"]}`) {
		t.Fatalf("POST /api/v1/keys with tags: %d %s", r.status, r.raw)
	}
	id, key := r.body["id"].(string), r.body["key"].(string)
	if st, b := tagChat(t, hs.URL, key, `"feature:a"`, ""); st != http.StatusOK {
		t.Fatal(st, b)
	}
	if rows := spendLogs(t, s, testKey, ""); len(rows) != 1 || !slices.Equal(rows[0].RequestTags, []string{"feature:a", "team:search"}) {
		t.Fatalf("the request's tags: %+v", rows)
	}
	if r := do(t, s, "PATCH", "/api/v1/keys/"+id, testKey, `{"tags":["env:prod","env:prod"]}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"tags":["env:prod"]`) || !strings.Contains(r.raw, `"owner":"ann"`) || strings.Contains(r.raw, "team:search") {
		t.Fatalf("PATCH tags: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "GET", "/api/v1/keys/"+id, testKey, ""); r.status != http.StatusOK || !strings.Contains(r.raw, `"tags":["env:prod"]`) {
		t.Fatalf("GET after PATCH tags: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "PATCH", "/api/v1/keys/"+id, testKey, `{"tags":null}`); r.status != http.StatusOK || strings.Contains(r.raw, `"tags"`) || !strings.Contains(r.raw, `"owner":"ann"`) {
		t.Fatalf("PATCH tags null: %d %s", r.status, r.raw)
	}
	refused := func(r reply, msg string) {
		t.Helper()
		if got, _ := r.body["message"].(string); r.status != http.StatusUnprocessableEntity || !strings.HasPrefix(got, "tags") || !strings.Contains(got, msg) {
			t.Errorf("got %d %s, want 422 naming tags with %q", r.status, r.raw, msg)
		}
	}
	// Beside a metadata.tags of other tags the tags win, as on LiteLLM's /key/generate (and
	// a team's); the other labels stay.
	if r := do(t, s, "POST", "/api/v1/keys", testKey, `{"tags":["a"],"metadata":{"tags":["b"],"owner":"bo"}}`); r.status != http.StatusCreated ||
		!strings.Contains(r.raw, `"tags":["a"]`) || strings.Contains(r.raw, `"b"`) || !strings.Contains(r.raw, `"owner":"bo"`) {
		t.Errorf("tags beside other metadata.tags: %d %s, want the tags to win", r.status, r.raw)
	}
	refused(do(t, s, "PATCH", "/api/v1/keys/"+id, testKey, `{"tags":["has space"]}`), "has space")
	refused(do(t, s, "POST", "/api/v1/keys", testKey, `{"tags":["batch:x"]}`), "batches' own")
	if r := do(t, s, "GET", "/api/v1/keys/"+id, testKey, ""); strings.Contains(r.raw, "has space") {
		t.Errorf("a refused PATCH changed the key: %s", r.raw)
	}
	if r := do(t, s, "POST", "/api/v1/keys", testKey, `{"tags":["a"],"metadata":{"tags":["a"]}}`); r.status != http.StatusCreated {
		t.Fatalf("tags beside the same metadata.tags: %d %s", r.status, r.raw)
	}
}

// TestRejectClientTags: with Config.RejectClientTags (LiteLLM's
// general_settings.reject_clientside_metadata_tags) a request naming tags of its own — in
// metadata.tags, the body's tags or the x-litellm-tags header — is a 400 in LiteLLM's words
// naming metadata.tags, while its key's tags still apply.
func TestRejectClientTags(t *testing.T) {
	hs, s := keysServerWith(t, nil, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey}, RejectClientTags: true})
	k := litellmGenerate(t, s, `{"tags":["team:search"]}`)
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("a request without tags of its own: %d %s", st, b)
	}
	if rows := spendLogs(t, s, testKey, "api_key="+k.Token); len(rows) != 1 || !slices.Equal(rows[0].RequestTags, []string{"team:search"}) {
		t.Fatalf("the key's tags: %+v", rows)
	}
	for _, c := range []struct{ body, header string }{{`"feature:x"`, ""}, {"", "feature:x"}} {
		st, b := tagChat(t, hs.URL, k.Key, c.body, c.header)
		if st != http.StatusBadRequest || !strings.Contains(b, "Client-side 'metadata.tags' not allowed in request. 'reject_clientside_metadata_tags'=True.") || !strings.Contains(b, `"param":"metadata.tags"`) {
			t.Fatalf("client-side tags %q %q: %d %s", c.body, c.header, st, b)
		}
	}
}

// TestKeyTagsOfAnEarlierBuildsKey: a key whose scope document an earlier build wrote (no
// tags in it) has its metadata.tags label applied all the same, read from its record.
func TestKeyTagsOfAnEarlierBuildsKey(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	ctx := context.Background()
	st := s.cfg.Store
	asEarlierBuild := func(id string) {
		t.Helper()
		var rec storedVirtualKey
		es, err := st.List(ctx, store.VirtualKeys, store.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if r, err := readKeyRecord(e.Value); err == nil && r.ID == id {
				rec = r
			}
		}
		sk, err := store.GetJSON[storedScopedKey](ctx, st, store.ScopedKeys, rec.Hash)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(sk.Scope, &doc); err != nil {
			t.Fatal(err)
		}
		delete(doc, "tags")
		delete(doc, "tags_read")
		sk.Scope, _ = json.Marshal(doc)
		if err := store.PutJSON(ctx, st, store.ScopedKeys, rec.Hash, sk); err != nil {
			t.Fatal(err)
		}
	}
	r := do(t, s, "POST", "/api/v1/keys", testKey, `{"name":"old","metadata":{"tags":["team:legacy"]}}`)
	if r.status != http.StatusCreated {
		t.Fatal(r.status, r.raw)
	}
	asEarlierBuild(r.body["id"].(string))
	if st, b := tagChat(t, hs.URL, r.body["key"].(string), `"feature:a"`, ""); st != http.StatusOK {
		t.Fatal(st, b)
	}
	if rows := spendLogs(t, s, testKey, ""); len(rows) != 1 || !slices.Equal(rows[0].RequestTags, []string{"feature:a", "team:legacy"}) {
		t.Fatalf("the earlier build's key's request tags: %+v", rows)
	}
}
