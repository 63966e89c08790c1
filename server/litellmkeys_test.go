package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// litellmGenerated is what POST /key/generate answers (the fields the tests read).
type litellmGenerated struct {
	Key            string         `json:"key"`
	KeyName        string         `json:"key_name"`
	KeyAlias       string         `json:"key_alias"`
	Token          string         `json:"token"`
	TeamID         *string        `json:"team_id"`
	Expires        *time.Time     `json:"expires"`
	Models         []string       `json:"models"`
	MaxBudget      *float64       `json:"max_budget"`
	TPMLimit       *int64         `json:"tpm_limit"`
	RPMLimit       *int           `json:"rpm_limit"`
	BudgetDuration string         `json:"budget_duration"`
	Metadata       map[string]any `json:"metadata"`
	UserID         string         `json:"user_id"`
}

// litellmInfo is the "info" of GET /key/info and an entry of /key/list?return_full_object=true.
type litellmInfo struct {
	Token     string         `json:"token"`
	KeyAlias  string         `json:"key_alias"`
	Spend     float64        `json:"spend"`
	MaxBudget *float64       `json:"max_budget"`
	Models    []string       `json:"models"`
	Expires   *time.Time     `json:"expires"`
	TPMLimit  *int64         `json:"tpm_limit"`
	RPMLimit  *int           `json:"rpm_limit"`
	CreatedAt time.Time      `json:"created_at"`
	Metadata  map[string]any `json:"metadata"`
	UserID    string         `json:"user_id"`
}

func litellmGenerate(t *testing.T, s *Server, body string) litellmGenerated {
	t.Helper()
	r := do(t, s, "POST", "/key/generate", testKey, body)
	if r.status != http.StatusOK {
		t.Fatalf("POST /key/generate %s: %d %s", body, r.status, r.raw)
	}
	var g litellmGenerated
	if err := json.Unmarshal([]byte(r.raw), &g); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(g.Key, "sy-vk-") || !strings.HasPrefix(g.Token, "vk_") {
		t.Fatalf("generated %s", r.raw)
	}
	return g
}

// shownKey matches a virtual key itself (not its short form, key_name) in an answer.
var shownKey = regexp.MustCompile(`sy-vk-[A-Za-z0-9_-]`)

func keyInfoViaLiteLLM(t *testing.T, s *Server, caller, ref string) litellmInfo {
	t.Helper()
	path := "/key/info"
	if ref != "" {
		path += "?key=" + url.QueryEscape(ref)
	}
	r := do(t, s, "GET", path, caller, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, r.status, r.raw)
	}
	var out struct {
		Key  string      `json:"key"`
		Info litellmInfo `json:"info"`
	}
	if err := json.Unmarshal([]byte(r.raw), &out); err != nil {
		t.Fatal(err)
	}
	if ref != "" && out.Key != ref {
		t.Fatalf("key %q, want %q", out.Key, ref)
	}
	// key_name ("sy-vk-…abcd") is the key's short form; a key character right after the
	// prefix is the key itself.
	if shownKey.MatchString(r.raw) && !strings.HasPrefix(ref, "sy-vk-") {
		t.Fatalf("the key itself is shown again: %s", r.raw)
	}
	return out.Info
}

// wantLiteLLMError checks a failure in LiteLLM's (OpenAI's) envelope whose message names field.
func wantLiteLLMError(t *testing.T, r reply, status int, field string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	e, _ := r.body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if e == nil || msg == "" {
		t.Fatalf("not LiteLLM's error envelope {error: {message, type, ...}}: %s", r.raw)
	}
	if field != "" && !strings.Contains(msg, field) {
		t.Fatalf("message %q does not name %q", msg, field)
	}
}

