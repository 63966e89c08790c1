package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// TestStoredModelAnswersRedactAPIBase: a credential written into litellm_params.api_base
// (user:password@, ?key=, ?api-key=, ?code=) is in no answer of /model/new, PATCH
// /model/{id}/update or /model/update: each shows api_base as /model/info does.
func TestStoredModelAnswersRedactAPIBase(t *testing.T) {
	up, _ := deploymentUpstream(t, "up")
	hs := deploymentServer(t, newTestStore(t), nil)
	host := strings.TrimPrefix(up.URL, "http://")
	public := up.URL + "/v1"
	secretBases := []string{
		"http://user:SECRETpw@" + host + "/v1",
		public + "?key=SECRETk",
		public + "?api-key=SECRETa",
		public + "?code=SECRETc",
	}
	apiBase := func(what, out string) string {
		t.Helper()
		var m litellmStoredModel
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("%s: %v: %s", what, err, out)
		}
		b, _ := m.LiteLLMParams["api_base"].(string)
		return b
	}
	for i, base := range secretBases {
		id := "dep-" + string(rune('a'+i))
		what := "/model/new with " + base
		code, out := adminCall(t, hs, "POST", "/model/new", `{"model_name":"`+id+`","litellm_params":{"model":"openai/gpt-4o","api_key":"sk-x","api_base":"`+base+`"},"model_info":{"id":"`+id+`"}}`)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", what, code, out)
		}
		if strings.Contains(out, "SECRET") || apiBase(what, out) != public {
			t.Errorf("%s: answered api_base %q, want %q: %s", what, apiBase(what, out), public, out)
		}
		if info := modelInfoByID(t, hs, "/model/info")[id].LiteLLMParams.APIBase; info != apiBase(what, out) {
			t.Errorf("%s: the answer's api_base %q is not /model/info's %q", what, apiBase(what, out), info)
		}
		next := secretBases[(i+1)%len(secretBases)]
		for _, c := range []struct{ method, path, body string }{
			{"PATCH", "/model/" + id + "/update", `{"litellm_params":{"api_base":"` + next + `"}}`},
			{"POST", "/model/update", `{"model_info":{"id":"` + id + `"},"litellm_params":{"api_base":"` + base + `"}}`},
		} {
			code, out := adminCall(t, hs, c.method, c.path, c.body)
			if code != http.StatusOK || strings.Contains(out, "SECRET") || apiBase(c.path, out) != public {
				t.Errorf("%s %s: %d %s, want api_base %q and no credential", c.method, c.path, code, out, public)
			}
		}
	}
	// A bad api_base's refusal does not echo a credential either.
	code, out := adminCall(t, hs, "POST", "/model/new", `{"model_name":"bad","litellm_params":{"model":"openai/gpt-4o","api_base":"ftp://u:SECRETpw@h/x?key=SECRETk"}}`)
	if code != http.StatusBadRequest || !strings.Contains(out, "litellm_params.api_base") || strings.Contains(out, "SECRET") {
		t.Errorf("a bad api_base with a credential: %d %s", code, out)
	}
}

