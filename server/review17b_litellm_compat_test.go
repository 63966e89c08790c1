package server

import (
	"net/http"
	"testing"
)

// WRONG: LiteLLM's duration parser (litellm_core_utils/duration_parser.py) takes "w"
// (weeks) and "mo" (calendar months) besides s/m/h/d, and "1mo" is the budget_duration
// LiteLLM's docs use for monthly budgets; parseBudgetDuration refuses both with a 400, so
// a migrated admin script breaks. Fix: accept Nw (N*7d) and Nmo (calendar months, or 30d).
func TestReview17bDurationWeeksAndMonths(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	for _, body := range []string{`{"budget_duration":"1mo"}`, `{"duration":"2w"}`} {
		if r := do(t, s, "POST", "/key/generate", testKey, body); r.status != http.StatusOK {
			t.Errorf("POST /key/generate %s: %d %s", body, r.status, r.raw)
		}
	}
}

// WRONG: FastAPI parses the bool query parameter return_full_object from "True", "1",
// "yes", "on" as well as "true"; Python's requests sends params={"return_full_object": True}
// as "True". The handler compares with "true" only and silently answers tokens instead of
// objects. Fix: strconv.ParseBool (and "yes"/"on"), 400 on anything else.
func TestReview17bListReturnFullObjectPythonTrue(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmGenerate(t, s, `{"key_alias":"a"}`)
	for _, v := range []string{"True", "1"} {
		r := do(t, s, "GET", "/key/list?return_full_object="+v, testKey, "")
		keys, _ := r.body["keys"].([]any)
		if r.status != http.StatusOK || len(keys) != 1 {
			t.Fatalf("%s: %d %s", v, r.status, r.raw)
		}
		if _, ok := keys[0].(map[string]any); !ok {
			t.Errorf("return_full_object=%s: got %T (a token), want an info object: %s", v, keys[0], r.raw)
		}
	}
}

// WRONG: /key/list ignores LiteLLM's key_hash filter (and other unknown query parameters),
// so a script looking one key up by its token gets every key of the caller — and may act on
// the wrong one (e.g. take keys[0]). Fix: support key_hash (token, or sha256 hex) or refuse
// unknown filters with a 400 as team_id is.
func TestReview17bListKeyHashFilterIgnored(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	g := litellmGenerate(t, s, `{"key_alias":"a"}`)
	litellmGenerate(t, s, `{"key_alias":"b"}`)
	r := do(t, s, "GET", "/key/list?key_hash="+g.Token, testKey, "")
	if r.status == http.StatusOK && r.body["total_count"] != 1.0 {
		t.Fatalf("key_hash filter ignored: %s", r.raw)
	}
}

// WRONG: fields LiteLLM's GenerateKeyRequest has and sends at their default (auto_rotate
// false, rotation_interval null, as a pydantic model_dump() of the request or the UI sends)
// are refused as "unknown field" with a 400, although they ask for nothing. Fix: list them
// in litellmRefused (refused only when non-empty), or accept unknown fields whose value is
// empty.
func TestReview17bGenerateDefaultValuedNewerFields(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	body := `{"key_alias":"x","auto_rotate":false,"rotation_interval":null}`
	if r := do(t, s, "POST", "/key/generate", testKey, body); r.status != http.StatusOK {
		t.Fatalf("POST /key/generate %s: %d %s", body, r.status, r.raw)
	}
}

// WRONG: emptyJSON looks one level deep only: an object_permission whose lists are all empty
// ({"vector_stores": [], "mcp_servers": []}, which asks for nothing) is refused with a 400.
// Fix: treat an object or array whose members are all empty as empty (recursively).
func TestReview17bGenerateNestedEmptyObjectPermission(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	body := `{"object_permission":{"vector_stores":[],"mcp_servers":[],"mcp_access_groups":[]}}`
	if r := do(t, s, "POST", "/key/generate", testKey, body); r.status != http.StatusOK {
		t.Fatalf("POST /key/generate %s: %d %s", body, r.status, r.raw)
	}
}

// WRONG: LiteLLM refuses a key_alias already in use (unique key aliases, 400), which is
// what makes /key/delete {"key_aliases": [...]} name one key. Here aliases may repeat, so a
// migrated script deleting "ci" by alias revokes every key called "ci". Fix: refuse a
// duplicate key_alias on /key/generate and /key/update (per owner), or refuse a delete by an
// alias that names more than one key.
func TestReview17bDuplicateAliasDeletesSeveralKeys(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	litellmGenerate(t, s, `{"key_alias":"ci"}`)
	r := do(t, s, "POST", "/key/generate", testKey, `{"key_alias":"ci"}`)
	if r.status == http.StatusOK {
		t.Fatalf("a second key with alias ci was issued: %s", r.raw)
	}
}
