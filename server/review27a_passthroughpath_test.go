package server

import (
	"net/http"
	"testing"
)

// TestReview27aPassThroughEncodedPathEscapes: a path whose dot segments or slashes are
// percent-encoded in any mix (".%2e", "%2e.", "%2F") is a 400 before any upstream call:
// the provider may decode them and reach a model or resource other than the one checked.
func TestReview27aPassThroughEncodedPathEscapes(t *testing.T) {
	hs, s, up := passThroughServer(t)
	vk := issue(t, s, `{"name":"narrow","models":["gemini/gemini-2.0-flash"]}`)
	for _, path := range []string{
		"/gemini/v1beta/models/gemini-2.0-flash/.%2e/gemini-2.5-pro:generateContent",
		"/gemini/v1beta/models/gemini-2.0-flash/%2E./gemini-2.5-pro:generateContent",
		"/gemini/v1beta/models/gemini-2.0-flash%2F..%2Fgemini-2.5-pro:generateContent",
	} {
		before := up.count()
		resp, b := sendPassThrough(t, "POST", hs.URL+path, `{}`, map[string]string{"x-goog-api-key": vk.Key})
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", path, resp.StatusCode, b)
		}
		if up.count() != before {
			t.Errorf("%s: the upstream was called with %s", path, up.last().path)
		}
	}
}
