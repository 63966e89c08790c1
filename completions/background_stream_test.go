package completions

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// syncRecorder is an http.ResponseWriter safe to read while a stream writes to it.
type syncRecorder struct {
	mu  sync.Mutex
	buf bytes.Buffer
	h   http.Header
}

func (r *syncRecorder) Header() http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.h == nil {
		r.h = http.Header{}
	}
	return r.h
}
func (r *syncRecorder) WriteHeader(int) {}
func (r *syncRecorder) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(b)
}

// events are the Responses events written so far.
func (r *syncRecorder) events(t *testing.T) []responsesEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return parseResponseEvents(t, r.buf.Bytes())
}

// parseResponseEvents decodes the data lines of an event stream.
func parseResponseEvents(t *testing.T, b []byte) []responsesEvent {
	t.Helper()
	var out []responsesEvent
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var e responsesEvent
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			out = append(out, e)
		}
	}
	return out
}

// streamAll reads the events of background response id after startingAfter until the
// stream ends (5 s at most).
func streamAll(t *testing.T, g *Gateway, owner, id string, startingAfter int) ([]responsesEvent, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rec := &syncRecorder{}
	err := g.StreamBackgroundResponse(ctx, owner, id, startingAfter, rec)
	if ctx.Err() != nil {
		t.Fatalf("the stream of %s did not end", id)
	}
	return rec.events(t), err
}

