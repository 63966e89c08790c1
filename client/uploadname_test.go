package client_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

// TestUploadsWithoutFilename: TrainUpload and UploadFile with filename "" sent a form part
// without a file name, which the server reads as a plain value: a 400 saying the form
// carries no file, though the caller gave its content. They now send the Python client's
// names, dataset.csv and batch.jsonl, and the upload goes through.
func TestUploadsWithoutFilename(t *testing.T) {
	ctx := context.Background()
	c, _ := realServer(t, trainerOptions(t))
	tr := c.RouterTrainer()
	if _, err := tr.TrainUpload(ctx, "", bytes.NewReader(jointCSV(30)), &client.UploadOptions{PromptColumn: "prompt"}); err != nil {
		t.Fatalf("TrainUpload without a file name: %v", err)
	}
	st, err := tr.Wait(ctx, 20*time.Millisecond)
	if err != nil || st.Upload == nil || st.Upload.Filename != "dataset.csv" {
		t.Fatalf("the job's upload: %+v, %v; want it named dataset.csv", st, err)
	}

	bc, _ := batchServer(t)
	f, err := bc.UploadFile(ctx, "", bytes.NewReader(batchInput(2, false)), "")
	if err != nil || f.Filename != "batch.jsonl" {
		t.Fatalf("UploadFile without a file name: %+v, %v; want it named batch.jsonl", f, err)
	}
}
