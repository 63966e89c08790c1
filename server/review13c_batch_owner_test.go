package server

import (
	"testing"
)

// TestReview13cVirtualKeySeesIssuersBatches: a virtual key is handed to someone else (an
// app); like its /v1/responses answers (responsesOwner), its files and batches should be
// its own. Here a virtual key lists, reads and downloads the issuer's batch output, and
// a second virtual key reads the first one's batch: every one of these should be 404.
func TestReview13cVirtualKeySeesIssuersBatches(t *testing.T) {
	hs, s, _ := batchServer(t, &fakeOpenAIUpstream{}, 2, false)
	_, f := uploadBatchFile(t, hs, testKey, "batch", chatLines("openai/ok"))
	code, b, raw := call(t, "POST", hs.URL+"/v1/batches", testKey, `{"input_file_id":"`+f["id"].(string)+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`)
	if code != 200 {
		t.Fatalf("create: %d %s", code, raw)
	}
	b = waitBatch(t, hs, testKey, b["id"].(string))
	outID := b["output_file_id"].(string)

	vkA := issue(t, s, `{"name":"app-a"}`)
	vkB := issue(t, s, `{"name":"app-b"}`)
	for _, p := range []string{"/v1/batches/" + b["id"].(string), "/v1/files/" + f["id"].(string), "/v1/files/" + outID + "/content"} {
		if code, _, raw := call(t, "GET", hs.URL+p, vkA.Key, ""); code != 404 {
			t.Errorf("virtual key GET the issuer's %s: %d %.200s", p, code, raw)
		}
	}
	if _, l, raw := call(t, "GET", hs.URL+"/v1/files", vkA.Key, ""); len(l["data"].([]any)) != 0 {
		t.Errorf("virtual key lists the issuer's files: %.300s", raw)
	}
	// A's batch, read and cancelled by B.
	_, fa := uploadBatchFile(t, hs, vkA.Key, "batch", chatLines("openai/ok"))
	if code, _, raw := call(t, "GET", hs.URL+"/v1/files/"+fa["id"].(string)+"/content", vkB.Key, ""); code != 404 {
		t.Errorf("virtual key B downloads virtual key A's input: %d %.200s", code, raw)
	}
	if code, _, raw := call(t, "DELETE", hs.URL+"/v1/files/"+fa["id"].(string), vkB.Key, ""); code != 404 {
		t.Errorf("virtual key B deletes virtual key A's file: %d %.200s", code, raw)
	}
}
