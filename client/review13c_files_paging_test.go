package client_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
)

// TestReview13cDeleteWhilePaging: the usual clean-up loop of the official SDK — auto-page
// through the files and delete each — asks for the next page with after=<the last file of
// the page>, which it has just deleted. Files.List turns after into a cursor by reading
// that file's record, so the next page is a 400 ("after names no file of this key") and
// the loop stops after the first page. (OpenAI pages past a deleted id.)
func TestReview13cDeleteWhilePaging(t *testing.T) {
	_, base := batchServer(t)
	ctx := context.Background()
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	for range 3 {
		if _, err := c.Files.New(ctx, openai.FileNewParams{File: openai.File(bytes.NewReader(batchInput(1, false)), "in.jsonl", "application/jsonl"), Purpose: openai.FilePurposeBatch}); err != nil {
			t.Fatal(err)
		}
	}
	deleted := 0
	it := c.Files.ListAutoPaging(ctx, openai.FileListParams{Limit: openai.Int(1)})
	for it.Next() {
		if _, err := c.Files.Delete(ctx, it.Current().ID); err != nil {
			t.Fatal(err)
		}
		deleted++
	}
	if err := it.Err(); err != nil || deleted != 3 {
		t.Fatalf("deleted %d of 3 files while paging: %v", deleted, err)
	}
}