// TestModelInfoEntrySentBackKeepsAPIBaseCredential: an edit that sends back a stored
// deployment's /model/info entry whole (as LiteLLM's UI does) — api_base in the public form
// answers show, litellm_params.model as configured — keeps the credential sealed with it:
// the upstream still gets ?code=.
func TestModelInfoEntrySentBackKeepsAPIBaseCredential(t *testing.T) {
	codes := make(chan string, 4)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		codes <- r.URL.Query().Get("code")
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)
	}))
	t.Cleanup(up.Close)
	hs := deploymentServer(t, newTestStore(t), nil)
	if code, out := adminCall(t, hs, "POST", "/model/new", `{"model_name":"fn","litellm_params":{"model":"openai/gpt-4o","api_key":"sk-x","api_base":"`+up.URL+`/api?code=SECRETc"},"model_info":{"id":"fn-1"}}`); code != http.StatusOK {
		t.Fatalf("/model/new: %d %s", code, out)
	}
	chat := func(what string) {
		t.Helper()
		code, out := adminCall(t, hs, "POST", "/v1/chat/completions", `{"model":"fn","messages":[{"role":"user","content":"hi"}]}`)
		if code != http.StatusOK {
			t.Fatalf("%s: chat %d %s", what, code, out)
		}
		if got := <-codes; got != "SECRETc" {
			t.Errorf("%s: the upstream got code=%q, want SECRETc", what, got)
		}
	}
	chat("as added")
	_, out := adminCall(t, hs, "GET", "/model/info", "")
	var list struct {
		Data []struct {
			ModelName     string         `json:"model_name"`
			LiteLLMParams map[string]any `json:"litellm_params"`
			ModelInfo     map[string]any `json:"model_info"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("/model/info: %v %s", err, out)
	}
	i := slices.IndexFunc(list.Data, func(e struct {
		ModelName     string         `json:"model_name"`
		LiteLLMParams map[string]any `json:"litellm_params"`
		ModelInfo     map[string]any `json:"model_info"`
	}) bool {
		return e.ModelInfo["id"] == "fn-1"
	})
	if i < 0 {
		t.Fatalf("/model/info lacks fn-1: %s", out)
	}
	entry := list.Data[i]
	if entry.LiteLLMParams["model"] != "openai/gpt-4o" || entry.ModelInfo["litellm_provider"] != "openai" {
		t.Errorf("/model/info shows model %v, litellm_provider %v; want openai/gpt-4o and openai (as configured, not the provider entry of its own)", entry.LiteLLMParams["model"], entry.ModelInfo["litellm_provider"])
	}
	entry.LiteLLMParams["rpm"] = 100
	body, _ := json.Marshal(entry)
	if code, out := adminCall(t, hs, "POST", "/model/update", string(body)); code != http.StatusOK || strings.Contains(out, "SECRET") {
		t.Fatalf("/model/update with the /model/info entry: %d %s", code, out)
	}
	chat("after the entry was sent back")
}

// TestModelInfoShowsConfiguredModel: a config file's deployment with an api_base and
// api_key of its own is shown (/model/info, /model_group/info, /health) with the
// litellm_params.model the file gives it, not the provider entry the gateway made for it.
func TestModelInfoShowsConfiguredModel(t *testing.T) {
	up, _ := deploymentUpstream(t, "file")
	config := []byte("model_list:\n  - model_name: from-file\n    litellm_params:\n      model: openai/gpt-4o-mini\n      api_base: " + up.URL + "/v1\n      api_key: sk-file\n    model_info:\n      id: file-1\n")
	hs := deploymentServer(t, newTestStore(t), config)
	d := modelInfoByID(t, hs, "/model/info")["file-1"]
	if d.LiteLLMParams.Model != "openai/gpt-4o-mini" || d.ModelInfo.LiteLLMProvider != "openai" {
		t.Errorf("/model/info: model %q provider %q, want openai/gpt-4o-mini and openai", d.LiteLLMParams.Model, d.ModelInfo.LiteLLMProvider)
	}
	if code, out := adminCall(t, hs, "GET", "/model_group/info?model_group=from-file", ""); code != http.StatusOK || !strings.Contains(out, `"providers":["openai"]`) {
		t.Errorf("/model_group/info: %d %s, want providers [openai]", code, out)
	}
	if code, out := adminCall(t, hs, "GET", "/health?model=from-file", ""); code != http.StatusOK || !strings.Contains(out, `"model":"openai/gpt-4o-mini"`) {
		t.Errorf("/health: %d %s, want the endpoint's model openai/gpt-4o-mini", code, out)
	}
}

// TestModelRoutesNameTheFieldOfATypeError: a field of the wrong type on /model/new is a 400
// whose OpenAI-format param names it, as the other field errors do.
func TestModelRoutesNameTheFieldOfATypeError(t *testing.T) {
	hs := deploymentServer(t, newTestStore(t), nil)
	for body, param := range map[string]string{
		`{"model_name":5,"litellm_params":{"model":"openai/gpt-4o"}}`:                    "model_name",
		`{"model_name":"x","litellm_params":"a"}`:                                        "litellm_params",
		`{"model_name":"x","litellm_params":{"model":"openai/gpt-4o"},"model_info":[1]}`: "model_info",
		`{"model_name":"x","model_name":"y","litellm_params":{"model":"openai/gpt-4o"}}`: "model_name",
	} {
		code, out := adminCall(t, hs, "POST", "/model/new", body)
		var e struct {
			Error struct {
				Param *string `json:"param"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(out), &e); code != http.StatusBadRequest || e.Error.Param == nil || *e.Error.Param != param {
			t.Errorf("%s: %d %s, want a 400 with param %q", body, code, out, param)
		}
	}
}
