package server

import (
	"net/http"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// TestSpecOperationsReadAnEmptyBodyAsNoFields: an empty body on the spec's own operations
// is a request that gives none of its fields, answered as {} is — the spec's message for
// the first missing field (optimize: 422 "agentopt requires input_url"; completions: 422
// Validation Error) — not a 400 the spec does not list for them.
func TestSpecOperationsReadAnEmptyBodyAsNoFields(t *testing.T) {
	e := optimizeServer(t, fakeAgentRunner{block: func(sandbox.Job) bool { return true }})
	want := e.call(t, "POST", "/api/v1/optimize", testKey, `{}`)
	got := e.call(t, "POST", "/api/v1/optimize", testKey, ``)
	if got.status != want.status || got.raw != want.raw || want.status != http.StatusUnprocessableEntity {
		t.Errorf("optimize, empty body: %d %s; {} gives %d %s", got.status, got.raw, want.status, want.raw)
	}
	_, s, _ := completionsServer(t)
	want = do(t, s, "POST", "/api/v1/completions", testKey, `{}`)
	got = do(t, s, "POST", "/api/v1/completions", testKey, ``)
	if got.status != want.status || got.raw != want.raw || got.body["error"] != "Validation Error" {
		t.Errorf("completions, empty body: %d %s; {} gives %d %s", got.status, got.raw, want.status, want.raw)
	}
	rt := routersServer(t)
	for _, path := range []string{"/api/v1/routers/train", "/api/v1/routers/predict"} {
		want = do(t, rt.h, "POST", path, testKey, `{}`)
		got = do(t, rt.h, "POST", path, testKey, ``)
		if got.status != want.status || got.raw != want.raw {
			t.Errorf("%s, empty body: %d %s; {} gives %d %s", path, got.status, got.raw, want.status, want.raw)
		}
	}
	ms, _ := modelSelectServer(t, nil)
	for _, path := range []string{"/api/v1/model-select", "/v1/modelSelect"} {
		wantCode, wantBody := postSelect(t, ms, path, testKey, `{}`)
		gotCode, gotBody := postSelect(t, ms, path, testKey, ``)
		if gotCode != wantCode || gotBody["message"] != wantBody["message"] {
			t.Errorf("%s, empty body: %d %v; {} gives %d %v", path, gotCode, gotBody, wantCode, wantBody)
		}
	}
}
