package server

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLiteLLMMaxBudgetZeroBlocks: max_budget 0 blocks the key (every request refused, info
// max_budget 0, native blocked), a budget again unblocks it, null removes both; rpm_limit
// and tpm_limit 0 (which block on LiteLLM) are 400s rather than "no bound".
func TestLiteLLMMaxBudgetZeroBlocks(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	g := litellmGenerate(t, s, `{"max_budget":0,"models":["openai/ok"]}`)
	if g.MaxBudget == nil || *g.MaxBudget != 0 {
		t.Fatalf("max_budget %v, want 0", g.MaxBudget)
	}
	if resp, b := chatWith(t, hs, g.Key, "openai/ok"); resp.StatusCode == http.StatusOK {
		t.Fatalf("blocked key served: %s", b)
	}
	if vk := keyInfoOf(t, s, testKey, "/api/v1/keys/"+g.Token); !vk.Blocked || vk.MaxBudgetUSD != 0 {
		t.Fatalf("native: %+v", vk)
	}
	r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","max_budget":5}`)
	if r.status != http.StatusOK || r.body["max_budget"] != 5.0 {
		t.Fatalf("unblock: %d %s", r.status, r.raw)
	}
	if resp, b := chatWith(t, hs, g.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("unblocked key refused: %d %s", resp.StatusCode, b)
	}
	for _, c := range []struct {
		body string
		want any
	}{{`"max_budget":0`, 0.0}, {`"max_budget":null`, nil}} {
		r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`",`+c.body+`}`)
		if r.status != http.StatusOK || r.body["max_budget"] != c.want {
			t.Fatalf("%s: %d %s", c.body, r.status, r.raw)
		}
	}
	if resp, b := chatWith(t, hs, g.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("max_budget null left the key blocked: %d %s", resp.StatusCode, b)
	}
	for _, f := range []string{"rpm_limit", "tpm_limit", "max_parallel_requests"} {
		wantLiteLLMError(t, do(t, s, "POST", "/key/generate", testKey, `{"`+f+`":0}`), http.StatusBadRequest, f+": 0 blocks")
		wantLiteLLMError(t, do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","`+f+`":0}`), http.StatusBadRequest, f)
	}
}

// TestLiteLLMUniqueAlias: key_alias is unique among the caller's keys on generate and
// update (409 naming key_alias); a key keeps its own alias; an alias two native keys share
// is not deleted by alias (409), and nothing is deleted.
func TestLiteLLMUniqueAlias(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	a := litellmGenerate(t, s, `{"key_alias":"a"}`)
	b := litellmGenerate(t, s, `{"key_alias":"b"}`)
	wantLiteLLMError(t, do(t, s, "POST", "/key/generate", testKey, `{"key_alias":"a"}`), http.StatusConflict, "key_alias")
	wantLiteLLMError(t, do(t, s, "POST", "/key/update", testKey, `{"key":"`+b.Token+`","key_alias":"a"}`), http.StatusConflict, "key_alias")
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+a.Token+`","key_alias":"a","max_budget":3}`); r.status != http.StatusOK {
		t.Fatalf("own alias: %d %s", r.status, r.raw)
	}
	issue(t, s, `{"name":"twin"}`)
	issue(t, s, `{"name":"twin"}`)
	wantLiteLLMError(t, do(t, s, "POST", "/key/delete", testKey, `{"keys":["`+a.Token+`"],"key_aliases":["twin"]}`), http.StatusConflict, "twin")
	if r := do(t, s, "GET", "/key/list", testKey, ""); r.body["total_count"] != 4.0 {
		t.Fatalf("a refused delete deleted: %s", r.raw)
	}
}

