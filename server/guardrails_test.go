package server

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// guardrailsServer serves the scripted upstream with an opt-in banned_words guardrail
// "words", a default_on pii masking guardrail and an opt-in post_call regex guardrail
// "no-greeting" (which the fake's "Hello from …" answers trip).
func guardrailsServer(t *testing.T) (string, *fakeOpenAIUpstream) {
	hs, _, up := completionsServerWith(t, func(o *completions.Options) {
		o.Guardrails = []completions.GuardrailConfig{
			{Name: "words", Kind: completions.GuardrailBannedWords, Mode: completions.GuardrailPreCall, Words: []string{"forbidden"}},
			{Name: "pii", Kind: completions.GuardrailPII, Mode: completions.GuardrailPreCall, DefaultOn: true},
			{Name: "no-greeting", Kind: completions.GuardrailRegex, Mode: completions.GuardrailPostCall, Patterns: []string{`^Hello`}},
		}
	})
	return hs.URL, up
}

func (u *fakeOpenAIUpstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.messages)
}

// TestGuardrailsOnEverySurface: each chat surface reads "guardrails" from its body; a
// pre_call block is a 400 in the surface's envelope naming the guardrail (OpenAI's with
// code guardrail_violation and param guardrails) and nothing reaches the upstream; an
// unknown name is a 400 naming guardrails; the default_on mask reaches the upstream.
func TestGuardrailsOnEverySurface(t *testing.T) {
	url, up := guardrailsServer(t)
	for _, c := range []struct{ path, body string }{
		{"/v1/chat/completions", `{"model":"up/ok","messages":[{"role":"user","content":"a forbidden topic"}],"guardrails":["words"]}`},
		{"/v1/responses", `{"model":"up/ok","input":"a forbidden topic","guardrails":["words"]}`},
		{"/v1/messages", `{"model":"up/ok","max_tokens":50,"messages":[{"role":"user","content":"a forbidden topic"}],"guardrails":["words"]}`},
		{"/v1/completions", `{"model":"up/ok","prompt":"a forbidden topic","guardrails":["words"]}`},
		{"/api/v1/completions", `{"models":["up/ok"],"messages":[{"role":"user","content":[{"type":"text","text":"a forbidden topic"}]}],"guardrails":["words"]}`},
	} {
		resp, b := post(t, url+c.path, testKey, c.body)
		m := decodeMap(t, b)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `\"words\"`) || !strings.Contains(string(b), "Violated guardrail policy") {
			t.Errorf("%s: %d %s", c.path, resp.StatusCode, b)
			continue
		}
		switch c.path {
		case "/v1/chat/completions", "/v1/responses", "/v1/completions":
			e, _ := m["error"].(map[string]any)
			if e["code"] != "guardrail_violation" || e["param"] != "guardrails" || e["type"] != "invalid_request_error" {
				t.Errorf("%s: envelope %s", c.path, b)
			}
		case "/v1/messages":
			e, _ := m["error"].(map[string]any)
			if m["type"] != "error" || e["type"] != "invalid_request_error" {
				t.Errorf("%s: envelope %s", c.path, b)
			}
		case "/api/v1/completions":
			if m["error"] != "Guardrail Violation" || m["guardrail"] != "words" || m["mode"] != "pre_call" {
				t.Errorf("%s: envelope %s", c.path, b)
			}
		}
	}
	if n := up.count(); n != 0 {
		t.Fatalf("%d upstream calls for blocked requests", n)
	}

	resp, b := post(t, url+"/v1/chat/completions", testKey, `{"model":"up/ok","messages":[{"role":"user","content":"hi"}],"guardrails":["nope"]}`)
	if e, _ := decodeMap(t, b)["error"].(map[string]any); resp.StatusCode != 400 || !strings.HasPrefix(e["param"].(string), "guardrails") || !strings.Contains(e["message"].(string), `"nope"`) {
		t.Errorf("unknown guardrail: %d %s", resp.StatusCode, b)
	}

	resp, b = post(t, url+"/v1/messages", testKey, `{"model":"up/ok","max_tokens":50,"messages":[{"role":"user","content":"write to bob@example.org"}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("masked request: %d %s", resp.StatusCode, b)
	}
	if sent := up.last(); len(sent) != 1 || sent[0]["content"] != "write to [EMAIL]" {
		t.Errorf("the upstream got %v", sent)
	}
}

// TestGuardrailPostCallOverHTTP: a post_call block of a whole answer is a 400 naming the
// guardrail; of a streamed one, the stream ends with an error event naming it instead of
// [DONE].
func TestGuardrailPostCallOverHTTP(t *testing.T) {
	url, _ := guardrailsServer(t)
	resp, b := post(t, url+"/v1/chat/completions", testKey, `{"model":"up/ok","messages":[{"role":"user","content":"hi"}],"guardrails":["no-greeting"]}`)
	if e, _ := decodeMap(t, b)["error"].(map[string]any); resp.StatusCode != 400 || e["code"] != "guardrail_violation" || !strings.Contains(e["message"].(string), `"no-greeting" (post_call)`) {
		t.Errorf("whole answer: %d %s", resp.StatusCode, b)
	}

	req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(`{"model":"up/ok","stream":true,"messages":[{"role":"user","content":"hi"}],"guardrails":["no-greeting"]}`))
	req.Header.Set("Authorization", "Bearer "+testKey)
	sresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer sresp.Body.Close()
	events := readSSE(t, sresp.Body)
	last := events[len(events)-1][1]
	if sresp.StatusCode != 200 || !strings.Contains(last, `"code":"guardrail_violation"`) || !strings.Contains(last, "no-greeting") {
		t.Errorf("stream: %d, last event %s", sresp.StatusCode, last)
	}
	for _, e := range events {
		if e[1] == "[DONE]" {
			t.Error("a blocked stream ended with [DONE]")
		}
	}
	// The Messages and Responses streams end with their own error events.
	for _, c := range []struct{ path, body, want string }{
		{"/v1/messages", `{"model":"up/ok","max_tokens":50,"stream":true,"messages":[{"role":"user","content":"hi"}],"guardrails":["no-greeting"]}`, `"type":"invalid_request_error"`},
		{"/v1/responses", `{"model":"up/ok","stream":true,"input":"hi","guardrails":["no-greeting"]}`, `"code":"guardrail_violation"`},
	} {
		req, _ := http.NewRequest("POST", url+c.path, strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+testKey)
		sresp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		events := readSSE(t, sresp.Body)
		sresp.Body.Close()
		found := false
		for _, e := range events {
			if e[0] == "error" && strings.Contains(e[1], c.want) && strings.Contains(e[1], "no-greeting") {
				found = true
			}
			if e[0] == "message_stop" || e[0] == "response.completed" {
				t.Errorf("%s: a blocked stream ended with %s", c.path, e[0])
			}
		}
		if !found {
			t.Errorf("%s: no guardrail error event in %v", c.path, events)
		}
	}
	// Without the opt-in the answer passes.
	if resp, b := post(t, url+"/v1/chat/completions", testKey, `{"model":"up/ok","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode != 200 {
		t.Errorf("not opted in: %d %s", resp.StatusCode, b)
	}
}