// TestLiteLLMKeyLifecycle: a key made by /key/generate is an ordinary virtual key (the same
// record /api/v1/keys shows), holds its model list on /v1/chat/completions, and is read,
// changed, listed and deleted through /key/info, /key/update, /key/list and /key/delete.
func TestLiteLLMKeyLifecycle(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	before := time.Now()
	g := litellmGenerate(t, s, `{"models":["openai/ok"],"max_budget":1.5,"duration":"30d","key_alias":"ci bot",
		"metadata":{"env":"prod"},"tpm_limit":100000,"rpm_limit":60,"budget_duration":"30d","user_id":"u-1"}`)
	if g.KeyAlias != "ci bot" || g.MaxBudget == nil || *g.MaxBudget != 1.5 || g.TPMLimit == nil || *g.TPMLimit != 100000 ||
		g.RPMLimit == nil || *g.RPMLimit != 60 || len(g.Models) != 1 || g.Models[0] != "openai/ok" || g.BudgetDuration != "30d" ||
		g.Metadata["env"] != "prod" || g.UserID != "u-1" || g.KeyName == "" || strings.Contains(g.KeyName, g.Key[10:30]) {
		t.Fatalf("generated %+v", g)
	}
	if g.Expires == nil || g.Expires.Before(before.Add(30*24*time.Hour-time.Minute)) || g.Expires.After(time.Now().Add(30*24*time.Hour+time.Minute)) {
		t.Fatalf("expires %v, want 30 days from now", g.Expires)
	}
	// The same record as the native API's: no second store.
	native := keyInfoOf(t, s, testKey, "/api/v1/keys/"+g.Token)
	if native.Name != "ci bot" || native.MaxBudgetUSD != 1.5 || native.TokensPerMinute != 100000 || native.RequestsPerMinute != 60 || native.ExpiresAt == nil {
		t.Fatalf("native view %+v", native)
	}

	// It authorizes its model, and only its model.
	if resp, b := chatWith(t, hs, g.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("allowed model: %d %s", resp.StatusCode, b)
	}
	if resp, b := chatWith(t, hs, g.Key, "openai/other"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("model outside the list: %d %s", resp.StatusCode, b)
	}

	// /key/info by the key itself, by its token, and the calling key's own without ?key=.
	for _, ref := range []string{g.Key, g.Token} {
		info := keyInfoViaLiteLLM(t, s, testKey, ref)
		if info.Token != g.Token || info.KeyAlias != "ci bot" || info.Spend <= 0 || info.MaxBudget == nil || *info.MaxBudget != 1.5 ||
			len(info.Models) != 1 || info.Expires == nil || info.CreatedAt.IsZero() || info.TPMLimit == nil || *info.TPMLimit != 100000 ||
			info.RPMLimit == nil || *info.RPMLimit != 60 || info.Metadata["env"] != "prod" || info.UserID != "u-1" {
			t.Fatalf("info by %s: %+v", ref[:6], info)
		}
	}
	if self := keyInfoViaLiteLLM(t, s, g.Key, ""); self.Token != g.Token || self.Spend <= 0 {
		t.Fatalf("own info %+v", self)
	}

	// /key/update changes the fields given and keeps the rest.
	r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Key+`","max_budget":5,"key_alias":"ci bot 2","models":["openai/ok","openai/other"]}`)
	if r.status != http.StatusOK {
		t.Fatalf("update: %d %s", r.status, r.raw)
	}
	info := keyInfoViaLiteLLM(t, s, testKey, g.Token)
	if *info.MaxBudget != 5 || info.KeyAlias != "ci bot 2" || len(info.Models) != 2 || *info.RPMLimit != 60 || info.Metadata["env"] != "prod" || info.UserID != "u-1" {
		t.Fatalf("after update %+v", info)
	}
	if resp, b := chatWith(t, hs, g.Key, "openai/other"); resp.StatusCode != http.StatusOK {
		t.Fatalf("newly allowed model: %d %s", resp.StatusCode, b)
	}
	// duration on update sets a new expiry from now.
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","duration":"1h"}`); r.status != http.StatusOK {
		t.Fatalf("update duration: %d %s", r.status, r.raw)
	}
	if info := keyInfoViaLiteLLM(t, s, testKey, g.Token); info.Expires == nil || info.Expires.After(time.Now().Add(time.Hour+time.Minute)) {
		t.Fatalf("expires after duration 1h: %v", info.Expires)
	}

	// /key/list pages newest first.
	g2 := litellmGenerate(t, s, `{"key_alias":"second"}`)
	r = do(t, s, "GET", "/key/list?page=1&size=1", testKey, "")
	var page struct {
		Keys        []string `json:"keys"`
		TotalCount  int      `json:"total_count"`
		CurrentPage int      `json:"current_page"`
		TotalPages  int      `json:"total_pages"`
	}
	if err := json.Unmarshal([]byte(r.raw), &page); err != nil || r.status != http.StatusOK {
		t.Fatalf("list: %d %s", r.status, r.raw)
	}
	if page.TotalCount != 2 || page.TotalPages != 2 || page.CurrentPage != 1 || len(page.Keys) != 1 || page.Keys[0] != g2.Token {
		t.Fatalf("page 1: %+v", page)
	}
	r = do(t, s, "GET", "/key/list?page=2&size=1&return_full_object=true", testKey, "")
	var full struct {
		Keys       []litellmInfo `json:"keys"`
		TotalCount int           `json:"total_count"`
	}
	if err := json.Unmarshal([]byte(r.raw), &full); err != nil || r.status != http.StatusOK || len(full.Keys) != 1 || full.Keys[0].Token != g.Token || full.Keys[0].KeyAlias != "ci bot 2" {
		t.Fatalf("page 2 full: %d %s", r.status, r.raw)
	}
	for _, q := range []string{"page=0", "size=0", "size=101", "page=x"} {
		wantLiteLLMError(t, do(t, s, "GET", "/key/list?"+q, testKey, ""), http.StatusBadRequest, strings.Split(q, "=")[0])
	}

	// /key/delete by key and by alias.
	r = do(t, s, "POST", "/key/delete", testKey, `{"keys":["`+g.Key+`"],"key_aliases":["second"]}`)
	if r.status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	var del struct {
		DeletedKeys []string `json:"deleted_keys"`
	}
	if json.Unmarshal([]byte(r.raw), &del) != nil || len(del.DeletedKeys) != 2 || del.DeletedKeys[0] != g.Key {
		t.Fatalf("deleted %s", r.raw)
	}
	if resp, b := chatWith(t, hs, g.Key, "openai/ok"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("deleted key still works: %d %s", resp.StatusCode, b)
	}
	wantLiteLLMError(t, do(t, s, "GET", "/key/info?key="+g2.Token, testKey, ""), http.StatusNotFound, g2.Token)
	if r := do(t, s, "GET", "/key/list", testKey, ""); r.status != http.StatusOK || r.body["total_count"] != 0.0 {
		t.Fatalf("list after delete: %d %s", r.status, r.raw)
	}
}