// TestLiteLLMListParams: key_hash takes the token, the key or its SHA-256 hex; booleans are
// read as FastAPI reads them; unknown parameters and bad values are 400s naming them.
func TestLiteLLMListParams(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	g := litellmGenerate(t, s, `{"key_alias":"a"}`)
	litellmGenerate(t, s, `{"key_alias":"b"}`)
	h := sha256.Sum256([]byte(g.Key))
	for _, ref := range []string{g.Token, g.Key, hex.EncodeToString(h[:])} {
		r := do(t, s, "GET", "/key/list?key_hash="+ref, testKey, "")
		keys, _ := r.body["keys"].([]any)
		if r.status != http.StatusOK || len(keys) != 1 || keys[0] != g.Token {
			t.Fatalf("key_hash=%s: %d %s", ref, r.status, r.raw)
		}
	}
	if r := do(t, s, "GET", "/key/list?key_hash=vk_0000000000000000", testKey, ""); r.body["total_count"] != 0.0 {
		t.Fatalf("unknown key_hash: %s", r.raw)
	}
	for _, v := range []string{"yes", "on", "TRUE"} {
		r := do(t, s, "GET", "/key/list?return_full_object="+v, testKey, "")
		if keys, _ := r.body["keys"].([]any); len(keys) != 2 {
			t.Fatalf("%s: %s", v, r.raw)
		} else if _, ok := keys[0].(map[string]any); !ok {
			t.Fatalf("return_full_object=%s: tokens: %s", v, r.raw)
		}
	}
	for _, v := range []string{"False", "0", "no", "off"} {
		r := do(t, s, "GET", "/key/list?return_full_object="+v, testKey, "")
		if keys, _ := r.body["keys"].([]any); len(keys) != 2 {
			t.Fatalf("%s: %s", v, r.raw)
		} else if _, ok := keys[0].(string); !ok {
			t.Fatalf("return_full_object=%s: objects: %s", v, r.raw)
		}
	}
	r := do(t, s, "GET", "/key/list?sort_order=asc&include_team_keys=true", testKey, "")
	if keys, _ := r.body["keys"].([]any); r.status != http.StatusOK || len(keys) != 2 || keys[0] != g.Token {
		t.Fatalf("asc: %d %s", r.status, r.raw)
	}
	for q, field := range map[string]string{"return_full_object=maybe": "return_full_object", "status=active": "status",
		"sort_by=spend": "sort_by", "sort_order=up": "sort_order", "expand=user&zzz=1": "expand, zzz"} {
		r := do(t, s, "GET", "/key/list?"+q, testKey, "")
		wantLiteLLMError(t, r, http.StatusBadRequest, field)
		if e, _ := r.body["error"].(map[string]any); e["param"] != strings.Split(field, ",")[0] {
			t.Fatalf("%s: param %v", q, e["param"])
		}
	}
}

// TestLiteLLMDurationsAndEmptyFields: w and mo units; "None" on update keeps the expiry and
// removes the budget period (as null does); unknown fields at their defaults, nested too,
// are ignored, while a non-empty one, or a 0 bound inside an object, is a 400 naming it.
func TestLiteLLMDurationsAndEmptyFields(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	before := time.Now()
	g := litellmGenerate(t, s, `{"duration":"2w","budget_duration":"1mo","max_budget":1}`)
	if g.Expires == nil || g.Expires.Before(before.Add(14*24*time.Hour-time.Minute)) || g.Expires.After(time.Now().Add(14*24*time.Hour+time.Minute)) {
		t.Fatalf("2w: expires %v", g.Expires)
	}
	r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","duration":"None","budget_duration":"none"}`)
	if r.status != http.StatusOK || r.body["expires"] == nil || r.body["budget_duration"] != nil {
		t.Fatalf("None on update: %d %s", r.status, r.raw)
	}
	if exp, _ := time.Parse(time.RFC3339Nano, r.body["expires"].(string)); !exp.Equal(*g.Expires) {
		t.Fatalf("expiry changed: %v, was %v", exp, g.Expires)
	}
	for _, body := range []string{`{"auto_rotate":false,"rotation_interval":null,"new_field":{"a":[],"b":{"c":""}}}`,
		`{"object_permission":{"vector_stores":[],"mcp_servers":[null]}}`} {
		if r := do(t, s, "POST", "/key/generate", testKey, body); r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", body, r.status, r.raw)
		}
	}
	for body, field := range map[string]string{`{"auto_rotate":true}`: "auto_rotate", `{"new_field":{"a":[1]}}`: "new_field",
		`{"router_settings":{"routing_strategy":"least-busy"}}`: "router_settings.routing_strategy", `{"object_permission":{"vector_stores":["vs_1"]}}`: "object_permission"} {
		wantLiteLLMError(t, do(t, s, "POST", "/key/generate", testKey, body), http.StatusBadRequest, field)
	}
}