// TestKeyGuardrails: a virtual key's guardrails run on every chat request it makes without
// the request naming them (on every surface, and a request naming others adds to them),
// not on the issuing key's; an unknown name is refused when the key is made (422 naming
// guardrails[i]); PATCH and LiteLLM's /key/update change them, and /key/generate takes and
// /key/info shows them; a key whose guardrail the server no longer configures is refused
// (fails closed) rather than let through.
func TestKeyGuardrails(t *testing.T) {
	hs, s, up := completionsServerWith(t, func(o *completions.Options) {
		o.Guardrails = []completions.GuardrailConfig{
			{Name: "words", Kind: completions.GuardrailBannedWords, Mode: completions.GuardrailPreCall, Words: []string{"forbidden"}},
			{Name: "no-greeting", Kind: completions.GuardrailRegex, Mode: completions.GuardrailPostCall, Patterns: []string{`^Hello`}},
		}
	})
	forbidden := `{"model":"up/ok","messages":[{"role":"user","content":"a forbidden topic"}]}`
	if r := do(t, s, "POST", "/api/v1/keys", testKey, `{"guardrails":["words","nope"]}`); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.raw, "guardrails[1]") || !strings.Contains(r.raw, `nope`) {
		t.Fatalf("unknown guardrail on a key: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/api/v1/keys", testKey, `{"guardrails":["words","words"]}`); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.raw, "guardrails[1]") {
		t.Fatalf("a guardrail twice: %d %s", r.status, r.raw)
	}
	vk := issue(t, s, `{"guardrails":["words"]}`)
	if !slices.Equal(vk.Guardrails, []string{"words"}) {
		t.Fatalf("issued key's guardrails: %v", vk.Guardrails)
	}
	for _, c := range []struct{ path, body string }{
		{"/v1/chat/completions", forbidden},
		{"/v1/responses", `{"model":"up/ok","input":"a forbidden topic"}`},
		{"/v1/messages", `{"model":"up/ok","max_tokens":50,"messages":[{"role":"user","content":"a forbidden topic"}]}`},
	} {
		if resp, b := post(t, hs.URL+c.path, vk.Key, c.body); resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `\"words\"`) {
			t.Errorf("%s with a guarded key: %d %s", c.path, resp.StatusCode, b)
		}
	}
	if n := up.count(); n != 0 {
		t.Fatalf("%d upstream calls for blocked requests", n)
	}
	if resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, forbidden); resp.StatusCode != http.StatusOK {
		t.Fatalf("the operator key ran the virtual key's guardrail: %d %s", resp.StatusCode, b)
	}
	// A request naming a post_call guardrail adds it to the key's.
	resp, b := post(t, hs.URL+"/v1/chat/completions", vk.Key, `{"model":"up/ok","messages":[{"role":"user","content":"hi"}],"guardrails":["no-greeting"]}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "no-greeting") {
		t.Fatalf("a request's own guardrail beside the key's: %d %s", resp.StatusCode, b)
	}

	if r := do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, `{"guardrails":[]}`); r.status != http.StatusOK || strings.Contains(r.raw, `"guardrails"`) {
		t.Fatalf("PATCH guardrails []: %d %s", r.status, r.raw)
	}
	if resp, b := post(t, hs.URL+"/v1/chat/completions", vk.Key, forbidden); resp.StatusCode != http.StatusOK {
		t.Fatalf("guardrails removed, still blocked: %d %s", resp.StatusCode, b)
	}
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+vk.ID+`","guardrails":["words"]}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"guardrails":["words"]`) {
		t.Fatalf("/key/update guardrails: %d %s", r.status, r.raw)
	}
	if resp, b := post(t, hs.URL+"/v1/chat/completions", vk.Key, forbidden); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("guardrails set by /key/update not run: %d %s", resp.StatusCode, b)
	}
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+vk.ID+`","guardrails":null}`); r.status != http.StatusOK || strings.Contains(r.raw, `"guardrails"`) {
		t.Fatalf("/key/update guardrails null: %d %s", r.status, r.raw)
	}
	r := do(t, s, "POST", "/key/generate", testKey, `{"guardrails":["no-greeting"]}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"guardrails":["no-greeting"]`) {
		t.Fatalf("/key/generate guardrails: %d %s", r.status, r.raw)
	}
	if info := do(t, s, "GET", "/key/info?key="+r.body["token"].(string), testKey, ""); !strings.Contains(info.raw, `"guardrails":["no-greeting"]`) {
		t.Fatalf("/key/info: %s", info.raw)
	}
	wantLiteLLMError(t, do(t, s, "POST", "/key/generate", testKey, `{"guardrails":["nope"]}`), http.StatusBadRequest, "guardrails")
}

