package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
)

// batchServer is the real server with the gateway over the scripted tool upstream (chat
// and embeddings) and the Files and Batch APIs; it returns a Go client and the base URL.
func batchServer(t *testing.T) (*client.Client, string) {
	t.Helper()
	up := newToolUpstream(t)
	gateway := up.options(t)
	var svc *batch.Service
	c, base := realServerURL(t, func(st *store.Store, u string) []server.Option {
		files, err := batch.NewFiles(st, batch.FilesOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svc, err = batch.New(st, files, batch.Options{Concurrency: 2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		return append(gateway(st, u), server.Batches(svc))
	})
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c, base
}

// batchInput is a batch input of n chat requests (custom ids q0, q1, …) and, with bad, one
// whose model no provider serves.
func batchInput(n int, bad bool) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, `{"custom_id":"q%d","method":"POST","url":"/v1/chat/completions","body":{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"Weather in city %d?"}]}}`+"\n", i, i)
	}
	if bad {
		b.WriteString(`{"custom_id":"bad","method":"POST","url":"/v1/chat/completions","body":{"model":"nosuch/model","messages":[{"role":"user","content":"hi"}]}}` + "\n")
	}
	return b.Bytes()
}

// TestBatchesAgainstServer: the Go client uploads a batch input, runs it, waits for it,
// reads its output and error files, lists and deletes files, and gets typed errors for a
// bad line (400 naming it), another key's batch (404) and cancelling an ended batch (409).
func TestBatchesAgainstServer(t *testing.T) {
	c, base := batchServer(t)
	ctx := context.Background()
	f, err := c.UploadFile(ctx, "eval.jsonl", bytes.NewReader(batchInput(3, true)), "")
	if err != nil {
		t.Fatal(err)
	}
	if f.Purpose != "batch" || f.Filename != "eval.jsonl" || f.Status != "processed" || f.ExpiresAt == nil {
		t.Fatalf("uploaded %+v", f)
	}
	b, err := c.CreateBatch(ctx, &client.CreateBatchRequest{InputFileID: f.ID, Endpoint: "/v1/chat/completions", Metadata: map[string]string{"suite": "weather"}})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for st, err := range c.WatchBatch(ctx, b.ID, 10*time.Millisecond) {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, st.Status)
		b = st
	}
	if b.Status != "completed" || b.RequestCounts != (client.BatchCounts{Total: 4, Completed: 3, Failed: 1}) || b.Usage.TotalTokens != 120 ||
		b.Metadata["suite"] != "weather" || b.Switchyard == nil || b.OutputFileID == nil || b.ErrorFileID == nil {
		t.Fatalf("ended %+v (seen %v)", b, seen)
	}
	var ids []string
	for l, err := range c.BatchOutput(ctx, *b.OutputFileID) {
		if err != nil {
			t.Fatal(err)
		}
		var answer struct {
			Choices []struct {
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
		}
		json.Unmarshal(l.Response.Body, &answer)
		if l.Response.StatusCode != 200 || len(answer.Choices) != 1 || answer.Choices[0].FinishReason != "tool_calls" {
			t.Fatalf("output line %+v %s", l, l.Response.Body)
		}
		ids = append(ids, l.CustomID)
	}
	if strings.Join(ids, ",") != "q0,q1,q2" {
		t.Fatalf("output %v", ids)
	}
	for l, err := range c.BatchOutput(ctx, *b.ErrorFileID) {
		if err != nil || l.CustomID != "bad" || l.Response == nil || l.Response.StatusCode < 400 {
			t.Fatalf("error line %+v %v", l, err)
		}
	}
	outs, err := c.ListFiles(ctx, &client.FileListOptions{Purpose: "batch_output", Order: "asc"})
	if err != nil || len(outs.Data) != 2 || outs.HasMore {
		t.Fatalf("output files %+v %v", outs, err)
	}
	if l, err := c.ListBatches(ctx, "", 10); err != nil || len(l.Data) != 1 || l.Data[0].ID != b.ID {
		t.Fatalf("batches %+v %v", l, err)
	}
	if _, err := c.CancelBatch(ctx, b.ID); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("cancel an ended batch: %v", err)
	}
	other, _ := client.New(client.WithBaseURL(base), client.WithAPIKey(otherKey))
	if _, err := other.Batch(ctx, b.ID); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("another key's batch: %v", err)
	}
	if err := c.DeleteFile(ctx, f.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.File(ctx, f.ID); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a deleted file: %v", err)
	}
	_, err = c.UploadFile(ctx, "bad.jsonl", strings.NewReader(`{"custom_id":"x","method":"PUT","url":"/v1/chat/completions","body":{}}`), "")
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Param != "file" || !strings.Contains(ae.Message, `line 1: method must be "POST"`) {
		t.Fatalf("a bad line: %v", err)
	}
}

// TestOfficialGoSDKBatches: the official OpenAI Go SDK uploads a batch input
// (files.New), runs it (batches.New), polls it (batches.Get), downloads the output
// (files.Content), lists batches and files with its cursor pages, deletes the input, and
// gets *openai.Error for a purpose the server does not keep (400, param purpose).
func TestOfficialGoSDKBatches(t *testing.T) {
	_, base := batchServer(t)
	ctx := context.Background()
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(1))
	f, err := c.Files.New(ctx, openai.FileNewParams{File: openai.File(bytes.NewReader(batchInput(4, false)), "in.jsonl", "application/jsonl"), Purpose: openai.FilePurposeBatch})
	if err != nil {
		t.Fatal(err)
	}
	if f.Purpose != "batch" || f.Filename != "in.jsonl" || f.Bytes != int64(len(batchInput(4, false))) {
		t.Fatalf("file %+v", f)
	}
	b, err := c.Batches.New(ctx, openai.BatchNewParams{InputFileID: f.ID, Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); b.Status != openai.BatchStatusCompleted; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("batch still %s", b.Status)
		}
		if b, err = c.Batches.Get(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
	}
	if b.RequestCounts.Completed != 4 || b.RequestCounts.Total != 4 || b.OutputFileID == "" || b.ErrorFileID != "" {
		t.Fatalf("batch %+v", b)
	}
	resp, err := c.Files.Content(ctx, b.OutputFileID)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := strings.Count(string(out), "\n"); n != 4 || !strings.Contains(string(out), `"custom_id":"q3"`) {
		t.Fatalf("output file: %s", out)
	}
	page, err := c.Batches.List(ctx, openai.BatchListParams{Limit: openai.Int(10)})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != b.ID {
		t.Fatalf("batches: %+v %v", page, err)
	}
	n := 0
	for it := c.Files.ListAutoPaging(ctx, openai.FileListParams{Limit: openai.Int(1)}); it.Next(); {
		n++
	}
	if n != 2 { // the input and the output
		t.Fatalf("auto-paged %d files", n)
	}
	if d, err := c.Files.Delete(ctx, f.ID); err != nil || !d.Deleted || d.ID != f.ID {
		t.Fatalf("delete: %+v %v", d, err)
	}
	_, err = c.Files.New(ctx, openai.FileNewParams{File: openai.File(strings.NewReader("x"), "a.txt", "text/plain"), Purpose: openai.FilePurposeAssistants})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "purpose" {
		t.Fatalf("purpose assistants: %v", err)
	}
}