// TestLiteLLMKeyBlock: /key/block refuses every request of the key and keeps its budget
// (a budget change leaves it blocked), /key/unblock lifts it; blocked true/false on
// generate and update do the same; blocked false with max_budget 0 is a contradiction
// named as such; the key is named by its value or its token.
func TestLiteLLMKeyBlock(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	g := litellmGenerate(t, s, `{"max_budget":10,"models":["openai/ok"]}`)
	if resp, b := chatWith(t, hs, g.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("new key refused: %d %s", resp.StatusCode, b)
	}
	r := do(t, s, "POST", "/key/block", testKey, `{"key":"`+g.Key+`"}`)
	if r.status != http.StatusOK || r.body["blocked"] != true || r.body["max_budget"] != 10.0 || r.body["token"] != g.Token {
		t.Fatalf("block: %d %s", r.status, r.raw)
	}
	if resp, b := chatWith(t, hs, g.Key, "openai/ok"); resp.StatusCode == http.StatusOK {
		t.Fatalf("blocked key served: %s", b)
	}
	r = do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","max_budget":20}`)
	if r.status != http.StatusOK || r.body["blocked"] != true || r.body["max_budget"] != 20.0 {
		t.Fatalf("a budget change on a blocked key: %d %s", r.status, r.raw)
	}
	if resp, b := chatWith(t, hs, g.Key, "openai/ok"); resp.StatusCode == http.StatusOK {
		t.Fatalf("a budget change unblocked a key blocked by /key/block: %s", b)
	}
	if r := do(t, s, "GET", "/key/info?key="+g.Token, testKey, ""); r.status != http.StatusOK || !strings.Contains(r.raw, `"blocked":true`) {
		t.Fatalf("info of a blocked key: %d %s", r.status, r.raw)
	}
	r = do(t, s, "POST", "/key/unblock", testKey, `{"key":"`+g.Token+`"}`)
	if r.status != http.StatusOK || r.body["blocked"] != false || r.body["max_budget"] != 20.0 {
		t.Fatalf("unblock: %d %s", r.status, r.raw)
	}
	if resp, b := chatWith(t, hs, g.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("unblocked key refused: %d %s", resp.StatusCode, b)
	}

	f := litellmGenerate(t, s, `{"blocked":true,"models":["openai/ok"]}`)
	if resp, b := chatWith(t, hs, f.Key, "openai/ok"); resp.StatusCode == http.StatusOK {
		t.Fatalf("a key generated blocked served: %s", b)
	}
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+f.Token+`","blocked":false}`); r.status != http.StatusOK || r.body["blocked"] != false {
		t.Fatalf("blocked false: %d %s", r.status, r.raw)
	}
	if resp, b := chatWith(t, hs, f.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("blocked false left the key blocked: %d %s", resp.StatusCode, b)
	}

	wantLiteLLMError(t, do(t, s, "POST", "/key/generate", testKey, `{"max_budget":0,"blocked":false}`), http.StatusBadRequest, "blocked")
	wantLiteLLMError(t, do(t, s, "POST", "/key/block", testKey, `{}`), http.StatusBadRequest, "key")
	wantLiteLLMError(t, do(t, s, "POST", "/key/unblock", testKey, `{"key":"sy-vk-nope"}`), http.StatusNotFound, "")
	wantLiteLLMError(t, do(t, s, "POST", "/key/block", testKey, `{"key":"`+g.Token+`","team_id":"x"}`), http.StatusBadRequest, "team_id")
}
