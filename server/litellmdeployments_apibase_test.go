package server

import (
	"encoding/json"
	"net/http"
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