// TestBackgroundStreamRecordsAndResumes: a background response asked with stream: true
// records its events with increasing sequence numbers from 0 (response.created first,
// response.completed last, the deltas making the answer); a reader that leaves does not
// stop the run; the whole stream is replayed once it completed; a resume after N gives
// exactly the events after N, on this gateway and on another one on the same store; a
// resume at the end gives nothing more.
func TestBackgroundStreamRecordsAndResumes(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "one two three four five", delay: 200 * time.Millisecond})
	o, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"Count.","background":true,"stream":true}`)
	if err != nil {
		t.Fatal(err)
	}
	// A reader that leaves at once (its client disconnected).
	gone, leave := context.WithCancel(context.Background())
	leave()
	if err := h.g.StreamBackgroundResponse(gone, "alice", o.ID, -1, &syncRecorder{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a reader that left: %v", err)
	}
	done := waitStatus(t, h.g, "alice", o.ID, "completed")
	if len(done.Output) != 1 || done.Output[0].Content[0].Text != "one two three four five" {
		t.Fatalf("completed: %+v", done)
	}
	all, err := streamAll(t, h.g, "alice", o.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 6 || all[0].Type != "response.created" || all[len(all)-1].Type != "response.completed" {
		t.Fatalf("events: %+v", all)
	}
	var text strings.Builder
	for i, e := range all {
		if e.SequenceNumber != i {
			t.Fatalf("event %d has sequence number %d", i, e.SequenceNumber)
		}
		if e.Type == "response.output_text.delta" {
			text.WriteString(*e.Delta)
		}
	}
	if text.String() != "one two three four five" || all[len(all)-1].Response.ID != o.ID || !all[len(all)-1].Response.Background {
		t.Fatalf("deltas %q, final %+v", text.String(), all[len(all)-1].Response)
	}
	// Another gateway on the same store (a replica) reads the store's copy.
	g2, err := New(Options{Providers: fakeRegistry{"a": h.a}, Prices: fakePrices{}, Store: h.store})
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close(context.Background())
	for _, g := range []*Gateway{h.g, g2} {
		tail, err := streamAll(t, g, "alice", o.ID, 3)
		if err != nil || len(tail) != len(all)-4 {
			t.Fatalf("resume after 3: %d events, %v; want %d", len(tail), err, len(all)-4)
		}
		for i, e := range tail {
			if e.SequenceNumber != all[4+i].SequenceNumber || e.Type != all[4+i].Type {
				t.Fatalf("resume after 3, event %d: %+v, want %+v", i, e, all[4+i])
			}
		}
		if end, err := streamAll(t, g, "alice", o.ID, len(all)-1); err != nil || len(end) != 0 {
			t.Fatalf("resume at the end: %+v %v", end, err)
		}
		if _, err := streamAll(t, g, "bob", o.ID, -1); !errors.Is(err, ErrResponseNotFound) {
			t.Fatalf("another owner streamed it: %v", err)
		}
	}
	// A deleted response's events go with it.
	if err := h.g.DeleteResponse(context.Background(), "alice", o.ID); err != nil {
		t.Fatal(err)
	}
	if left, err := h.store.List(context.Background(), store.ResponseEvents, store.ListOptions{Prefix: o.ID + "/"}); err != nil || len(left) != 0 {
		t.Fatalf("after delete, %d events left (%v)", len(left), err)
	}
}

// TestBackgroundStreamWaitsAndCancels: a resume after the last event waits for newer
// ones; a cancel during the stream ends it, for every reader, with response.cancelled
// (status cancelled) and cuts the upstream call; a reader on another replica ends so too.
func TestBackgroundStreamWaitsAndCancels(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "one two three four", stallAt: 2, stall: true})
	o, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"Go on.","background":true,"stream":true}`)
	if err != nil {
		t.Fatal(err)
	}
	// created, in_progress, output_item.added, content_part.added, two deltas: 0..5.
	live := &syncRecorder{}
	liveDone := make(chan error, 1)
	go func() { liveDone <- h.g.StreamBackgroundResponse(context.Background(), "alice", o.ID, -1, live) }()
	waitFor(t, "six events", func() bool { return len(live.events(t)) == 6 })
	g2, err := New(Options{Providers: fakeRegistry{"a": h.a}, Prices: fakePrices{}, Store: h.store})
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close(context.Background())
	waiting, remote := &syncRecorder{}, &syncRecorder{}
	waitDone, remoteDone := make(chan error, 1), make(chan error, 1)
	go func() { waitDone <- h.g.StreamBackgroundResponse(context.Background(), "alice", o.ID, 5, waiting) }()
	go func() { remoteDone <- g2.StreamBackgroundResponse(context.Background(), "alice", o.ID, 1, remote) }()
	waitFor(t, "the remote reader's events 2..5", func() bool { return len(remote.events(t)) == 4 })
	if n := len(waiting.events(t)); n != 0 {
		t.Fatalf("a reader after the last event got %d events before any new one", n)
	}
	if _, err := h.g.CancelResponse(context.Background(), "alice", o.ID); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]chan error{"live": liveDone, "waiting": waitDone, "remote": remoteDone} {
		select {
		case err := <-c:
			if err != nil {
				t.Fatalf("%s reader: %v", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the %s reader did not end", name)
		}
	}
	for name, rec := range map[string]*syncRecorder{"live": live, "waiting": waiting, "remote": remote} {
		ev := rec.events(t)
		last := ev[len(ev)-1]
		if last.Type != "response.cancelled" || last.SequenceNumber != 6 || last.Response.Status != "cancelled" {
			t.Fatalf("%s reader ended with %+v", name, last)
		}
		for _, e := range ev {
			if e.Type == "error" || e.Type == "response.failed" {
				t.Fatalf("%s reader got %s for a cancel", name, e.Type)
			}
		}
	}
	waitFor(t, "the upstream call cut", func() bool { return h.a.cancelled() == 1 })
	if got := waitStatus(t, h.g, "alice", o.ID, "cancelled"); got.Status != "cancelled" {
		t.Fatal(got.Status)
	}
}

// TestBackgroundStreamBound: past BackgroundStreamMaxEvents a stream's events are
// dropped but for its terminal one, which carries the whole answer; a resume from inside
// the dropped events is refused on starting_after (ErrStreamEventsDropped), one from
// before gives the kept events and the terminal one.
func TestBackgroundStreamBound(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.StoredResponses.BackgroundStreamMaxEvents = 5 })
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
	if len(all) != 5 || all[3].SequenceNumber != 3 || all[4].Type != "response.completed" || all[4].SequenceNumber <= 4 ||
		all[4].Response.Output[0].Content[0].Text != "a b c d e f g h i j" {
		t.Fatalf("bounded events: %+v", all)
	}
	_, err = streamAll(t, h.g, "alice", o.ID, 3)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "starting_after" || !errors.Is(err, ErrStreamEventsDropped) {
		t.Fatalf("resume inside the dropped events: %v", err)
	}
	tail, err := streamAll(t, h.g, "alice", o.ID, 1)
	if err != nil || len(tail) != 3 || tail[0].SequenceNumber != 2 || tail[2].Type != "response.completed" {
		t.Fatalf("resume after 1: %+v %v", tail, err)
	}
}

// TestBackgroundStreamRefusals: GET-streaming a response not asked with background and
// stream is a validation error naming stream.
func TestBackgroundStreamRefusals(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "ok"})
	sync, err := respond(t, h.g, "alice", `{"model":"a/m","input":"hi"}`)
	if err != nil {
		t.Fatal(err)
	}
	bg, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"hi","background":true}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{sync.ID, bg.ID} {
		_, err := streamAll(t, h.g, "alice", id, -1)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "stream" {
			t.Fatalf("stream of %s: %v", id, err)
		}
	}
}

