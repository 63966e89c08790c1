package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
)

// An unknown pref_ preference_id answers 404 naming the field even with a timeout too short
// for any ranking and a default: the default answers only a selection that could not
// finish, never a request naming something this key does not own.
func TestModelSelectUnknownPreferenceWithTinyTimeout(t *testing.T) {
	ts, _ := modelSelectServer(t, nil)
	body := `{"messages":[{"role":"user","content":"hi"}],"llm_providers":["openai/gpt-4o","openai/gpt-4o-mini"],` +
		`"timeout":1e-9,"default":"openai/gpt-4o","preference_id":"pref_000000000000000000000000"}`
	status, out := postSelect(t, ts, "/api/v1/model-select", testKey, body)
	msg, _ := out["message"].(string)
	if status != http.StatusNotFound || !strings.HasPrefix(msg, "preference_id") {
		t.Fatalf("%d %v; want 404 naming preference_id", status, out)
	}
}

// A default the context_length filter removed is not answered when the selection cannot
// finish: the best remaining candidate by the prior is, marked default_replaced, and the
// OpenAPI description of default says so.
func TestModelSelectUnfitDefaultIsReplaced(t *testing.T) {
	ts, _ := modelSelectServer(t, nil)
	body := `{"messages":[{"role":"user","content":"` + strings.Repeat("word ", 200) + `"}],` +
		`"llm_providers":[{"provider":"acme","model":"small","context_length":10},{"provider":"acme","model":"big","context_length":100000}],` +
		`"timeout":1e-9,"default":"acme/small"}`
	status, out := postSelect(t, ts, "/api/v1/model-select", testKey, body)
	provs, _ := out["providers"].([]any)
	if status != http.StatusOK || out["llm_label"] != "acme/big" || len(provs) != 1 ||
		provs[0].(map[string]any)["score_source"] != routing.SourceDefaultReplaced {
		t.Fatalf("%d %v; want acme/big alone with score_source default_replaced", status, out)
	}
	resp, err := http.Get(ts.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(doc), "the remaining candidate with the best prior answers instead (score_source default_replaced)") {
		t.Error("the OpenAPI description of default does not say what answers for a default the filters removed")
	}
}
