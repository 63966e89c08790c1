package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

const testKey = "test-key-123"

type echoRequest struct {
	Name  string  `json:"name" jsonschema:"required"`
	Count int     `json:"count"`
	Ratio float64 `json:"ratio"`
}

var errSecret = errors.New("db password is hunter2")

// testServer registers probe routes on top of the spine.
func testServer(t testing.TB, cfg Config, logBuf *bytes.Buffer) *Server {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store = newTestStore(t)
	}
	if cfg.APIKeys == nil {
		cfg.APIKeys = []string{testKey}
	}
	if logBuf != nil {
		cfg.Logger = slog.New(slog.NewJSONHandler(logBuf, nil))
	} else {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	probe := func(s *Server) error {
		s.Handle(Route{Method: "POST", Path: "/api/v1/test/echo", Request: echoRequest{}, Response: echoRequest{},
			Errors: map[int]string{http.StatusUnprocessableEntity: "a bad field: the message names it"}}, func(w http.ResponseWriter, r *http.Request) error {
			var req echoRequest
			if err := decodeJSON(r, &req, decodeOptions{}); err != nil {
				return err
			}
			if req.Name == "" {
				return Validation(http.StatusUnprocessableEntity, "name is required")
			}
			// The only side effect: store what was accepted.
			if err := store.PutJSON(r.Context(), s.Store(), store.Artifacts, "echo", req); err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, req)
			return nil
		})
		s.Handle(Route{Method: "POST", Path: "/api/v1/test/select", Request: echoRequest{},
			Errors: map[int]string{http.StatusBadRequest: "a bad field: the message names it"}}, func(w http.ResponseWriter, r *http.Request) error {
			var req echoRequest
			return decodeJSON(r, &req, decodeOptions{ValidationStatus: http.StatusBadRequest})
		})
		s.Handle(Route{Method: "GET", Path: "/api/v1/test/panic"}, func(w http.ResponseWriter, r *http.Request) error {
			panic("secret internals")
		})
		s.Handle(Route{Method: "GET", Path: "/api/v1/test/fail"}, func(w http.ResponseWriter, r *http.Request) error {
			return errSecret
		})
		whoami := func(w http.ResponseWriter, r *http.Request) error {
			writeJSON(w, 200, map[string]string{"owner": owner(r)})
			return nil
		}
		s.Handle(Route{Method: "GET", Path: "/api/v1/test/whoami"}, whoami)
		s.Handle(Route{Method: "GET", Path: "/api/v1/test/scoped", ScopedKeys: true}, whoami)
		return nil
	}
	s, err := New(cfg, probe)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type reply struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func do(t *testing.T, h http.Handler, method, path, key, body string) reply {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	out := reply{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	json.Unmarshal(rec.Body.Bytes(), &out.body)
	return out
}

func wantError(t *testing.T, r reply, status int, kind, msgPart string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.raw)
	}
	if r.body["error"] != kind {
		t.Fatalf("error = %v, want %q; body %s", r.body["error"], kind, r.raw)
	}
	msg, _ := r.body["message"].(string)
	if msg == "" || !strings.Contains(msg, msgPart) {
		t.Fatalf("message %q does not contain %q", msg, msgPart)
	}
}

