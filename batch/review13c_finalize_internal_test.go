package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// sharedLike is an in-process queue that says its jobs go stale after stale, as River
// (riverqueue.DefaultStaleAfter, 2 minutes) does for a queue shared by several processes.
type sharedLike struct {
	*jobqueue.Local
	stale time.Duration
}

func (q sharedLike) StaleAfter() time.Duration { return q.stale }

// slowResults is a store whose listings of batch results take a while once slow is set
// (a finalization reading 50,000 stored answers, or writing a large output file).
type slowResults struct {
	*memstore.Driver
	slow atomic.Bool
}

func (d *slowResults) List(ctx context.Context, c store.Collection, o store.ListOptions) ([]store.Entry, error) {
	if c == store.BatchResults && d.slow.Load() {
		time.Sleep(1500 * time.Millisecond)
	}
	return d.Driver.List(ctx, c, o)
}

// TestReview13cNoHeartbeatWhileFinalizing: execute stops the run's heartbeat before it
// returns, and finalize (reading every stored answer, writing the output and error files
// piece by piece) beats no more. A finalization longer than the queue's StaleAfter looks
// dead to every other process (Service.dead, the queue's sweep) and claim hands the batch
// to a second worker, which finalizes it again while the first still writes the same
// output file ids.
func TestReview13cNoHeartbeatWhileFinalizing(t *testing.T) {
	d := &slowResults{Driver: memstore.NewDriver()}
	st := store.New(d)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	files, _ := NewFiles(st, FilesOptions{Logger: quiet})
	q := sharedLike{Local: jobqueue.NewLocal(0), stale: 400 * time.Millisecond}
	var answered atomic.Int32
	exec := ExecutorFunc(func(ctx context.Context, c Call) (Answer, error) {
		if answered.Add(1) == 2 {
			d.slow.Store(true) // the last line: what follows is the finalization
		}
		return Answer{StatusCode: 200, Body: json.RawMessage(`{"usage":{"prompt_tokens":1,"completion_tokens":1}}`)}, nil
	})
	svc, _ := New(st, files, Options{Queue: q, Workers: 1, Concurrency: 1, Executor: exec, Logger: quiet, SweepInterval: -1})
	ctx := context.Background()
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	q.Local.Start(ctx)
	defer q.Local.Stop(ctx)
	var in bytes.Buffer
	for i := range 2 {
		fmt.Fprintf(&in, `{"custom_id":"r%d","method":"POST","url":"/v1/chat/completions","body":{"model":"ok"}}`+"\n", i)
	}
	f, err := files.Upload(ctx, "alice", Upload{Filename: "in.jsonl", Purpose: PurposeBatch, Content: bytes.NewReader(in.Bytes())})
	if err != nil {
		t.Fatal(err)
	}
	b, err := svc.Create(ctx, "alice", "cred", CreateRequest{InputFileID: f.ID, Endpoint: "/v1/chat/completions", CompletionWindow: "24h"})
	if err != nil {
		t.Fatal(err)
	}
	// Another process on the same store and queue.
	other, _ := New(st, files, Options{Queue: q, Workers: 1, Executor: exec, Logger: quiet, SweepInterval: -1})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		rec, _ := store.GetJSON[record](ctx, st, store.Batches, b.ID)
		if rec.Status.terminal() {
			return
		}
		if rec.Status == StatusFinalizing {
			if dead, _, _ := other.dead(ctx, b.ID); dead {
				took, _, _ := other.claim(ctx, b.ID)
				t.Fatalf("a batch being finalized looks dead to another process (heartbeat %v old, StaleAfter %v); claim hands it over: %v",
					time.Since(rec.HeartbeatAt).Round(time.Millisecond), q.stale, took != nil)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the batch did not end")
}
