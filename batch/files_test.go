package batch_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestUploadChecksEveryLine: an upload that is not a batch input is refused with the line
// and the field named, and nothing is stored; other purposes are refused naming purpose.
func TestUploadChecksEveryLine(t *testing.T) {
	st := memstore.New()
	defer st.Close()
	files, _ := batch.NewFiles(st, batch.FilesOptions{MaxBytes: 4096})
	good := `{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"m"}}`
	for _, c := range []struct {
		content, purpose, param, text string
		line                          int
	}{
		{good, "assistants", "purpose", `purpose "assistants" is not supported`, 0},
		{good, "fine-tune", "purpose", `purpose "batch"`, 0},
		{good, "batch_output", "purpose", "for the files batches write", 0},
		{good, "", "purpose", "required", 0},
		{"", "batch", "file", "empty", 0},
		{"\n\n", "batch", "file", "no request", 0},
		{good + "\nnot json\n", "batch", "file", "line 2: is not a JSON object", 2},
		{good + "\n[1,2]\n", "batch", "file", "line 2: is not a JSON object", 2},
		{`{"method":"POST","url":"/v1/chat/completions","body":{}}`, "batch", "file", "line 1: custom_id is required", 1},
		{`{"custom_id":7,"method":"POST","url":"/v1/chat/completions","body":{}}`, "batch", "file", "custom_id must be a string", 1},
		{`{"custom_id":"","method":"POST","url":"/v1/chat/completions","body":{}}`, "batch", "file", "custom_id must not be empty", 1},
		{good + "\n\n" + good, "batch", "file", `line 3: custom_id "a" is used again (first on line 1)`, 3},
		{`{"custom_id":"a","method":"GET","url":"/v1/chat/completions","body":{}}`, "batch", "file", `method must be "POST", got "GET"`, 1},
		{`{"custom_id":"a","method":"POST","url":"/v1/images/generations","body":{}}`, "batch", "file", `url must be one of /v1/chat/completions, /v1/embeddings, /v1/responses, /v1/completions, /v1/moderations, got "/v1/images/generations"`, 1},
		{`{"custom_id":"a","method":"POST","url":"/v1/chat/completions"}`, "batch", "file", "body is required", 1},
		{`{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":"hi"}`, "batch", "file", "body must be a JSON object", 1},
		{strings.Repeat(good+"\n", 60), "batch", "file", "over this server's limit of 4096 bytes", 0},
	} {
		_, err := files.Upload(context.Background(), "alice", batch.Upload{Filename: "x.jsonl", Purpose: c.purpose, Content: strings.NewReader(c.content)})
		var ve *batch.ValidationError
		if !errors.As(err, &ve) || ve.Param != c.param || ve.Line != c.line || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%q as %q: %v (%+v), want %s line %d %q", clipped(c.content), c.purpose, err, ve, c.param, c.line, c.text)
		}
	}
	if _, err := files.Upload(context.Background(), "alice", batch.Upload{Purpose: "batch", Content: strings.NewReader(strings.Repeat(good+"\n", 60))}); !errors.Is(err, batch.ErrTooLarge) {
		t.Errorf("too large: %v does not match ErrTooLarge", err)
	}
	if es, _ := st.List(context.Background(), store.Files, store.ListOptions{}); len(es) != 0 {
		t.Fatalf("refused uploads left %d records", len(es))
	}
	if es, _ := st.List(context.Background(), store.FileChunks, store.ListOptions{}); len(es) != 0 {
		t.Fatalf("refused uploads left %d pieces", len(es))
	}
}

