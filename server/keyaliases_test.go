package server

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestKeyAliases: a key's aliases (/key/generate aliases, LiteLLM's key aliases) send its
// requests naming one to the model it stands for — the key's models checked against that
// model, as LiteLLM resolves an alias before its model check — while another key naming
// the alias gets nothing; /key/info shows them, /key/update replaces them, null removes
// them, and an alias standing for a model the server does not route to is a 400 naming
// aliases.
func TestKeyAliases(t *testing.T) {
	up := &fakeOpenAIUpstream{}
	hs, s := keysServerWith(t, nil, up, Config{APIKeys: []string{testKey, completionsOtherKey}})
	r := do(t, s, "POST", "/key/generate", testKey, `{"models":["openai/ok"],"aliases":{"my-name":"openai/ok","cheap":"openai/other"}}`)
	if r.status != 200 {
		t.Fatalf("/key/generate: %d %s", r.status, r.raw)
	}
	key, id := r.body["key"].(string), r.body["token"].(string)
	if info := do(t, s, "GET", "/key/info?key="+id, testKey, ""); !strings.Contains(info.raw, `"aliases":{"cheap":"openai/other","my-name":"openai/ok"}`) {
		t.Errorf("/key/info: %s", info.raw)
	}
	resp, body := chatWith(t, hs, key, "my-name")
	if resp.StatusCode != 200 || !strings.Contains(string(body), "Hello from ok") {
		t.Fatalf("the alias my-name: %d %s", resp.StatusCode, body)
	}
	// cheap stands for a model the key's models do not allow: refused as that model is.
	resp, body = chatWith(t, hs, key, "cheap")
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "openai/other") {
		t.Errorf("the alias cheap (openai/other, not among the key's models): %d %s", resp.StatusCode, body)
	}
	other := issue(t, s, `{}`)
	if resp, body := chatWith(t, hs, other.Key, "my-name"); resp.StatusCode == 200 {
		t.Errorf("another key naming my-name: %d %s, want a refusal (not its alias)", resp.StatusCode, body)
	}
	// The native view, and /key/update replacing the map whole.
	if vk := keyInfoOf(t, s, testKey, "/api/v1/keys/"+id); vk.Aliases["my-name"] != "openai/ok" {
		t.Errorf("/api/v1/keys: aliases %v", vk.Aliases)
	}
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+id+`","aliases":{"fast":"openai/ok"}}`); r.status != 200 || !strings.Contains(r.raw, `"aliases":{"fast":"openai/ok"}`) {
		t.Fatalf("/key/update aliases: %d %s", r.status, r.raw)
	}
	if resp, body := chatWith(t, hs, key, "fast"); resp.StatusCode != 200 {
		t.Errorf("the new alias fast: %d %s", resp.StatusCode, body)
	}
	if resp, _ := chatWith(t, hs, key, "my-name"); resp.StatusCode == 200 {
		t.Error("the replaced alias my-name still answers")
	}
	r = do(t, s, "POST", "/key/update", testKey, `{"key":"`+id+`","aliases":{"x":"nope/none"}}`)
	if e, _ := r.body["error"].(map[string]any); r.status != 400 || e["param"] != "aliases" || !strings.Contains(r.raw, `aliases[\"x\"]`) {
		t.Errorf("an alias of an unrouted model: %d %s, want 400 naming aliases", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+id+`","aliases":null}`); r.status != 200 || !strings.Contains(r.raw, `"aliases":{}`) {
		t.Errorf("/key/update aliases null: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "PATCH", "/api/v1/keys/"+id, testKey, `{"aliases":{"a":"*"}}`); r.status != 422 || !strings.Contains(r.raw, "pattern") {
		t.Errorf("PATCH an alias of a pattern: %d %s", r.status, r.raw)
	}
}

// TestAliasedRequestForms: the request's model is rewritten wherever a surface takes it —
// the JSON body's top-level model only (a nested "model" and the rest of the body as they
// were), a multipart form's model field (the file part unchanged), the Gemini API's path
// and the realtime query — and a request naming no alias is left as it is.
func TestAliasedRequestForms(t *testing.T) {
	aliases := map[string]string{"mine": "openai/ok"}
	body := `{"messages":[{"role":"user","content":"x","model":"mine"}], "model" : "mine", "n":1}`
	r, stop := aliasedRequest(httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body)), aliases)
	got, _ := io.ReadAll(r.Body)
	stop()
	if want := `{"messages":[{"role":"user","content":"x","model":"mine"}], "model" : "openai/ok", "n":1}`; string(got) != want || r.ContentLength != int64(len(want)) {
		t.Errorf("JSON: %s (length %d), want %s", got, r.ContentLength, want)
	}
	r, stop = aliasedRequest(httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(`{"model":"other"}`)), aliases)
	if got, _ := io.ReadAll(r.Body); string(got) != `{"model":"other"}` {
		t.Errorf("JSON of no alias: %s", got)
	}
	stop()
	// A model given twice: decoding takes the last, and so does the rewrite.
	r, stop = aliasedRequest(httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(`{"model":"other","model":"mine"}`)), aliases)
	if got, _ := io.ReadAll(r.Body); string(got) != `{"model":"other","model":"openai/ok"}` {
		t.Errorf("JSON with model twice: %s", got)
	}
	stop()

	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	fw, _ := mw.CreateFormFile("file", "a.wav")
	fw.Write([]byte("RIFF....audio"))
	mw.WriteField("model", "mine")
	mw.Close()
	req := httptest.NewRequest("POST", "/v1/audio/transcriptions", &form)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	r, stop = aliasedRequest(req, aliases)
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		t.Fatal(err)
	}
	f, _, err := r.FormFile("file")
	if err != nil {
		t.Fatal(err)
	}
	audio, _ := io.ReadAll(f)
	if r.FormValue("model") != "openai/ok" || string(audio) != "RIFF....audio" {
		t.Errorf("form: model %q, file %q", r.FormValue("model"), audio)
	}
	stop()

	req = httptest.NewRequest("POST", "/v1beta/models/mine:generateContent", strings.NewReader(`{}`))
	req.SetPathValue("model", "models/mine:generateContent")
	if r, stop = aliasedRequest(req, aliases); r.PathValue("model") != "models/openai/ok:generateContent" {
		t.Errorf("Gemini path: %q", r.PathValue("model"))
	}
	stop()
	if r, _ = aliasedRequest(httptest.NewRequest("GET", "/v1/realtime?model=mine", nil), aliases); r.URL.Query().Get("model") != "openai/ok" {
		t.Errorf("realtime query: %q", r.URL.RawQuery)
	}
}

