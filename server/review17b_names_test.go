package server

import (
	"net/http"
	"strings"
	"testing"
)

// WRONG: litellmNames ranges over a map literal (random order) and replaces the first
// quoted native field name found anywhere in the message, so the caller's own value can be
// rewritten: models ["name"] (a model group named "name") fails with
// `models[0]: "key_alias" is not a model…` and param key_alias on some runs, models[0]… on
// others. Fix: rewrite only the leading field name (the prefix before ':' or '['), or the
// quoted name in decodeExact's "field \"x\"" form, in a fixed order.
func TestReview17bLiteLLMNamesRewritesValues(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	for i := 0; i < 40; i++ {
		r := do(t, s, "POST", "/key/generate", testKey, `{"models":["name"]}`)
		e, _ := r.body["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if r.status != http.StatusBadRequest || !strings.Contains(msg, `"name"`) || e["param"] != "models" {
			t.Fatalf("run %d: %d %s", i, r.status, r.raw)
		}
	}
}