// TestBackgroundRecordStoresMaskedInput: a background response's record never holds the
// input a pre_call guardrail masks: not when it is queued, not while it runs, not once it
// ended (its input items read masked), and its stream events do not either.
func TestBackgroundRecordStoresMaskedInput(t *testing.T) {
	f := newFake("a")
	f.on("m", step{text: "noted", delay: 300 * time.Millisecond})
	st := memstore.New()
	g, err := New(Options{Providers: fakeRegistry{"a": f}, Prices: fakePrices{}, Store: st,
		Guardrails: []GuardrailConfig{{Name: "pii", Kind: GuardrailPII, Mode: GuardrailPreCall, DefaultOn: true}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(context.Background())
	const email = "ann@example.com"
	for _, stream := range []string{"false", "true"} {
		o, err := startBackground(t, g, "alice", `{"model":"a/m","input":"mail `+email+` please","background":true,"stream":`+stream+`}`)
		if err != nil {
			t.Fatal(err)
		}
		check := func(when string) {
			t.Helper()
			b, err := st.Get(context.Background(), store.Responses, o.ID)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(email)) {
				t.Fatalf("stream %s: the record holds the unmasked input %s: %s", stream, when, b)
			}
		}
		check("when queued")
		waitStatus(t, g, "alice", o.ID, "in_progress")
		check("while running")
		waitStatus(t, g, "alice", o.ID, "completed")
		check("once completed")
		items, err := g.ResponseInputItems(context.Background(), "alice", o.ID)
		if err != nil || len(items) != 1 || !strings.Contains(items[0].Content.Parts[0].Text, "[EMAIL]") {
			t.Fatalf("stream %s: input items %+v %v", stream, items, err)
		}
		if sent := f.lastRequest().Messages[0].Content; strings.Contains(sent, email) {
			t.Fatalf("the upstream got %s", sent)
		}
		events, err := st.List(context.Background(), store.ResponseEvents, store.ListOptions{Prefix: o.ID + "/"})
		if err != nil || stream == "true" && len(events) == 0 {
			t.Fatalf("stream %s: %d events, %v", stream, len(events), err)
		}
		for _, e := range events {
			if bytes.Contains(e.Value, []byte(email)) {
				t.Fatalf("an event holds the unmasked input: %s", e.Value)
			}
		}
	}
}

// TestBackgroundStreamDelete: a delete of a streamed background response while it runs
// stops the run; its reader on the running gateway ends with response.cancelled, its
// reader on another gateway with an "error" event saying it was deleted.
func TestBackgroundStreamDelete(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "one two three four", stallAt: 2, stall: true})
	o, err := startBackground(t, h.g, "alice", `{"model":"a/m","input":"Go on.","background":true,"stream":true}`)
	if err != nil {
		t.Fatal(err)
	}
	g2, err := New(Options{Providers: fakeRegistry{"a": h.a}, Prices: fakePrices{}, Store: h.store})
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close(context.Background())
	local, remote := &syncRecorder{}, &syncRecorder{}
	localDone, remoteDone := make(chan error, 1), make(chan error, 1)
	go func() { localDone <- h.g.StreamBackgroundResponse(context.Background(), "alice", o.ID, -1, local) }()
	go func() { remoteDone <- g2.StreamBackgroundResponse(context.Background(), "alice", o.ID, -1, remote) }()
	waitFor(t, "the remote reader's six events", func() bool { return len(remote.events(t)) == 6 })
	if err := h.g.DeleteResponse(context.Background(), "alice", o.ID); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]chan error{"local": localDone, "remote": remoteDone} {
		select {
		case err := <-c:
			if err != nil {
				t.Fatalf("%s reader: %v", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the %s reader did not end", name)
		}
	}
	if ev := local.events(t); ev[len(ev)-1].Type != "response.cancelled" {
		t.Fatalf("the local reader ended with %+v", ev[len(ev)-1])
	}
	if ev := remote.events(t); ev[len(ev)-1].Type != "error" || ev[len(ev)-1].Code != "not_found" {
		t.Fatalf("the remote reader ended with %+v", ev[len(ev)-1])
	}
	waitFor(t, "the upstream call cut", func() bool { return h.a.cancelled() == 1 })
	if left, err := h.store.List(context.Background(), store.ResponseEvents, store.ListOptions{Prefix: o.ID + "/"}); err != nil || len(left) != 0 {
		t.Fatalf("after delete, %d events left (%v)", len(left), err)
	}
}
