package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// The spec types max_model_depth, maxTokens and maxRetries as integers, and the OpenAPI
// document (JSON Schema 2020-12) says "type": "integer", under which 2.0 and 1e0 are
// integers. A client that writes an integral number with a fraction part or an exponent
// (Python's json.dumps of a float, a JavaScript client dividing) sends a valid request;
// the submit of an optimization job already took them. A real fraction stays refused
// (TestSpecModelSelection, TestSpecCompletions).

func TestReview22aCompletionsIntegralNumbers(t *testing.T) {
	hs, _, _ := completionsServer(t)
	url := hs.URL + "/api/v1/completions"
	msgs := `"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]`
	resp, b := post(t, url, testKey, `{`+msgs+`,"models":["up/ok"],"maxTokens":20.0,"maxRetries":1e0}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("maxTokens 20.0, maxRetries 1e0: %d %s", resp.StatusCode, b)
	}
	// maxRetries 1.0 is one retry: a failing model is tried twice.
	resp, b = post(t, url, testKey, `{`+msgs+`,"models":["up/down"],"maxRetries":1.0}`)
	var out struct {
		Attempts []map[string]any `json:"attempts"`
	}
	if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != http.StatusBadGateway || len(out.Attempts) != 2 {
		t.Fatalf("maxRetries 1.0 on a failing model: %d %s, want 502 with 2 attempts", resp.StatusCode, b)
	}
	for _, c := range []struct{ body, field, want string }{
		{`"maxTokens":10.5`, "maxTokens", "must be an integer"},
		{`"maxRetries":1.5`, "maxRetries", "must be an integer"},
		{`"maxRetries":11.0`, "maxRetries", "between 0 and 10"},
		{`"maxTokens":-1.0`, "maxTokens", "must not be negative"},
		{`"maxTokens":1e30`, "maxTokens", "out of range"},
	} {
		resp, b := post(t, url, testKey, `{`+msgs+`,"models":["up/ok"],`+c.body+`}`)
		var e map[string]any
		_ = json.Unmarshal(b, &e)
		m, _ := e["message"].(string)
		if resp.StatusCode != http.StatusUnprocessableEntity || e["error"] != "Validation Error" || !specNamesField(m, c.field) || !strings.Contains(m, c.want) {
			t.Errorf("%s: %d %s, want 422 naming %s with %q", c.body, resp.StatusCode, b, c.field, c.want)
		}
	}
}
