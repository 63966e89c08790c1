package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// documentedSchemas returns a check that an answer matches the 200 schema the server at
// baseURL documents for path and method in its OpenAPI document.
func documentedSchemas(t *testing.T, baseURL string) func(path, method string, answer []byte) {
	t.Helper()
	resp, err := http.Get(baseURL + "/api/v1/openapi.json")
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
	return func(path, method string, answer []byte) {
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
		inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(string(answer)))
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s %s: the answer does not match the documented schema: %v\n%.300s", method, path, err, answer)
		}
	}
}
