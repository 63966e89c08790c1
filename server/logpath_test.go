package server

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// An artifact URL's token is its credential: access logs show the path without it.
func TestLogPathRedactsArtifactTokens(t *testing.T) {
	for in, want := range map[string]string{
		"/api/v1/artifacts/0123456789abcdef0123456789abcdef/agent.py": "/api/v1/artifacts/[redacted]/agent.py",
		"/api/v1/artifacts/0123456789abcdef":                          "/api/v1/artifacts/[redacted]",
		"/api/v1/artifacts/":                                          "/api/v1/artifacts/",
		"/api/v1/completions":                                         "/api/v1/completions",
		"/api/v1//artifacts/0123456789abcdef/agent.py":                "/api/v1/artifacts/[redacted]/agent.py",
		"/api/v1/./artifacts/0123456789abcdef/agent.py":               "/api/v1/artifacts/[redacted]/agent.py",
	} {
		if got := LogPath(in); got != want {
			t.Errorf("LogPath(%q) = %q, want %q", in, got, want)
		}
	}
	var logs bytes.Buffer
	s := testServer(t, Config{}, &logs)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/artifacts/0123456789abcdef0123456789abcdef/agent.py", nil))
	if strings.Contains(logs.String(), "0123456789abcdef") || !strings.Contains(logs.String(), "/api/v1/artifacts/[redacted]/agent.py") {
		t.Errorf("access log: %s", logs.String())
	}
}
