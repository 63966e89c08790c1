package server

import (
	"crypto/sha256"
	"net/http"
	"testing"
)

// Routes without wildcards are called without a second mux match; wildcard routes, and
// paths the mux would redirect, still go through the mux. Either way the handler sees the
// same request: pattern, path values, caller and request id.
func TestDispatchDirectAndThroughMux(t *testing.T) {
	type seen struct{ pattern, id, owner, rid string }
	var got seen
	probe := func(s *Server) error {
		h := func(w http.ResponseWriter, r *http.Request) error {
			got = seen{r.Pattern, r.PathValue("id"), owner(r), requestID(r.Context())}
			writeJSON(w, http.StatusOK, map[string]string{"ok": "yes"})
			return nil
		}
		s.Handle(Route{Method: "GET", Path: "/api/v1/test/items"}, h)
		s.Handle(Route{Method: "GET", Path: "/api/v1/test/items/{id}"}, h)
		s.Handle(Route{Method: "GET", Path: "/api/v1/test/tree/"}, h)
		return nil
	}
	s, err := New(Config{Store: testServer(t, Config{}, nil).Store(), APIKeys: []string{testKey}}, probe)
	if err != nil {
		t.Fatal(err)
	}
	wantOwner := ownerOf(sha256.Sum256([]byte(testKey)))

	r := do(t, s, "GET", "/api/v1/test/items", testKey, "")
	if r.status != 200 || got.pattern != "GET /api/v1/test/items" || got.id != "" || got.owner != wantOwner || got.rid == "" || r.header.Get("X-Request-Id") != got.rid {
		t.Fatalf("plain route: status %d, handler saw %+v (owner want %s), X-Request-Id %q", r.status, got, wantOwner, r.header.Get("X-Request-Id"))
	}
	got = seen{}
	r = do(t, s, "GET", "/api/v1/test/items/a%2Fb", testKey, "")
	if r.status != 200 || got.pattern != "GET /api/v1/test/items/{id}" || got.id != "a/b" || got.owner != wantOwner {
		t.Fatalf("wildcard route: status %d, handler saw %+v", r.status, got)
	}
	got = seen{}
	r = do(t, s, "GET", "/api/v1/test/tree/x/y", testKey, "")
	if r.status != 200 || got.pattern != "GET /api/v1/test/tree/" {
		t.Fatalf("subtree route: status %d, handler saw %+v", r.status, got)
	}
	// Non-canonical paths are redirected by the mux, not served.
	got = seen{}
	r = do(t, s, "GET", "/api/v1/test/../test/items", testKey, "")
	if r.status/100 != 3 || got != (seen{}) {
		t.Fatalf("unclean path: status %d, handler saw %+v", r.status, got)
	}
	r = do(t, s, "GET", "/api/v1/test/tree", testKey, "")
	if r.status/100 != 3 || got != (seen{}) {
		t.Fatalf("subtree without slash: status %d, handler saw %+v", r.status, got)
	}
	// Without a key nothing is called.
	r = do(t, s, "GET", "/api/v1/test/items", "", "")
	if r.status != http.StatusUnauthorized || got != (seen{}) {
		t.Fatalf("no key: status %d, handler saw %+v", r.status, got)
	}
}
