package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestReview13cBatchAnswersMatchTheirSchema: the OpenAPI document gives the batch and file
// objects' nullable members (in_progress_at, output_file_id, errors, expires_at, …) as
// plain "integer"/"string"/"object", but the answers carry null in them (OpenAI's shape,
// which the Go types render on purpose): a real answer fails its own documented schema, so
// clients generated from /api/v1/openapi.json reject it.
func TestReview13cBatchAnswersMatchTheirSchema(t *testing.T) {
	hs, _, _ := batchServer(t, &fakeOpenAIUpstream{}, 1, true) // not started: the batch stays validating
	resp, err := http.Get(hs.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]struct {
					Schema json.RawMessage `json:"schema"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	check := func(path, method, answer string) {
		t.Helper()
		s := doc.Paths[path][method].Responses["200"].Content["application/json"].Schema
		sv, err := jsonschema.UnmarshalJSON(strings.NewReader(string(s)))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("mem://s.json", sv); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile("mem://s.json")
		if err != nil {
			t.Fatal(err)
		}
		inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(answer))
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s %s: the answer does not match the documented schema: %v\n%.300s", method, path, err, answer)
		}
	}
	_, f := uploadBatchFile(t, hs, testKey, "batch", chatLines("openai/ok"))
	_, _, b := call(t, "POST", hs.URL+"/v1/batches", testKey, `{"input_file_id":"`+f["id"].(string)+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`)
	var bm map[string]any
	json.Unmarshal(b, &bm)
	_, _, got := call(t, "GET", hs.URL+"/v1/batches/"+bm["id"].(string), testKey, "")
	check("/v1/batches/{batch_id}", "get", string(got))
}
