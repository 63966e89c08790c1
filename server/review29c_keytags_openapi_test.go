package server

import (
	"encoding/json"
	"testing"
)

// TestReview29cOpenAPIKeyTags: /key/generate, /key/update and /key/regenerate take tags
// (LiteLLM's key-level tags, since key tags were read), and the OpenAPI document says so:
// their request body documented tags nowhere, so a client generated from the document
// could not send them.
func TestReview29cOpenAPIKeyTags(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]struct {
					Schema struct {
						Properties map[string]json.RawMessage `json:"properties"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(s.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/key/generate", "/key/update", "/key/regenerate"} {
		props := doc.Paths[path]["post"].RequestBody.Content["application/json"].Schema.Properties
		if len(props) == 0 {
			t.Fatalf("%s: no request body properties documented", path)
		}
		if _, ok := props["tags"]; !ok {
			t.Errorf("%s: tags is not documented", path)
		}
	}
}
