package client_test

import (
	"encoding/json"
	"testing"
)

// TestOfficialNodeSDKBatches runs a batch with the official OpenAI Node SDK: files.create
// (whose form sends the file before the purpose), batches.create, batches.retrieve until
// it completes, files.content of the output, batches.list's auto-pagination, and the SDK's
// typed error for a purpose the server does not keep (400, param purpose). Skips, saying
// why, without node and npm or when the package cannot be installed.
func TestOfficialNodeSDKBatches(t *testing.T) {
	run := nodeSDK(t)
	_, base := batchServer(t)
	out := run("testdata/openai_batch_check.mjs", base)
	var got struct {
		File struct {
			Purpose, Filename string
			Bytes             int
		} `json:"file"`
		Created string `json:"created"`
		Status  string `json:"status"`
		Counts  struct{ Total, Completed, Failed int }
		Output  []struct {
			CustomID string `json:"custom_id"`
			Status   int    `json:"status"`
			Finish   string `json:"finish"`
		} `json:"output"`
		Listed     int `json:"listed"`
		BadPurpose struct {
			Status int    `json:"status"`
			Param  string `json:"param"`
		} `json:"badPurpose"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if got.File.Purpose != "batch" || got.File.Filename != "cities.jsonl" || got.File.Bytes == 0 || got.Created != "validating" {
		t.Errorf("upload and create: %s", out)
	}
	if got.Status != "completed" || got.Counts.Total != 3 || got.Counts.Completed != 3 || len(got.Output) != 3 ||
		got.Output[2].CustomID != "city-2" || got.Output[2].Status != 200 || got.Output[2].Finish != "tool_calls" {
		t.Errorf("batch: %s", out)
	}
	if got.Listed != 1 || got.BadPurpose.Status != 400 || got.BadPurpose.Param != "purpose" {
		t.Errorf("list and refusal: %s", out)
	}
}
