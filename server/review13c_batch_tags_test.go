package server

import (
	"fmt"
	"strings"
	"testing"
)

// TestReview13cBatchLineWithSixteenTags: a chat request carrying 16 tags in metadata.tags (the most a
// request may carry) is answered 200 when the key sends it, but as a batch line the
// server adds the tag batch:<id> through X-Switchyard-Tags, and headerTags refuses the 17
// together: the line is answered 400 in the error file. A line should be answered as the
// same request sent directly (the batch tag not counted, or another tag dropped).
func TestReview13cBatchLineWithSixteenTags(t *testing.T) {
	hs, _, _ := batchServer(t, &fakeOpenAIUpstream{}, 1, false)
	var tags []string
	for i := range 16 {
		tags = append(tags, fmt.Sprintf(`"t%d"`, i))
	}
	body := `{"model":"openai/ok","metadata":{"tags":[` + strings.Join(tags, ",") + `]},"messages":[{"role":"user","content":"hi"}]}`
	if code, _, raw := call(t, "POST", hs.URL+"/v1/chat/completions", testKey, body); code != 200 {
		t.Fatalf("sent directly: %d %s", code, raw)
	}
	line := `{"custom_id":"c0","method":"POST","url":"/v1/chat/completions","body":` + body + "}\n"
	_, f := uploadBatchFile(t, hs, testKey, "batch", []byte(line))
	code, b, raw := call(t, "POST", hs.URL+"/v1/batches", testKey, `{"input_file_id":"`+f["id"].(string)+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`)
	if code != 200 {
		t.Fatalf("create: %d %s", code, raw)
	}
	b = waitBatch(t, hs, testKey, b["id"].(string))
	if c := b["request_counts"].(map[string]any); c["completed"] != 1.0 {
		errs := fileLines(t, hs, testKey, b["error_file_id"])
		t.Fatalf("the line was refused in the batch: %d %s", errs[0].Response.StatusCode, errs[0].Response.Body)
	}
}