// TestLiteLLMKeyDuration: duration takes LiteLLM's "30s", "30m", "30h", "30d"; anything
// else is a 400 naming duration (and a bad native-checked field names LiteLLM's name).
func TestLiteLLMKeyDuration(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	for d, want := range map[string]time.Duration{"30s": 30 * time.Second, "30m": 30 * time.Minute, "30h": 30 * time.Hour, "30d": 30 * 24 * time.Hour} {
		before := time.Now()
		g := litellmGenerate(t, s, `{"duration":"`+d+`"}`)
		if g.Expires == nil || g.Expires.Before(before.Add(want-2*time.Second)) || g.Expires.After(time.Now().Add(want+2*time.Second)) {
			t.Fatalf("duration %s: expires %v", d, g.Expires)
		}
	}
	if g := litellmGenerate(t, s, `{"duration":null}`); g.Expires != nil {
		t.Fatalf("no duration: expires %v", g.Expires)
	}
	// "" (like "None" and "null") is no duration, as LiteLLM's parser reads it: not here.
	for _, d := range []string{`"30x"`, `"abc"`, `"-1d"`, `"0s"`, `"0w"`, `"1.5x"`, `"200mo"`, `30`} {
		wantLiteLLMError(t, do(t, s, "POST", "/key/generate", testKey, `{"duration":`+d+`}`), http.StatusBadRequest, "duration")
	}
	for body, field := range map[string]string{
		`{"budget_duration":"soon"}`:                       "budget_duration",
		`{"max_budget":-1}`:                                "max_budget:",
		`{"rpm_limit":-1}`:                                 "rpm_limit",
		`{"tpm_limit":-1}`:                                 "tpm_limit",
		`{"models":["nope/none"]}`:                         "models[0]",
		`{"key_alias":"` + strings.Repeat("a", 300) + `"}`: "key_alias",
	} {
		wantLiteLLMError(t, do(t, s, "POST", "/key/generate", testKey, body), http.StatusBadRequest, field)
	}
	r := do(t, s, "GET", "/key/list", testKey, "")
	if r.body["total_count"] != 5.0 {
		t.Fatalf("a refused request stored a key: %s", r.raw)
	}
}

