package server

import (
	"encoding/json"
	"testing"
)

// TestReview13cBatchAnswersMatchTheirSchema: the OpenAPI document gives the batch and file
// objects' nullable members (in_progress_at, output_file_id, errors, expires_at, …) as
// plain "integer"/"string"/"object", but the answers carry null in them (OpenAI's shape,
// which the Go types render on purpose): a real answer fails its own documented schema, so
// clients generated from /api/v1/openapi.json reject it.
func TestReview13cBatchAnswersMatchTheirSchema(t *testing.T) {
	hs, _, _ := batchServer(t, &fakeOpenAIUpstream{}, 1, true) // not started: the batch stays validating
	check := documentedSchemas(t, hs.URL)
	_, f := uploadBatchFile(t, hs, testKey, "batch", chatLines("openai/ok"))
	_, _, b := call(t, "POST", hs.URL+"/v1/batches", testKey, `{"input_file_id":"`+f["id"].(string)+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`)
	var bm map[string]any
	json.Unmarshal(b, &bm)
	_, _, got := call(t, "GET", hs.URL+"/v1/batches/"+bm["id"].(string), testKey, "")
	check("/v1/batches/{batch_id}", "get", got)
}