// TestKeyGuardrailsResolved: the shared-key record carries a virtual key's guardrails, so
// a replica that did not issue the key (or a batch line) runs them too.
func TestKeyGuardrailsResolved(t *testing.T) {
	_, s, _ := completionsServerWith(t, nil)
	doc, _ := json.Marshal(keyScopeDoc{Tag: "key:vk_x", Budget: "key/vk_x", KeyID: "vk_x", Guardrails: []string{"words"}})
	if err := completions.PutSharedBudget(context.Background(), s.cfg.Store, "key/vk_x", completions.BudgetLimits{}); err != nil {
		t.Fatal(err)
	}
	scope, err := keyScopes(s.cfg.Store)(context.Background(), "owner", doc)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := scope.(virtualKeyScope)
	if !slices.Equal(sc.Guardrails, []string{"words"}) {
		t.Fatalf("resolved scope's guardrails: %v", sc.Guardrails)
	}
}

// TestGuardrailList: GET /guardrails/list names the configured guardrails in order, in
// LiteLLM's shape, for operator and virtual keys alike, without what they look for.
func TestGuardrailList(t *testing.T) {
	hs, s, _ := completionsServerWith(t, func(o *completions.Options) {
		o.Guardrails = []completions.GuardrailConfig{
			{Name: "words", Kind: completions.GuardrailBannedWords, Mode: completions.GuardrailPreCall, Words: []string{"forbidden", "secret plan"}},
			{Name: "pii", Kind: completions.GuardrailPII, Mode: completions.GuardrailPreCall, DefaultOn: true, Entities: []string{"email"}},
		}
	})
	vk := issue(t, s, `{"guardrails":["words"]}`)
	for _, key := range []string{testKey, vk.Key} {
		req, _ := http.NewRequest("GET", hs.URL+"/guardrails/list", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out litellmGuardrailList
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || len(out.Guardrails) != 2 {
			t.Fatalf("%d %+v %v", resp.StatusCode, out, err)
		}
		w, p := out.Guardrails[0], out.Guardrails[1]
		if w.Name != "words" || w.Params.Guardrail != "banned_words" || w.Params.Mode != "pre_call" || w.Params.DefaultOn || w.Info.Words != 2 {
			t.Errorf("words: %+v", w)
		}
		if p.Name != "pii" || !p.Params.DefaultOn || !slices.Equal(p.Params.Entities, []string{"email"}) {
			t.Errorf("pii: %+v", p)
		}
	}
	r := do(t, s, "GET", "/guardrails/list", testKey, "")
	if strings.Contains(r.raw, "forbidden") || strings.Contains(r.raw, "secret plan") {
		t.Fatalf("the banned words shown: %s", r.raw)
	}
}