// TestKeyAliasesOnCountingRoutes: a key's alias is the model it stands for on the routes
// that count or price a request without calling a model — /utils/token_counter (its
// request_model still the name asked), /spend/calculate (priced as that model) and
// /v1/messages/count_tokens — where it was refused as a model the key may not call.
func TestKeyAliasesOnCountingRoutes(t *testing.T) {
	hs, s := keysServerWith(t, nil, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey}})
	vk := issue(t, s, `{"models":["openai/ok"],"aliases":{"mine":"openai/ok"}}`)
	post := func(path, body string) map[string]any {
		t.Helper()
		resp, b := do2(t, "POST", hs.URL+path, vk.Key, body, nil)
		var out map[string]any
		if err := json.Unmarshal(b, &out); resp.StatusCode != 200 || err != nil {
			t.Fatalf("%s %s: %d %s", path, body, resp.StatusCode, b)
		}
		return out
	}
	const messages = `"messages":[{"role":"user","content":"How many tokens is this question?"}]`
	for _, path := range []string{tokenCounterPath, spendCalculatePath, "/v1/messages/count_tokens"} {
		aliased := post(path, `{"model":"mine","max_tokens":10,`+messages+`}`)
		direct := post(path, `{"model":"openai/ok","max_tokens":10,`+messages+`}`)
		for _, field := range []string{"total_tokens", "cost", "input_tokens"} {
			if v, ok := direct[field]; ok && (aliased[field] != v || v == float64(0)) {
				t.Errorf("%s: %s %v for the alias, %v for openai/ok", path, field, aliased[field], v)
			}
		}
		if path == tokenCounterPath && (aliased["request_model"] != "mine" || aliased["model_used"] != direct["model_used"]) {
			t.Errorf("token counter: request_model %v model_used %v, want mine and %v", aliased["request_model"], aliased["model_used"], direct["model_used"])
		}
	}
	got := post(spendCalculatePath, `{"model":"mine","completion_response":{"model":"ok","usage":{"prompt_tokens":1000,"completion_tokens":100}}}`)
	if c, _ := got["cost"].(float64); math.Abs(c-(1000*0.001+100*0.002)) > 1e-9 {
		t.Errorf("/spend/calculate of an answer for the alias: cost %v, want 1.2", got["cost"])
	}
	// Another key has no such alias: mine is no model of its.
	other := issue(t, s, `{"models":["openai/ok"]}`)
	if resp, b := do2(t, "POST", hs.URL+tokenCounterPath, other.Key, `{"model":"mine","prompt":"hi"}`, nil); resp.StatusCode == 200 {
		t.Errorf("another key's token count of mine: %d %s, want a refusal", resp.StatusCode, b)
	}
}