func TestErrorStatuses(t *testing.T) {
	s := testServer(t, Config{MaxBodyBytes: 1024}, nil)
	cases := []struct {
		name, method, path, key, body string
		status                        int
		kind, msg                     string
	}{
		{"no key", "POST", "/api/v1/test/echo", "", `{"name":"a"}`, 401, KindUnauthorized, "API key"},
		{"wrong key", "POST", "/api/v1/test/echo", "nope", `{"name":"a"}`, 401, KindUnauthorized, "API key"},
		{"unknown api path without key", "GET", "/api/v1/nothing-here", "", "", 401, KindUnauthorized, "API key"},
		{"unknown api path", "GET", "/api/v1/nothing-here", testKey, "", 404, KindNotFound, "/api/v1/nothing-here"},
		{"unknown path outside api", "GET", "/nothing", "", "", 404, KindNotFound, "/nothing"},
		{"wrong method", "GET", "/api/v1/test/echo", testKey, "", 405, KindMethodNotAllow, "POST"},
		{"malformed json", "POST", "/api/v1/test/echo", testKey, `{"name":`, 400, KindBadRequest, "malformed JSON"},
		{"empty body", "POST", "/api/v1/test/echo", testKey, ``, 400, KindBadRequest, "empty"},
		{"trailing garbage", "POST", "/api/v1/test/echo", testKey, `{"name":"a"} {"name":"b"}`, 400, KindBadRequest, "malformed JSON"},
		{"wrong type", "POST", "/api/v1/test/echo", testKey, `{"name":"a","count":"three"}`, 422, KindValidation, `"count"`},
		{"not an object", "POST", "/api/v1/test/echo", testKey, `[1,2]`, 422, KindValidation, "object"},
		{"unknown field", "POST", "/api/v1/test/echo", testKey, `{"name":"a","colour":"red"}`, 422, KindValidation, `"colour"`},
		{"missing field", "POST", "/api/v1/test/echo", testKey, `{"count":1}`, 422, KindValidation, "name"},
		{"validation as 400", "POST", "/api/v1/test/select", testKey, `{"count":"x"}`, 400, KindBadRequest, `"count"`},
		{"too large", "POST", "/api/v1/test/echo", testKey, `{"name":"` + strings.Repeat("x", 2000) + `"}`, 413, KindTooLarge, "1024"},
		{"panic", "GET", "/api/v1/test/panic", testKey, "", 500, KindInternal, "request id"},
		{"internal error", "GET", "/api/v1/test/fail", testKey, "", 500, KindInternal, "request id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, s, c.method, c.path, c.key, c.body)
			wantError(t, r, c.status, c.kind, c.msg)
			if strings.Contains(r.raw, "hunter2") || strings.Contains(r.raw, "secret internals") {
				t.Fatalf("internals leaked: %s", r.raw)
			}
			if _, err := s.Store().Get(context.Background(), store.Artifacts, "echo"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("rejected request changed stored data")
			}
		})
	}
}

func TestTooLargeWithoutContentLength(t *testing.T) {
	s := testServer(t, Config{MaxBodyBytes: 100}, nil)
	req := httptest.NewRequest("POST", "/api/v1/test/echo", io.MultiReader(strings.NewReader(`{"name":"`), strings.NewReader(strings.Repeat("y", 500)+`"}`)))
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+testKey)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != 413 {
		t.Fatalf("status %d, body %s", rec.Code, rec.Body)
	}
}

func TestSuccessStoresAndBadInputKeepsData(t *testing.T) {
	s := testServer(t, Config{}, nil)
	r := do(t, s, "POST", "/api/v1/test/echo", testKey, `{"name":"first","count":2}`)
	if r.status != 200 || r.body["name"] != "first" {
		t.Fatalf("got %d %s", r.status, r.raw)
	}
	for _, bad := range []string{`{"name":`, `{"name":"x","count":"y"}`, `{"count":3}`, `{"name":"x","extra":1}`} {
		do(t, s, "POST", "/api/v1/test/echo", testKey, bad)
	}
	got, err := store.GetJSON[echoRequest](context.Background(), s.Store(), store.Artifacts, "echo")
	if err != nil || got.Name != "first" || got.Count != 2 {
		t.Fatalf("stored record changed: %+v %v", got, err)
	}
}

