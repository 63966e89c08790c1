package completions

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// TestBackgroundStreamRemoteCancelSameForLocalReaders: a cancel asked on a replica that
// does not run a streamed response gives the readers of both replicas the same events,
// one response.cancelled at the same sequence number, and a replay gives them again.
func TestBackgroundStreamRemoteCancelSameForLocalReaders(t *testing.T) {
	h := newHarness(t, nil)
	defer h.g.Close(context.Background())
	h.a.on("m", step{text: "one two three four", stallAt: 2, stall: true})
	g2, err := New(Options{Providers: fakeRegistry{"a": h.a}, Prices: fakePrices{}, Store: h.store})
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close(context.Background())
	o, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"Go on.","background":true,"stream":true}`)
	if err != nil {
		t.Fatal(err)
	}
	local := &syncRecorder{}
	localDone := make(chan error, 1)
	go func() { localDone <- h.g.StreamBackgroundResponse(context.Background(), "alice", o.ID, -1, local) }()
	waitFor(t, "six events", func() bool { return len(local.events(t)) == 6 })
	if _, err := g2.CancelResponse(context.Background(), "alice", o.ID); err != nil {
		t.Fatal(err)
	}
	remote, err := streamAll(t, g2, "alice", o.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-localDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the local reader did not end")
	}
	replay, err := streamAll(t, h.g, "alice", o.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	want := local.events(t)
	for name, got := range map[string][]responsesEvent{"remote": remote, "replay": replay} {
		if len(got) != len(want) {
			t.Fatalf("%s reader: %d events, the local one %d", name, len(got), len(want))
		}
		for i := range got {
			if got[i].SequenceNumber != want[i].SequenceNumber || got[i].Type != want[i].Type {
				t.Fatalf("%s reader event %d: %s at %d, the local one %s at %d", name, i, got[i].Type, got[i].SequenceNumber, want[i].Type, want[i].SequenceNumber)
			}
		}
	}
	if last := want[len(want)-1]; last.Type != "response.cancelled" || last.SequenceNumber != 6 {
		t.Fatalf("the stream ended with %s at %d", last.Type, last.SequenceNumber)
	}
}

// TestBackgroundStreamDeadRunEndsOnce: a streamed response cancelled while its process
// was dead (its heartbeat stale, no terminal event stored) ends, for its first reader,
// with a response.cancelled stored after the stored events, which every later reader
// replays at the same sequence number.
func TestBackgroundStreamDeadRunEndsOnce(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.StoredResponses.BackgroundStaleAfter = 50 * time.Millisecond })
	defer h.g.Close(context.Background())
	ctx := context.Background()
	id := "resp_dead"
	o := &ResponseObject{ID: id, Object: "response", Status: "cancelled", Background: true, Store: true, Output: []ResponseOutputItem{}}
	rec := &storedResponse{Owner: "alice", Input: []ResponsesItem{}, Response: o, Expires: time.Now().Add(time.Hour),
		Run: &backgroundRun{ID: "run_dead", Heartbeat: time.Now().Add(-time.Minute), CancelRequested: true}, Stream: &backgroundStream{}}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	err = h.store.Update(ctx, func(tx store.Tx) error {
		if err := tx.Put(ctx, store.Responses, id, b); err != nil {
			return err
		}
		return putFrames(ctx, tx, id, []streamFrame{
			{seq: 0, data: encodeFrame(responsesEvent{Type: "response.created", SequenceNumber: 0, Response: o})},
			{seq: 1, data: encodeFrame(responsesEvent{Type: "response.in_progress", SequenceNumber: 1, Response: o})},
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	late, err := streamAll(t, h.g, "alice", id, 5) // a client past the stored events
	if err != nil || len(late) != 0 {
		t.Fatalf("a reader past the end: %+v %v", late, err)
	}
	for i := 0; i < 2; i++ {
		ev, err := streamAll(t, h.g, "alice", id, -1)
		if err != nil || len(ev) != 3 || ev[2].Type != "response.cancelled" || ev[2].SequenceNumber != 2 {
			t.Fatalf("reader %d: %+v %v", i, ev, err)
		}
	}
	if n, err := h.store.List(ctx, store.ResponseEvents, store.ListOptions{Prefix: id + "/"}); err != nil || len(n) != 3 {
		t.Fatalf("stored events: %d %v", len(n), err)
	}
}

// TestBackgroundStreamResumeBeforeTerminalAfterDrop: past the bound, a resume right
// before the kept terminal event (no dropped event after it) gives the terminal event.
func TestBackgroundStreamResumeBeforeTerminalAfterDrop(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.StoredResponses.BackgroundStreamMaxEvents = 5 })
	defer h.g.Close(context.Background())
	h.a.on("m", step{text: "a b c d e f g h i j"})
	o, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"Letters.","background":true,"stream":true}`)
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, h.g, "alice", o.ID, "completed")
	all, err := streamAll(t, h.g, "alice", o.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	last := all[len(all)-1]
	ev, err := streamAll(t, h.g, "alice", o.ID, last.SequenceNumber-1)
	if err != nil || len(ev) != 1 || ev[0].Type != "response.completed" {
		t.Fatalf("resume before the terminal event: %+v %v", ev, err)
	}
	if _, err := streamAll(t, h.g, "alice", o.ID, last.SequenceNumber-2); err == nil {
		t.Fatal("a resume that skips a dropped event was not refused")
	}
}