// TestLiteLLMKeyFields: LiteLLM fields Switchyard has no equivalent for (and tags not a list) are refused with a
// 400 naming them when they ask for something, and accepted when empty (as LiteLLM's
// clients send their defaults).
func TestLiteLLMKeyFields(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	// team_id names a team now (teams_test.go): one that does not exist is a 404 naming it.
	wantLiteLLMError(t, do(t, s, "POST", "/key/generate", testKey, `{"team_id":"t1"}`), http.StatusNotFound, "team_id")
	for _, field := range []string{`"key":"sk-chosen-1234"`, `"guardrails":["pii"]`, `"permissions":{"allow":"x"}`,
		`"model_max_budget":{"gpt-4":1}`, `"aliases":{"a":"nope/none"}`, `"tags":"x"`,
		`"blocked":"yes"`, `"bogus":1`} {
		name := strings.Trim(strings.SplitN(field, ":", 2)[0], `"`)
		wantLiteLLMError(t, do(t, s, "POST", "/key/generate", testKey, "{"+field+"}"), http.StatusBadRequest, name)
	}
	litellmGenerate(t, s, `{"aliases":{},"config":{},"permissions":{},"model_max_budget":{},"allowed_cache_controls":[],"guardrails":null,
		"team_id":null,"spend":0,"blocked":false,"tags":[],"soft_budget":null,"max_parallel_requests":null}`)
	if r := do(t, s, "GET", "/key/list", testKey, ""); r.body["total_count"] != 1.0 {
		t.Fatalf("a refused request stored a key: %s", r.raw)
	}
	wantLiteLLMError(t, do(t, s, "POST", "/key/generate", testKey, `{"metadata":{"user_id":"a"},"user_id":"b"}`), http.StatusBadRequest, "user_id")
	wantLiteLLMError(t, do(t, s, "POST", "/key/generate", testKey, `{"metadata":{"big":"`+strings.Repeat("x", 20000)+`"}}`), http.StatusBadRequest, "metadata")
	wantLiteLLMError(t, do(t, s, "POST", "/key/generate", testKey, `{"models":`), http.StatusBadRequest, "")
}

// TestLiteLLMKeyScoping: the /key routes hold the same rules as /api/v1/keys: a key sees,
// changes and deletes only the keys it issued, a virtual key issues none and sees only
// itself, and an unknown key is a 404 that deletes nothing.
func TestLiteLLMKeyScoping(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	g := litellmGenerate(t, s, `{"key_alias":"mine","models":["openai/ok"]}`)
	g2 := litellmGenerate(t, s, `{"key_alias":"sibling"}`)
	other := completionsOtherKey
	wantLiteLLMError(t, do(t, s, "GET", "/key/info?key="+g.Token, other, ""), http.StatusNotFound, "")
	wantLiteLLMError(t, do(t, s, "GET", "/key/info?key="+url.QueryEscape(g.Key), other, ""), http.StatusNotFound, "")
	wantLiteLLMError(t, do(t, s, "POST", "/key/update", other, `{"key":"`+g.Token+`","max_budget":9}`), http.StatusNotFound, "")
	wantLiteLLMError(t, do(t, s, "POST", "/key/delete", other, `{"keys":["`+g.Key+`"]}`), http.StatusNotFound, "")
	wantLiteLLMError(t, do(t, s, "POST", "/key/delete", other, `{"key_aliases":["mine"]}`), http.StatusNotFound, "mine")
	if r := do(t, s, "GET", "/key/list", other, ""); r.status != http.StatusOK || r.body["total_count"] != 0.0 {
		t.Fatalf("another key's list: %d %s", r.status, r.raw)
	}
	// A virtual key: its own info only; no issuing, listing, changing or deleting.
	wantLiteLLMError(t, do(t, s, "GET", "/key/info?key="+g2.Token, g.Key, ""), http.StatusForbidden, "")
	if info := keyInfoViaLiteLLM(t, s, g.Key, g.Token); info.Token != g.Token {
		t.Fatalf("own info by token %+v", info)
	}
	wantLiteLLMError(t, do(t, s, "POST", "/key/generate", g.Key, `{}`), http.StatusForbidden, "")
	wantLiteLLMError(t, do(t, s, "GET", "/key/list", g.Key, ""), http.StatusForbidden, "")
	wantLiteLLMError(t, do(t, s, "POST", "/key/update", g.Key, `{"key":"`+g.Token+`","max_budget":9}`), http.StatusForbidden, "")
	wantLiteLLMError(t, do(t, s, "POST", "/key/delete", g.Key, `{"keys":["`+g.Token+`"]}`), http.StatusForbidden, "")
	// An operator key is not a virtual key: /key/info without ?key= has nothing to show.
	wantLiteLLMError(t, do(t, s, "GET", "/key/info", testKey, ""), http.StatusNotFound, "key")
	// Unknown keys: 404, and a delete naming one deletes nothing.
	for _, ref := range []string{"vk_0000000000000000", "sy-vk-nothing", "nonsense"} {
		wantLiteLLMError(t, do(t, s, "GET", "/key/info?key="+ref, testKey, ""), http.StatusNotFound, ref)
		wantLiteLLMError(t, do(t, s, "POST", "/key/update", testKey, `{"key":"`+ref+`","max_budget":1}`), http.StatusNotFound, ref)
	}
	wantLiteLLMError(t, do(t, s, "POST", "/key/delete", testKey, `{"keys":["`+g.Token+`","vk_0000000000000000"]}`), http.StatusNotFound, "vk_0000000000000000")
	keyInfoViaLiteLLM(t, s, testKey, g.Token)
	wantLiteLLMError(t, do(t, s, "POST", "/key/delete", testKey, `{}`), http.StatusBadRequest, "keys")
	wantLiteLLMError(t, do(t, s, "POST", "/key/update", testKey, `{"max_budget":1}`), http.StatusBadRequest, "key")
	// Without a key at all: 401 in the same envelope.
	wantLiteLLMError(t, do(t, s, "GET", "/key/list", "", ""), http.StatusUnauthorized, "")
}