func clipped(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// TestUploadRequestBound: 50,000 requests are accepted, 50,001 are not.
func TestUploadRequestBound(t *testing.T) {
	st := memstore.New()
	defer st.Close()
	files, _ := batch.NewFiles(st, batch.FilesOptions{})
	var b bytes.Buffer
	for i := range batch.MaxRequests {
		fmt.Fprintf(&b, `{"custom_id":"%d","method":"POST","url":"/v1/embeddings","body":{}}`+"\n", i)
	}
	f, err := files.Upload(context.Background(), "alice", batch.Upload{Purpose: "batch", Content: bytes.NewReader(b.Bytes())})
	if err != nil {
		t.Fatal(err)
	}
	if f.Bytes != int64(b.Len()) || f.Bytes <= batch.ChunkSize {
		t.Fatalf("%d bytes stored of %d (the test wants more than one piece)", f.Bytes, b.Len())
	}
	fmt.Fprintf(&b, `{"custom_id":"one more","method":"POST","url":"/v1/embeddings","body":{}}`+"\n")
	_, err = files.Upload(context.Background(), "alice", batch.Upload{Purpose: "batch", Content: bytes.NewReader(b.Bytes())})
	var ve *batch.ValidationError
	if !errors.As(err, &ve) || ve.Line != batch.MaxRequests+1 || !strings.Contains(err.Error(), "more than 50000 requests") {
		t.Fatalf("50,001 requests: %v", err)
	}
}

// TestFilesAPI: content comes back byte for byte across pieces; listings page newest or
// oldest first, by after and limit, filtered by purpose, with has_more; another owner's
// files are not found; a delete removes the content; an expired file is gone at once and
// swept from the store.
func TestFilesAPI(t *testing.T) {
	st := memstore.New()
	defer st.Close()
	var mu sync.Mutex
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	tick := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	files, _ := batch.NewFiles(st, batch.FilesOptions{Clock: clock})
	ctx := context.Background()
	// A file of several pieces, lines of every size.
	var big bytes.Buffer
	for i := 0; big.Len() < 2*batch.ChunkSize+12345; i++ {
		fmt.Fprintf(&big, `{"custom_id":"c%d","method":"POST","url":"/v1/chat/completions","body":{"pad":%q}}`+"\n", i, strings.Repeat("x", i%3000))
	}
	var ids []string
	for i := range 4 {
		content := jsonl("ok")
		if i == 1 {
			content = big.Bytes()
		}
		f, err := files.Upload(ctx, "alice", batch.Upload{Filename: fmt.Sprintf("f%d.jsonl", i), Purpose: "batch", Content: bytes.NewReader(content)})
		if err != nil {
			t.Fatal(err)
		}
		if f.Object != "file" || f.Status != "processed" || f.Purpose != "batch" || f.ExpiresAt == nil || *f.ExpiresAt-f.CreatedAt != 30*86400 || !strings.HasPrefix(f.ID, "file-") {
			t.Fatalf("uploaded %+v", f)
		}
		ids = append(ids, f.ID)
		tick(time.Second)
	}
	_, rc, err := files.Open(ctx, "alice", ids[1])
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, big.Bytes()) {
		t.Fatalf("content of %d bytes came back as %d bytes (%v)", big.Len(), len(got), err)
	}
	list := func(q batch.FileQuery) (string, bool) {
		t.Helper()
		l, err := files.List(ctx, "alice", q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range l.Data {
			out = append(out, f.Filename)
		}
		return strings.Join(out, ","), l.HasMore
	}
	if got, more := list(batch.FileQuery{}); got != "f3.jsonl,f2.jsonl,f1.jsonl,f0.jsonl" || more {
		t.Fatalf("newest first: %s %v", got, more)
	}
	if got, more := list(batch.FileQuery{Order: "asc", Limit: 2}); got != "f0.jsonl,f1.jsonl" || !more {
		t.Fatalf("oldest first, 2: %s %v", got, more)
	}
	if got, more := list(batch.FileQuery{Order: "asc", After: ids[1]}); got != "f2.jsonl,f3.jsonl" || more {
		t.Fatalf("oldest first after f1: %s %v", got, more)
	}
	if got, _ := list(batch.FileQuery{After: ids[2], Limit: 1}); got != "f1.jsonl" {
		t.Fatalf("newest first after f2: %s", got)
	}
	if got, _ := list(batch.FileQuery{Purpose: "batch_output"}); got != "" {
		t.Fatalf("batch_output: %s", got)
	}
	for _, q := range []batch.FileQuery{{Limit: 10001}, {Order: "up"}, {Purpose: "fine-tune"}, {After: "file-nope"}} {
		if _, err := files.List(ctx, "alice", q); !errors.Is(err, batch.ErrInvalid) {
			t.Errorf("%+v: %v", q, err)
		}
	}
	if _, err := files.Get(ctx, "bob", ids[0]); !errors.Is(err, batch.ErrNotFound) {
		t.Fatalf("bob reads alice's file: %v", err)
	}
	if err := files.Delete(ctx, "bob", ids[0]); !errors.Is(err, batch.ErrNotFound) {
		t.Fatalf("bob deletes alice's file: %v", err)
	}
	if err := files.Delete(ctx, "alice", ids[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := files.Get(ctx, "alice", ids[1]); !errors.Is(err, batch.ErrNotFound) {
		t.Fatalf("a deleted file: %v", err)
	}
	if es, _ := st.List(ctx, store.FileChunks, store.ListOptions{Prefix: ids[1] + "/"}); len(es) != 0 {
		t.Fatalf("a deleted file left %d pieces", len(es))
	}
	// One expires in an hour: gone after it, and swept.
	f, err := files.Upload(ctx, "alice", batch.Upload{Purpose: "batch", Content: bytes.NewReader(jsonl("ok")), ExpiresAfter: &batch.ExpiresAfter{Anchor: "created_at", Seconds: 3600}})
	if err != nil {
		t.Fatal(err)
	}
	if *f.ExpiresAt-f.CreatedAt != 3600 {
		t.Fatalf("expires_at %d created_at %d", *f.ExpiresAt, f.CreatedAt)
	}
	tick(time.Hour)
	if _, err := files.Get(ctx, "alice", f.ID); !errors.Is(err, batch.ErrNotFound) {
		t.Fatalf("an expired file: %v", err)
	}
	if n, err := files.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep deleted %d (%v), want 1", n, err)
	}
	// Its content is gone; its tombstone keeps its place in listings a day (review 13c),
	// then goes too.
	if chunks, err := st.List(ctx, store.FileChunks, store.ListOptions{Prefix: f.ID}); err != nil || len(chunks) != 0 {
		t.Fatalf("the expired file's content: %d pieces left (%v)", len(chunks), err)
	}
	tick(25 * time.Hour)
	if n, err := files.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("sweep of the tombstone counted %d (%v), want 0 files deleted", n, err)
	}
	if _, err := st.Get(ctx, store.Files, f.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the expired file's tombstone is still there a day on: %v", err)
	}
}
