package server

import (
	"encoding/json"
	"testing"
)

// OpenAI's 404 for GET /v1/models/{id} of an unknown model names the path's model as its
// param ("param": "model"), and its message names the id asked for.
func TestReview22pUnknownModelParam(t *testing.T) {
	hs, _, _ := completionsServer(t)
	for _, id := range []string{"openai/gpt-4o", "no-such-model"} {
		resp, b := do2(t, "GET", hs.URL+"/v1/models/"+id, testKey, "", nil)
		wantOpenAIError(t, id, resp, b, 404, "invalid_request_error", "model_not_found")
		var e struct {
			Error struct {
				Message string  `json:"message"`
				Param   *string `json:"param"`
			} `json:"error"`
		}
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		if e.Error.Param == nil || *e.Error.Param != "model" {
			t.Errorf("%s: param = %v, want \"model\": %s", id, e.Error.Param, b)
		}
		if want := `The model "` + id + `" does not exist or no configured provider serves it.`; e.Error.Message != want {
			t.Errorf("%s: message = %q, want %q", id, e.Error.Message, want)
		}
	}
}