// TestLiteLLMHealthProbes: LiteLLM's liveness and readiness probes answer without a key,
// and readiness follows the server's own health (draining: 503).
func TestLiteLLMHealthProbes(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	for _, p := range []string{"/health/liveliness", "/health/liveness", "/health/readiness"} {
		if r := do(t, s, "GET", p, "", ""); r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", p, r.status, r.raw)
		}
	}
	if r := do(t, s, "GET", "/health/readiness", "", ""); r.body["status"] != "healthy" || r.body["db"] != "connected" {
		t.Fatalf("readiness %s", r.raw)
	}
	s.Drain()
	if r := do(t, s, "GET", "/health/readiness", "", ""); r.status != http.StatusServiceUnavailable {
		t.Fatalf("readiness while draining: %d %s", r.status, r.raw)
	}
}

// TestLiteLLMRoutesDocumented: the compatibility routes are in the OpenAPI document.
func TestLiteLLMRoutesDocumented(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	r := do(t, s, "GET", "/api/v1/openapi.json", "", "")
	for _, p := range []string{"/key/generate", "/key/info", "/key/update", "/key/delete", "/key/list", "/health/liveliness", "/health/readiness"} {
		if !strings.Contains(r.raw, fmt.Sprintf("%q", p)) {
			t.Fatalf("%s not in the OpenAPI document", p)
		}
	}
	if !strings.Contains(r.raw, "LiteLLM compatibility") {
		t.Fatal("no LiteLLM compatibility tag")
	}
}

// TestLiteLLMKeyUpdateNulls: on /key/update, as on LiteLLM's, a field sent as null removes
// the limit or label (the key's own record shows it), duration null keeps the expiry,
// models null is refused (it would widen the key), and spend cannot be set or reset.
func TestLiteLLMKeyUpdateNulls(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	g := litellmGenerate(t, s, `{"models":["openai/ok"],"max_budget":2,"tpm_limit":10,"rpm_limit":5,"budget_duration":"1d","key_alias":"a",
		"duration":"1h","user_id":"u","metadata":{"env":"prod"}}`)
	r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","max_budget":null,"tpm_limit":null,"rpm_limit":null,
		"budget_duration":null,"key_alias":null,"duration":null,"user_id":null}`)
	if r.status != http.StatusOK {
		t.Fatalf("update nulls: %d %s", r.status, r.raw)
	}
	native := keyInfoOf(t, s, testKey, "/api/v1/keys/"+g.Token)
	if native.MaxBudgetUSD != 0 || native.TokensPerMinute != 0 || native.RequestsPerMinute != 0 || native.BudgetDuration != "" || native.Name != "" ||
		native.ExpiresAt == nil || len(native.Models) != 1 || native.Metadata["user_id"] != nil || native.Metadata["env"] != "prod" {
		t.Fatalf("after nulls %+v", native)
	}
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","metadata":null,"user_id":"v"}`); r.status != http.StatusOK {
		t.Fatalf("update metadata null: %d %s", r.status, r.raw)
	}
	if native := keyInfoOf(t, s, testKey, "/api/v1/keys/"+g.Token); len(native.Metadata) != 1 || native.Metadata["user_id"] != "v" {
		t.Fatalf("metadata after null with user_id: %v", native.Metadata)
	}
	wantLiteLLMError(t, do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","models":null}`), http.StatusBadRequest, "models")
	wantLiteLLMError(t, do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","spend":0}`), http.StatusBadRequest, "spend")
	if native := keyInfoOf(t, s, testKey, "/api/v1/keys/"+g.Token); len(native.Models) != 1 {
		t.Fatalf("a refused update changed the key: %+v", native)
	}
}
