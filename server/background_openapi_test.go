package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOpenAPIBackgroundResponses: the OpenAPI document describes background on POST
// /v1/responses (request and response) and the cancel route's answers.
func TestOpenAPIBackgroundResponses(t *testing.T) {
	_, s, _ := completionsServer(t)
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(s.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	create, _ := json.Marshal(doc.Paths["/v1/responses"]["post"])
	cancel, _ := json.Marshal(doc.Paths["/v1/responses/{response_id}/cancel"]["post"])
	if strings.Count(string(create), `"background"`) < 2 || !strings.Contains(string(cancel), "Cannot cancel a synchronous response.") {
		t.Fatalf("background is not documented: create %d mentions, cancel %s", strings.Count(string(create), `"background"`), cancel)
	}
}

// TestOpenAPIBackgroundStreamParams: GET /v1/responses/{response_id} documents stream and
// starting_after, and the 400 that names them.
func TestOpenAPIBackgroundStreamParams(t *testing.T) {
	_, s, _ := completionsServer(t)
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(s.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	get, _ := json.Marshal(doc.Paths["/v1/responses/{response_id}"]["get"])
	for _, want := range []string{`"name":"stream"`, `"name":"starting_after"`, "text/event-stream", `"400"`} {
		if !strings.Contains(string(get), want) {
			t.Fatalf("GET /v1/responses/{response_id} lacks %s: %s", want, get)
		}
	}
}
