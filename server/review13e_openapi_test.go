package server

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestReview13eResponseObjectMatchesItsSchema: the response object of POST /v1/responses and
// GET /v1/responses/{id} always carries null in error, incomplete_details, instructions,
// max_output_tokens, temperature and top_p (OpenAI's shape), but the OpenAPI document gives
// them as plain object/string/integer/number: the answer fails its own documented schema, so
// a client generated from /api/v1/openapi.json rejects every answer (the same fault review
// 13c mended for the batch and file objects).
func TestReview13eResponseObjectMatchesItsSchema(t *testing.T) {
	hs, _, _ := completionsServer(t)
	check := documentedSchemas(t, hs.URL)
	resp, b := do2(t, "POST", hs.URL+"/v1/responses", testKey, `{"model":"up/ok","input":"hi"}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	check("/v1/responses", "post", b)
	id := responseOf(t, b)["id"].(string)
	_, b = do2(t, "GET", hs.URL+"/v1/responses/"+id, testKey, "", nil)
	check("/v1/responses/{response_id}", "get", b)
}

// TestReview13eOperationIDsUnique: OpenAPI requires every operationId to be unique, but
// the new /v1/conversations/{conversation_id} (GET, DELETE) get the ids of
// /api/v1/conversations/{conversation_id} (operationID drops "api" and "v1"), as
// /v1/completions and /api/v1/completions, /v1/modelSelect and /api/v1/model-select did
// already: code generators (openapi-generator, oapi-codegen) refuse or rename them.
func TestReview13eOperationIDsUnique(t *testing.T) {
	hs, _, _ := completionsServer(t)
	resp, err := http.Get(hs.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	seen := map[string]string{}
	for p, ops := range doc.Paths {
		for m, raw := range ops {
			var op struct {
				OperationID string `json:"operationId"`
			}
			if json.Unmarshal(raw, &op) != nil || op.OperationID == "" {
				continue
			}
			if prev, ok := seen[op.OperationID]; ok {
				t.Errorf("operationId %q is used by %s and %s %s", op.OperationID, prev, m, p)
			}
			seen[op.OperationID] = m + " " + p
		}
	}
}
