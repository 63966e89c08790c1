package server

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/optimizer"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
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

// TestArtifactReadFailureLogsNoToken: a download whose read fails in the store (here a
// record that does not decode, whose error names its key) is a 500 whose log line names
// neither the path's token nor the key's: the token is the download's credential.
func TestArtifactReadFailureLogsNoToken(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	var logs bytes.Buffer
	s := testServer(t, Config{}, &logs)
	quiet := slog.New(slog.DiscardHandler)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: "http://127.0.0.1:1/v1", APIKey: testKey}))
	proposer, err := optimizer.NewLLMProposer(reg, "openai/ok", nil)
	if err != nil {
		t.Fatal(err)
	}
	opt, err := optimizer.New(s.Store(), fakeAgentRunner{}, proposer, optimizer.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	if err := Optimizer(opt)(s); err != nil {
		t.Fatal(err)
	}
	if err := s.Store().Put(context.Background(), store.Artifacts, "optimizer/"+token, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/artifacts/"+token+"/agent.py", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d %s, want 500", rec.Code, rec.Body)
	}
	if !strings.Contains(logs.String(), "internal error") {
		t.Fatalf("no internal error logged: %s", logs.String())
	}
	if strings.Contains(logs.String(), token) || strings.Contains(rec.Body.String(), token) {
		t.Errorf("the token reached the log or the answer:\n%s\n%s", logs.String(), rec.Body)
	}
}