// TestKeyAliasesOnNativeCompletions: a key's aliases stand for their models on the native
// POST /api/v1/completions too — each entry of models and of fallback_models — where they
// were refused with 422 (not provider/model); the key's models are checked against the
// models they stand for, and another key naming the alias is still refused.
func TestKeyAliasesOnNativeCompletions(t *testing.T) {
	// A fake upstream on which ok2 is down.
	up := &fakeOpenAIUpstream{}
	var asked []string
	var mu sync.Mutex
	down := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m struct{ Model string }
		json.Unmarshal(b, &m)
		mu.Lock()
		asked = append(asked, m.Model)
		mu.Unlock()
		if m.Model == "ok2" {
			http.Error(w, `{"error":{"message":"overloaded","type":"server_error"}}`, http.StatusServiceUnavailable)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		up.ServeHTTP(w, r)
	})
	hs, s := keysServerWith(t, nil, down, Config{APIKeys: []string{testKey}})
	vk := issue(t, s, `{"models":["openai/ok","openai/ok2"],"aliases":{"mine":"openai/ok","flaky":"openai/ok2","cheap":"openai/other"}}`)
	const messages = `"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]`
	native := func(key, body string) (*http.Response, []byte) {
		t.Helper()
		return do2(t, "POST", hs.URL+"/api/v1/completions", key, body, nil)
	}
	if resp, b := native(vk.Key, `{"models":["mine"],`+messages+`}`); resp.StatusCode != 200 || !strings.Contains(string(b), "Hello from ok") {
		t.Fatalf("models [mine]: %d %s", resp.StatusCode, b)
	}
	// flaky (openai/ok2) fails; the fallback, named by its alias, answers.
	mu.Lock()
	asked = nil
	mu.Unlock()
	if resp, b := native(vk.Key, `{"models":["flaky"],"fallback_models":["mine"],"maxRetries":0,`+messages+`}`); resp.StatusCode != 200 || !strings.Contains(string(b), "Hello from ok") {
		t.Fatalf("models [flaky] fallback_models [mine]: %d %s", resp.StatusCode, b)
	}
	mu.Lock()
	if !slices.Contains(asked, "ok2") || asked[len(asked)-1] != "ok" {
		t.Errorf("upstream asked for %v, want ok2 then ok", asked)
	}
	mu.Unlock()
	// An alias beside a model in models.
	if resp, b := native(vk.Key, `{"models":["openai/ok2","mine"],"maxRetries":0,`+messages+`}`); resp.StatusCode != 200 || !strings.Contains(string(b), "Hello from ok") {
		t.Fatalf("models [openai/ok2 mine]: %d %s", resp.StatusCode, b)
	}
	// cheap stands for a model the key may not call: refused as that model.
	if resp, b := native(vk.Key, `{"models":["cheap"],`+messages+`}`); resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "openai/other") {
		t.Errorf("models [cheap] (openai/other, not among the key's models): %d %s", resp.StatusCode, b)
	}
	other := issue(t, s, `{"models":["openai/ok"]}`)
	if resp, b := native(other.Key, `{"models":["mine"],`+messages+`}`); resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(b), "models[0]") {
		t.Errorf("another key naming mine: %d %s, want the 422 naming models[0]", resp.StatusCode, b)
	}
}

