package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Lines logged with a request's context carry its request_id, once.
func TestRequestIDHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(RequestIDHandler(slog.NewJSONHandler(&buf, nil)))
	s, err := New(Config{Store: newTestStore(t), APIKeys: []string{testKey}, Logger: log}, func(s *Server) error {
		s.Handle(Route{Method: "GET", Path: "/api/v1/test/log"}, func(w http.ResponseWriter, r *http.Request) error {
			log.WarnContext(r.Context(), "inside the request", "model", "a/b")
			w.WriteHeader(http.StatusNoContent)
			return nil
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/api/v1/test/log", nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	rid := rec.Header().Get("X-Request-Id")
	found := 0
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if strings.Count(line, `"request_id"`) > 1 {
			t.Errorf("request_id twice: %s", line)
		}
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["request_id"] == rid && rid != "" {
			found++
		}
	}
	if found != 2 { // the handler's warning and the access line
		t.Errorf("%d lines carry request id %q:\n%s", found, rid, buf.String())
	}
	// A logger that holds a request_id of its own (With) keeps it, once.
	buf.Reset()
	withID := slog.New(RequestIDHandler(slog.NewJSONHandler(&buf, nil))).With("request_id", "mine")
	ctx := context.WithValue(context.Background(), requestInfoKey{}, &requestInfo{id: "from-ctx"})
	withID.InfoContext(ctx, "x")
	if strings.Count(buf.String(), "request_id") != 1 || !strings.Contains(buf.String(), `"request_id":"mine"`) {
		t.Errorf("With(request_id): %s", buf.String())
	}
}
