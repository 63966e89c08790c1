package trainer

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/fetch"
)

// lockedBuffer is a bytes.Buffer safe for the service's goroutines to log into.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestDatasetURLCredentialsAreRedacted fails jobs whose dataset URLs carry user info and a
// presigned signature (a 404, a refused connection, a bad file, a bad row) and checks that
// neither the stored error_message nor the log holds the password or the signature.
func TestDatasetURLCredentialsAreRedacted(t *testing.T) {
	srv := files(t, map[string]string{
		"/notjson.json":  "<html>oops</html>",
		"/badmodel.json": `[{"problem":"q","correct_models":["a/b"]},{"problem":"q","correct_models":["gpt4"]}]`,
	})
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	secret := func(base, path string) string {
		return strings.Replace(base, "http://", "http://user:pass@", 1) + path + "?X-Amz-Signature=secret&X-Amz-Credential=secret"
	}
	var logs lockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := newService(t, nil, WithLogger(logger))
	for _, u := range []string{
		secret(srv.URL, "/missing.json"),
		secret(closedURL, "/gone.json"),
		secret(srv.URL, "/notjson.json"),
		secret(srv.URL, "/badmodel.json"),
	} {
		st := train(t, s, "k", u)
		if st.Status != StateFailed {
			t.Fatalf("%s: status %+v, want failed", fetch.Redact(u), st)
		}
		if strings.Contains(st.ErrorMessage, "pass") || strings.Contains(st.ErrorMessage, "secret") {
			t.Errorf("error_message leaks a credential: %s", st.ErrorMessage)
		}
		if !strings.Contains(st.ErrorMessage, "X-Amz-Signature=REDACTED") {
			t.Errorf("error_message %q does not name the redacted URL", st.ErrorMessage)
		}
	}
	out := logs.String()
	if !strings.Contains(out, "job failed") {
		t.Fatalf("log did not record the failures:\n%s", out)
	}
	if strings.Contains(out, "pass") || strings.Contains(out, "secret") {
		t.Errorf("log leaks a credential:\n%s", out)
	}
}

// TestSubmitValidationRedactsURL checks 422 messages about a bad URL do not echo credentials.
func TestSubmitValidationRedactsURL(t *testing.T) {
	s := newService(t, nil)
	for _, u := range []string{
		"ftp://user:pass@example.com/x.csv?sig=secret",
		"http://user:pass@[::1/x?sig=secret",
	} {
		_, err := s.Submit(t.Context(), "k", []string{u})
		if err == nil {
			t.Fatalf("Submit(%s) accepted", u)
		}
		if strings.Contains(err.Error(), "pass") || strings.Contains(err.Error(), "secret") {
			t.Errorf("validation error leaks a credential: %v", err)
		}
	}
}
