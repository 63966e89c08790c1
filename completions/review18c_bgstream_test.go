package completions

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestReview18cResumeAtEndAfterDropIsNotRefused: what is WRONG — StreamBackgroundResponse
// refuses every starting_after >= DroppedFrom-1 (background_stream.go, the
// "dropped > 0 && startingAfter >= dropped-1" check), so once a stream passed its bound a
// client that already got the terminal event (it resumes with starting_after = the
// terminal's sequence number, as any reconnecting SDK does after a network blip at the
// very end) gets a 400 "the events asked for were not kept", although no event after
// that number was dropped. The doc says only a resume from inside the dropped range is
// refused; a resume at the end must end at once with nothing, as it does without a drop
// (TestBackgroundStreamRecordsAndResumes "resume at the end").
func TestReview18cResumeAtEndAfterDropIsNotRefused(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.StoredResponses.BackgroundStreamMaxEvents = 5 })
	defer h.g.Close(context.Background())
	h.a.on("m", step{text: "a b c d e f g h i j"})
	o, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"Letters.","background":true,"stream":true}`)
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, h.g, "alice", o.ID, "completed")
	all, err := streamAll(t, h.g, "alice", o.ID, -1)
	if err != nil || len(all) == 0 || all[len(all)-1].Type != "response.completed" {
		t.Fatalf("events %+v %v", all, err)
	}
	last := all[len(all)-1].SequenceNumber
	g2, err := New(Options{Providers: fakeRegistry{"a": h.a}, Prices: fakePrices{}, Store: h.store,
		StoredResponses: StoredResponsesOptions{BackgroundStreamMaxEvents: 5}})
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close(context.Background())
	for name, g := range map[string]*Gateway{"running replica": h.g, "other replica": g2} {
		end, err := streamAll(t, g, "alice", o.ID, last)
		if err != nil || len(end) != 0 {
			t.Fatalf("%s: resume after the terminal event (sequence number %d) of a bounded stream: %d events, %v; want none and no error", name, last, len(end), err)
		}
	}
}

// TestReview18cRemoteCancelGivesOneHistory: what is WRONG — a cancel asked on a replica
// that does not run the response makes that replica's readers (followStored) end at once
// with a response.cancelled made from the record at sequence number f.after+1, while the
// run on the other replica goes on until its next heartbeat: runBackground streams even
// though the record is no longer queued, and flushEvents (updateRun with a change that
// always returns true) keeps writing its events into the cancelled record; its own
// response.cancelled is then stored later at another sequence number. The same sequence
// number thus names two different events: the first reader got response.cancelled as
// event 0, a later replay gets response.created as event 0 and a response.cancelled at
// another number. A resume with the first reader's numbers replays events after a
// terminal event it already got.
func TestReview18cRemoteCancelGivesOneHistory(t *testing.T) {
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
	// The client's cancel lands on the other replica, and so does its stream.
	if _, err := g2.CancelResponse(context.Background(), "alice", o.ID); err != nil {
		t.Fatal(err)
	}
	// (before the run's first flush, 100 ms after it started)
	first, err := streamAll(t, g2, "alice", o.ID, -1)
	if err != nil || len(first) == 0 || first[len(first)-1].Type != "response.cancelled" {
		t.Fatalf("the reader on the cancelling replica: %+v %v", first, err)
	}
	// The run on h.g ends (its heartbeat sees the cancel).
	waitFor(t, "the run to end", func() bool { return !h.g.bg.running(o.ID) })
	replay, err := streamAll(t, g2, "alice", o.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	bySeq := map[int]responsesEvent{}
	for _, e := range replay {
		bySeq[e.SequenceNumber] = e
	}
	for _, e := range first {
		r, ok := bySeq[e.SequenceNumber]
		if !ok || r.Type != e.Type {
			t.Fatalf("sequence number %d: the first reader got %s, a replay of the same response gives %q (replay: %d events, ending %s at %d)",
				e.SequenceNumber, e.Type, r.Type, len(replay), replay[len(replay)-1].Type, replay[len(replay)-1].SequenceNumber)
		}
	}
	if len(replay) != len(first) {
		t.Fatalf("the first reader got %d events and ended, a replay gives %d", len(first), len(replay))
	}
}

// putCountingDriver counts the writes of store.Responses made in transactions.
type putCountingDriver struct {
	*memstore.Driver
	mu   sync.Mutex
	puts int
}

type putCountingTx struct {
	store.Tx
	d *putCountingDriver
}

func (t putCountingTx) Put(ctx context.Context, c store.Collection, key string, value []byte) error {
	if c == store.Responses {
		t.d.mu.Lock()
		t.d.puts++
		t.d.mu.Unlock()
	}
	return t.Tx.Put(ctx, c, key, value)
}

func (d *putCountingDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return d.Driver.Update(ctx, func(tx store.Tx) error { return fn(putCountingTx{Tx: tx, d: d}) })
}

func (d *putCountingDriver) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.puts
}

// TestReview18cIdleRunAfterDropRewritesItsRecord: what is WRONG — once a stream dropped
// an event (its bound reached), flushEvents no longer returns early ("len(frames) == 0 &&
// dropped == 0"), so every 100 ms for the rest of the run it rewrites the whole record
// (input included: up to --max-body-bytes) through updateRun although nothing changed:
// ten store writes a second per response while the upstream is silent (a model thinking,
// a long tool phase), on PostgreSQL each a row rewrite plus WAL. Only the heartbeat
// (every BackgroundStaleAfter/4, at most 4 s) should write an idle run's record.
func TestReview18cIdleRunAfterDropRewritesItsRecord(t *testing.T) {
	d := &putCountingDriver{Driver: memstore.NewDriver()}
	h := newHarness(t, func(o *Options) {
		o.Store = store.New(d)
		o.StoredResponses.BackgroundStreamMaxEvents = 5
	})
	defer h.g.Close(context.Background())
	h.a.on("m", step{text: "a b c d e f g h", stallAt: 6, stall: true})
	o, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"Letters.","background":true,"stream":true}`)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the bound reached", func() bool {
		l := h.g.bg.log(o.ID)
		return l != nil && l.droppedFrom() > 0
	})
	time.Sleep(300 * time.Millisecond) // the drop mark is stored
	before := d.count()
	time.Sleep(time.Second) // the upstream is silent
	n := d.count() - before
	if _, err := h.g.CancelResponse(context.Background(), "alice", o.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run to end", func() bool { return !h.g.bg.running(o.ID) })
	if n > 2 {
		t.Fatalf("an idle run (nothing new to store) rewrote its record %d times in 1 s", n)
	}
}