func TestPublicRoutes(t *testing.T) {
	s := testServer(t, Config{}, nil)
	r := do(t, s, "GET", "/healthz", "", "")
	if r.status != 200 || r.body["status"] != "ok" {
		t.Fatalf("healthz: %d %s", r.status, r.raw)
	}
	r = do(t, s, "GET", "/api/v1/openapi.json", "", "")
	if r.status != 200 {
		t.Fatalf("openapi: %d %s", r.status, r.raw)
	}
	if r.body["openapi"] != "3.1.0" {
		t.Fatalf("openapi version %v", r.body["openapi"])
	}
	paths := r.body["paths"].(map[string]any)
	echo, ok := paths["/api/v1/test/echo"].(map[string]any)["post"].(map[string]any)
	if !ok {
		t.Fatalf("echo route missing from document: %v", paths)
	}
	schema := echo["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	props := schema["properties"].(map[string]any)
	if _, ok := props["count"]; !ok {
		t.Fatalf("request schema lacks count: %v", schema)
	}
	if req, _ := schema["required"].([]any); len(req) != 1 || req[0] != "name" {
		t.Fatalf("required = %v", schema["required"])
	}
	// With a key it answers too.
	if r := do(t, s, "GET", "/api/v1/openapi.json", testKey, ""); r.status != 200 {
		t.Fatalf("openapi with key: %d", r.status)
	}
}

func TestStoredKeysAndOwners(t *testing.T) {
	st := newTestStore(t)
	s := testServer(t, Config{Store: st, APIKeys: []string{}}, nil)
	has, err := s.Auth().HasKeys(context.Background())
	if err != nil || has {
		t.Fatalf("HasKeys on empty = %v %v", has, err)
	}
	key, err := s.Auth().CreateKey(context.Background(), "first")
	if err != nil {
		t.Fatal(err)
	}
	es, _ := st.List(context.Background(), store.APIKeys, store.ListOptions{})
	if len(es) != 1 || strings.Contains(string(es[0].Value), key) || es[0].Key == key {
		t.Fatalf("key stored in clear: %+v", es)
	}
	r := do(t, s, "GET", "/api/v1/test/whoami", key, "")
	if r.status != 200 || !strings.HasPrefix(r.body["owner"].(string), "key_") {
		t.Fatalf("whoami: %d %s", r.status, r.raw)
	}
	key2, _ := s.Auth().CreateKey(context.Background(), "second")
	r2 := do(t, s, "GET", "/api/v1/test/whoami", key2, "")
	if r2.body["owner"] == r.body["owner"] {
		t.Fatal("two keys share an owner")
	}
	revoke := s.Auth().AddTemporaryKey("temp-key", "key_owner", "scope")
	if r := do(t, s, "GET", "/api/v1/test/scoped", "temp-key", ""); r.body["owner"] != "key_owner" {
		t.Fatalf("temporary key: %s", r.raw)
	}
	// A scoped key reaches only the routes that accept scoped keys.
	wantError(t, do(t, s, "GET", "/api/v1/test/whoami", "temp-key", ""), 403, KindForbidden, "limited in scope")
	revoke()
	if r := do(t, s, "GET", "/api/v1/test/scoped", "temp-key", ""); r.status != 401 {
		t.Fatalf("revoked key still works: %d", r.status)
	}
}

func TestAccessLogHasNoSecrets(t *testing.T) {
	var buf bytes.Buffer
	s := testServer(t, Config{}, &buf)
	buf.Reset() // the warning about the test's short key
	do(t, s, "POST", "/api/v1/test/echo?token=qz-query-secret", testKey, `{"name":"very private content"}`)
	do(t, s, "POST", "/api/v1/test/echo", "wrong-key-value", `{"name":"x"}`)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 access lines, got %d: %s", len(lines), buf.String())
	}
	var first map[string]any
	json.Unmarshal([]byte(lines[0]), &first)
	for _, f := range []string{"method", "path", "status", "duration_ms", "request_id"} {
		if _, ok := first[f]; !ok {
			t.Fatalf("access line lacks %s: %s", f, lines[0])
		}
	}
	if first["status"].(float64) != 200 {
		t.Fatalf("status logged %v", first["status"])
	}
	for _, secret := range []string{testKey, "wrong-key-value", "very private content", "qz-query-secret"} {
		if strings.Contains(buf.String(), secret) {
			t.Fatalf("log contains %q: %s", secret, buf.String())
		}
	}
}

// TestAccessLogQuietProbes: at the default level the access log leaves out the health
// probes and metrics scrapes that succeed (a load balancer's and Prometheus's, every few
// seconds), keeps the other requests, and keeps a probe that failed (a draining server).
func TestAccessLogQuietProbes(t *testing.T) {
	var buf bytes.Buffer
	s := testServer(t, Config{}, &buf)
	buf.Reset()
	for _, path := range []string{"/healthz", "/health/liveliness", "/health/readiness"} {
		do(t, s, "GET", path, "", "")
	}
	do(t, s, "POST", "/api/v1/test/echo", testKey, `{"name":"x"}`)
	s.Drain()
	do(t, s, "GET", "/healthz", "", "")
	var paths []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var l struct {
			Path   string
			Status int
		}
		json.Unmarshal([]byte(line), &l)
		paths = append(paths, l.Path+" "+strconv.Itoa(l.Status))
	}
	if got := strings.Join(paths, ", "); got != "/api/v1/test/echo 200, /healthz 503" {
		t.Errorf("logged %s; want the echo and the draining probe only", got)
	}
}

// /healthz answers 503 when the store does not answer (every request needs it), and while
// the server drains.
func TestHealthzReflectsStoreAndDraining(t *testing.T) {
	st := newTestStore(t)
	s := testServer(t, Config{Store: st}, nil)
	check := func(want int, status string) {
		t.Helper()
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("GET", "/healthz", nil))
		if w.Code != want || !strings.Contains(w.Body.String(), `"status":"`+status+`"`) {
			t.Errorf("healthz: %d %s, want %d %s", w.Code, w.Body, want, status)
		}
	}
	check(200, "ok")
	st.Close()
	check(503, "store unavailable")
	s2 := testServer(t, Config{}, nil)
	s2.Drain()
	w := httptest.NewRecorder()
	s2.ServeHTTP(w, httptest.NewRequest("GET", "/healthz", nil))
	if w.Code != 503 || !strings.Contains(w.Body.String(), "draining") {
		t.Errorf("draining healthz: %d %s", w.Code, w.Body)
	}
}
