package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// moderationOrChatUpstream answers OpenAI's /v1/moderations (flagged when the input says
// "kill") and passes everything else to fakeOpenAIUpstream.
type moderationOrChatUpstream struct{ chat fakeOpenAIUpstream }

func (u *moderationOrChatUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/moderations" {
		u.chat.ServeHTTP(w, r)
		return
	}
	var body struct {
		Input string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		w.WriteHeader(400)
		return
	}
	fmt.Fprintf(w, `{"id":"modr-9","model":"omni-moderation-2024-09-26","results":[{"flagged":%t,"categories":{"violence":%[1]t},"category_scores":{"violence":0.4}}]}`,
		strings.Contains(body.Input, "kill"))
}

// TestModerationRouteAndBatch: POST /v1/moderations answers OpenAI's shape with the
// gateway's model name, is refused a virtual key held to other models, and runs as a
// batch's endpoint (OpenAI's Batch API takes it), a line's answer in the output file.
func TestModerationRouteAndBatch(t *testing.T) {
	hs, s, _ := batchServer(t, &moderationOrChatUpstream{}, 2, false)
	code, got, raw := call(t, "POST", hs.URL+"/v1/moderations", testKey, `{"model":"openai/omni-moderation-latest","input":"I will kill"}`)
	if code != 200 || got["model"] != "openai/omni-moderation-latest" || got["id"] != "modr-9" || !strings.Contains(string(raw), `"flagged":true`) {
		t.Fatalf("moderation: %d %s", code, raw)
	}
	vk := issue(t, s, `{"name":"chat only","models":["openai/ok"]}`)
	resp, b := do2(t, "POST", hs.URL+"/v1/moderations", vk.Key, `{"model":"openai/omni-moderation-latest","input":"hi"}`, nil)
	wantOpenAIError(t, "a model the key may not call", resp, b, http.StatusUnauthorized, "key_model_access_denied", "401")

	input := `{"custom_id":"m0","method":"POST","url":"/v1/moderations","body":{"model":"openai/omni-moderation-latest","input":"hello"}}` + "\n" +
		`{"custom_id":"m1","method":"POST","url":"/v1/moderations","body":{"model":"openai/omni-moderation-latest","input":"kill"}}` + "\n" +
		`{"custom_id":"m2","method":"POST","url":"/v1/moderations","body":{"model":"openai/omni-moderation-latest","input":""}}` + "\n"
	code, f := uploadBatchFile(t, hs, testKey, "batch", []byte(input))
	if code != 200 {
		t.Fatalf("upload: %d %v", code, f)
	}
	code, bt, raw := call(t, "POST", hs.URL+"/v1/batches", testKey, `{"input_file_id":"`+f["id"].(string)+`","endpoint":"/v1/moderations","completion_window":"24h"}`)
	if code != 200 {
		t.Fatalf("create batch: %d %s", code, raw)
	}
	done := waitBatch(t, hs, testKey, bt["id"].(string))
	if done["status"] != "completed" {
		t.Fatalf("batch %v", done)
	}
	out := fileLines(t, hs, testKey, done["output_file_id"])
	errs := fileLines(t, hs, testKey, done["error_file_id"])
	if len(out) != 2 || len(errs) != 1 || errs[0].CustomID != "m2" || errs[0].Response == nil || errs[0].Response.StatusCode != 400 {
		t.Fatalf("output %+v errors %+v", out, errs)
	}
	for _, l := range out {
		flagged := strings.Contains(string(l.Response.Body), `"flagged":true`)
		if l.Response.StatusCode != 200 || flagged != (l.CustomID == "m1") {
			t.Errorf("line %s: %d %s", l.CustomID, l.Response.StatusCode, l.Response.Body)
		}
	}
}
