package server

import (
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

func TestReview22aModelSelectIntegralNumber(t *testing.T) {
	ts, _ := modelSelectServer(t, nil)
	msg := `"messages":[{"role":"user","content":"hi"}]`
	cand := `"llm_providers":[{"name":"openai/gpt-4o"},{"name":"openai/gpt-4o-mini"}]`
	for _, depth := range []string{"1.0", "1e0", "10E-1"} {
		for _, path := range []string{"/api/v1/model-select", "/v1/modelSelect"} {
			status, body := postSelect(t, ts, path, testKey, `{`+msg+`,`+cand+`,"max_model_depth":`+depth+`}`)
			if status != http.StatusOK {
				t.Fatalf("%s max_model_depth %s: %d %v", path, depth, status, body)
			}
			if provs, _ := body["providers"].([]any); len(provs) != 1 {
				t.Fatalf("%s max_model_depth %s: %d ranked providers, want 1: %v", path, depth, len(provs), body)
			}
		}
	}
	for _, c := range []struct{ depth, want string }{
		{"1.5", "must be an integer"},
		{"0.0", "must be at least 1"},
		{"2147483648.0", "must be at most 2147483647"},
		{"1e400", "max_model_depth"},
	} {
		status, body := postSelect(t, ts, "/api/v1/model-select", testKey, `{`+msg+`,`+cand+`,"max_model_depth":`+c.depth+`}`)
		m, _ := body["message"].(string)
		if status != http.StatusBadRequest || !specNamesField(m, "max_model_depth") || !strings.Contains(m, c.want) {
			t.Errorf("max_model_depth %s: %d %q, want 400 naming max_model_depth with %q", c.depth, status, m, c.want)
		}
	}
}
