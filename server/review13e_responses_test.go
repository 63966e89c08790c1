package server

import (
	"encoding/json"
	"testing"
)

// TestReview13eResponseMetadataKept: OpenAI keeps a response's metadata (up to 16 pairs)
// and gives it back in the answer and in GET /v1/responses/{id}; the gateway answers
// "metadata": {} whatever the request sent, and the stored answer has lost it too.
func TestReview13eResponseMetadataKept(t *testing.T) {
	hs, _, _ := completionsServer(t)
	resp, b := do2(t, "POST", hs.URL+"/v1/responses", testKey, `{"model":"up/ok","input":"hi","metadata":{"ticket":"T-42"}}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	r := responseOf(t, b)
	if m, _ := r["metadata"].(map[string]any); m["ticket"] != "T-42" {
		t.Errorf("answer metadata %v, want the request's {\"ticket\":\"T-42\"}", r["metadata"])
	}
	_, b = do2(t, "GET", hs.URL+"/v1/responses/"+r["id"].(string), testKey, "", nil)
	var back struct {
		Metadata map[string]string `json:"metadata"`
	}
	json.Unmarshal(b, &back)
	if back.Metadata["ticket"] != "T-42" {
		t.Errorf("stored answer metadata %v, want the request's", back.Metadata)
	}
}
