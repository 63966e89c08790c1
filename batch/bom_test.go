package batch_test

import (
	"bytes"
	"testing"

	"github.com/switchyard-ai/switchyard/batch"
)

// TestBatchInputSavedOnWindowsRuns: a batch input saved by a Windows editor (a UTF-8 byte
// order mark before the first line, CRLF line ends) is taken at upload and run line by
// line, the first line included; the mark used to make line 1 "not a JSON object".
func TestBatchInputSavedOnWindowsRuns(t *testing.T) {
	exec := newScripted()
	h := newHarness(t, nil, exec, batch.Options{Concurrency: 2})
	in := append([]byte("\ufeff"), bytes.ReplaceAll(jsonl("ok", "ok", "ok"), []byte("\n"), []byte("\r\n"))...)
	f := h.upload(t, "alice", in)
	b := h.create(t, "alice", f.ID)
	b = h.wait(t, "alice", b.ID, ended)
	if b.Status != batch.StatusCompleted || b.RequestCounts != (batch.RequestCounts{Total: 3, Completed: 3}) {
		t.Fatalf("ended %s %+v", b.Status, b.RequestCounts)
	}
	if got := customIDs(h.lines(t, "alice", b.OutputFileID)); got != "r0,r1,r2" {
		t.Fatalf("output lines %s", got)
	}
	if n := exec.answers("r0"); n != 1 {
		t.Fatalf("the first line was answered %d times", n)
	}
}