// TestAliasedJSONLists: the native route's models and fallback_models have each entry
// naming an alias rewritten, the others and the rest of the body kept byte for byte; a
// field of another type is left for the handler to refuse.
func TestAliasedJSONLists(t *testing.T) {
	aliases := map[string]string{"mine": "openai/ok", "x": "openai/ok2"}
	for in, want := range map[string]string{
		`{"models": ["a/b", "mine"] ,"fallback_models":["x"],"n":1}`: `{"models": ["a/b","openai/ok"] ,"fallback_models":["openai/ok2"],"n":1}`,
		`{"fallback_models":["mine"],"model":"x"}`:                   `{"fallback_models":["openai/ok"],"model":"openai/ok2"}`,
		`{"models":["a/b"],"fallback_models":"mine"}`:                `{"models":["a/b"],"fallback_models":"mine"}`,
		`{"models":[1,"mine"]}`:                                      `{"models":[1,"mine"]}`,
		`{"models":["mine"],"models":["a/b"]}`:                       `{"models":["mine"],"models":["a/b"]}`,
	} {
		got, ok := aliasedJSON([]byte(in), aliases)
		if string(got) != want || ok != (want != in) {
			t.Errorf("%s: %s (%v), want %s", in, got, ok, want)
		}
	}
}

// TestKeyAliasesNotListed: as on LiteLLM's proxy, whose /v1/models lists the key's, its
// team's or the proxy's models (get_available_models_for_user) and never the key's aliases,
// GET /v1/models answers the key's models without its aliases and GET /v1/models/{alias} is
// a 404, though a request naming the alias is served.
func TestKeyAliasesNotListed(t *testing.T) {
	hs, s := keysServerWith(t, nil, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey}})
	vk := issue(t, s, `{"models":["openai/ok"],"aliases":{"mine":"openai/ok"}}`)
	resp, b := do2(t, "GET", hs.URL+"/v1/models", vk.Key, "", nil)
	var list openAIModelList
	if err := json.Unmarshal(b, &list); resp.StatusCode != 200 || err != nil {
		t.Fatalf("/v1/models: %d %s", resp.StatusCode, b)
	}
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	if !slices.Equal(ids, []string{"openai/ok"}) {
		t.Errorf("/v1/models of the key: %v, want [openai/ok] (its models, not its alias mine)", ids)
	}
	if resp, b := do2(t, "GET", hs.URL+"/v1/models/mine", vk.Key, "", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("/v1/models/mine: %d %s, want 404", resp.StatusCode, b)
	}
	if resp, b := chatWith(t, hs, vk.Key, "mine"); resp.StatusCode != 200 {
		t.Errorf("a request naming mine: %d %s", resp.StatusCode, b)
	}
}

// TestAliasedFormModelTooLong: a multipart form's model field over maxFormModelBytes, from
// a key with aliases (whose forms are rewritten as they are read), is a 400 naming model on
// each form route — it was cut to 4096 bytes and sent on as another name.
func TestAliasedFormModelTooLong(t *testing.T) {
	hs, s := keysServerWith(t, nil, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey}})
	vk := issue(t, s, `{"aliases":{"mine":"openai/ok"}}`)
	for _, tc := range []struct{ path, file string }{{"/v1/audio/transcriptions", "file"}, {"/v1/images/edits", "image"}} {
		var form bytes.Buffer
		mw := multipart.NewWriter(&form)
		mw.WriteField("model", strings.Repeat("m", maxFormModelBytes+1))
		fw, _ := mw.CreateFormFile(tc.file, "a.wav")
		fw.Write([]byte("RIFF....audio"))
		mw.WriteField("prompt", "p")
		mw.Close()
		resp, b := do2(t, "POST", hs.URL+tc.path, vk.Key, form.String(), map[string]string{"Content-Type": mw.FormDataContentType()})
		var e struct {
			Error struct{ Param string } `json:"error"`
		}
		json.Unmarshal(b, &e)
		if resp.StatusCode != http.StatusBadRequest || e.Error.Param != "model" || !strings.Contains(string(b), "bytes") {
			t.Errorf("%s: a %d-byte model: %d %s, want 400 naming model", tc.path, maxFormModelBytes+1, resp.StatusCode, b)
		}
	}
}
