package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestReview29bModelUpdateIDNotString: POST /model/update with a model_info.id that is not
// a string (a number) is a 400 naming model_info.id that says it must be a string, not
// that it is missing.
func TestReview29bModelUpdateIDNotString(t *testing.T) {
	hs := deploymentServer(t, newTestStore(t), nil)
	resp, out := post(t, hs.URL+"/model/update", testKey, `{"model_info":{"id":5},"litellm_params":{"rpm":3}}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(out), `"param":"model_info.id"`) || strings.Contains(string(out), "is required") ||
		!strings.Contains(string(out), "must be a string") {
		t.Fatalf("/model/update model_info.id 5: %d %s, want a 400 naming model_info.id: must be a string", resp.StatusCode, out)
	}
	resp, out = post(t, hs.URL+"/model/update", testKey, `{"litellm_params":{"rpm":3}}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(out), "model_info.id: is required") {
		t.Fatalf("/model/update without model_info.id: %d %s", resp.StatusCode, out)
	}
}
