package completions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
)

// A background response asked with stream: true (OpenAI's background streaming) records
// the events of its stream as its run makes them: in this process (eventLog, which the
// request that started it and the GETs of this replica follow at once) and in the store
// (store.ResponseEvents, keyed response id/sequence number, written every
// backgroundFlushEvery and with the run's end), so that GET
// /v1/responses/{id}?stream=true&starting_after=N on any replica replays the events after N
// and follows the new ones (polling the store every backgroundFollowEvery) until the
// terminal event. The run does not depend on any client: only a cancel or a delete stops
// it. The record is bounded (BackgroundStreamMaxEvents, BackgroundStreamMaxBytes): past
// the bound the stream's further events are dropped, but for the terminal event, which
// carries the whole response; a resume from inside the dropped range is refused
// (ErrStreamEventsDropped, naming starting_after), one at or past the terminal event is
// not. A stream has one history: a cancel asked on another replica stops the run at its
// next flush (which then writes nothing), and the run stores the events it made and a
// response.cancelled after them, which the readers elsewhere wait for; only a run whose
// process died (its heartbeat stale) gets its terminal event from a reader, stored once.

// DefaultBackgroundStreamMaxEvents and DefaultBackgroundStreamMaxBytes bound the events a
// background stream records per response by default.
const (
	DefaultBackgroundStreamMaxEvents = 10000
	DefaultBackgroundStreamMaxBytes  = 8 << 20
)

// How often a run writes its new events to the store, and how often a follower on another
// replica reads them.
const (
	backgroundFlushEvery  = 100 * time.Millisecond
	backgroundFollowEvery = 150 * time.Millisecond
)

// backgroundStream is what a streamed background response's record says of its events.
type backgroundStream struct {
	// DroppedFrom is the first sequence number not recorded (the bound was reached), 0
	// when none was dropped.
	DroppedFrom int `json:"dropped_from,omitempty"`
}

// streamFrame is one recorded event: its sequence number and its server-sent event bytes.
type streamFrame struct {
	seq  int
	data []byte
}

// eventLog is the events of one background stream run by this process.
type eventLog struct {
	maxEvents int
	maxBytes  int
	mu        sync.Mutex
	frames    []streamFrame // recorded, in order
	next      int           // the next sequence number
	bytes     int
	dropped   int  // first sequence number dropped, 0: none
	held      int  // frames[:len-held] are visible; a terminal frame waits for seal
	stored    int  // frames[:stored] are in the store
	sealed    bool // the terminal frame is visible: nothing follows
	changed   chan struct{}
	stopped   bool // the run was cancelled: what the writer still sends is not recorded
	// cut, when set, reports that the run was cut: what the writer then sends (its report
	// of the cut as a failure) is not recorded.
	cut func() bool
	// storedDropped is the drop mark last written to the store.
	storedDropped int
}

// setCut sets l's cut.
func (l *eventLog) setCut(cut func() bool) {
	l.mu.Lock()
	l.cut = cut
	l.mu.Unlock()
}

func newEventLog(maxEvents, maxBytes int) *eventLog {
	return &eventLog{maxEvents: maxEvents, maxBytes: maxBytes, changed: make(chan struct{})}
}

// terminalEvent reports whether an event of type t ends a Responses stream.
func terminalEvent(t string) bool {
	switch t {
	case "response.completed", "response.incomplete", "response.failed", "response.cancelled":
		return true
	}
	return false
}

// frameType is the event type of an SSE frame ("event: <type>\n...").
func frameType(b []byte) string {
	rest, ok := bytes.CutPrefix(b, []byte("event: "))
	if !ok {
		return ""
	}
	t, _, _ := bytes.Cut(rest, []byte("\n"))
	return string(t)
}

// Header, WriteHeader and Write make eventLog the http.ResponseWriter the stream writers
// write to: each Write is one event (SSEWriter writes one frame per call).
func (l *eventLog) Header() http.Header { return http.Header{} }

// WriteHeader is a no-op: the log has no status.
func (l *eventLog) WriteHeader(int) {}

// Write records one event frame.
func (l *eventLog) Write(b []byte) (int, error) {
	l.add(frameType(b), b)
	return len(b), nil
}

// add records a frame of event type t with the next sequence number; a terminal frame
// waits for seal. Past the bound a non-terminal frame is dropped.
func (l *eventLog) add(t string, b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sealed || l.stopped || l.cut != nil && l.cut() {
		return
	}
	seq := l.next
	l.next++
	if terminalEvent(t) {
		l.frames = append(l.frames, streamFrame{seq: seq, data: bytes.Clone(b)})
		l.held = 1
		return
	}
	if l.dropped > 0 || len(l.frames) >= l.maxEvents-1 || l.bytes+len(b) > l.maxBytes {
		if l.dropped == 0 {
			l.dropped = seq
		}
		return
	}
	l.frames = append(l.frames, streamFrame{seq: seq, data: bytes.Clone(b)})
	l.bytes += len(b)
	l.notify()
}

// stop makes the log record nothing more the stream writer sends (a cancelled run's).
func (l *eventLog) stop() {
	l.mu.Lock()
	l.stopped = true
	if l.held > 0 { // a terminal event the writer sent as the run was cut
		l.frames, l.held = l.frames[:len(l.frames)-1], 0
		l.next--
	}
	l.mu.Unlock()
}

// appendTerminal records the terminal event of o (status cancelled or failed) when the
// stream writer did not send one.
func (l *eventLog) appendTerminal(o *ResponseObject) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held > 0 || l.sealed {
		return
	}
	t := "response.failed"
	switch o.Status {
	case "cancelled":
		t = "response.cancelled"
	case "completed":
		t = "response.completed"
	case "incomplete":
		t = "response.incomplete"
	}
	done := *o
	l.frames = append(l.frames, streamFrame{seq: l.next, data: encodeFrame(responsesEvent{Type: t, SequenceNumber: l.next, Response: &done})})
	l.next++
	l.held = 1
}

// encodeFrame is e as an SSE frame, as SSEWriter writes it.
func encodeFrame(e responsesEvent) []byte {
	var buf bytes.Buffer
	buf.WriteString("event: " + e.Type + "\ndata: ")
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(e)
	buf.WriteByte('\n')
	return buf.Bytes()
}

// seal makes the terminal frame visible: the log is whole.
func (l *eventLog) seal() {
	l.mu.Lock()
	l.held, l.sealed = 0, true
	l.notify()
	l.mu.Unlock()
}

// notify wakes the followers (l.mu held).
func (l *eventLog) notify() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// unstored returns the frames not yet in the store (with the held terminal one when all
// is true) and the drop mark; markStored says they were written.
func (l *eventLog) unstored(all bool) ([]streamFrame, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	end := len(l.frames) - l.held
	if all {
		end = len(l.frames)
	}
	return append([]streamFrame(nil), l.frames[l.stored:max(end, l.stored)]...), l.dropped
}

// markStored says n more frames and the drop mark dropped were written.
func (l *eventLog) markStored(n, dropped int) {
	l.mu.Lock()
	l.stored += n
	l.storedDropped = dropped
	l.mu.Unlock()
}

// storedDrop is the drop mark last written to the store.
func (l *eventLog) storedDrop() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.storedDropped
}

// after returns the visible frames after sequence number seq (found by binary search: the
// frames are in order, and a follower asks for the few new ones at each wake-up), whether
// the log is whole (sealed), and a channel closed at its next change. The frames returned
// are the log's own, never changed once visible: the caller only reads them.
func (l *eventLog) after(seq int) ([]streamFrame, bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	end := len(l.frames) - l.held
	i := sort.Search(end, func(i int) bool { return l.frames[i].seq > seq })
	return l.frames[i:end:end], l.sealed, l.changed
}

// terminalSeq is the sequence number of the log's terminal event once visible, -1 before.
func (l *eventLog) terminalSeq() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.sealed || len(l.frames) == 0 {
		return -1
	}
	return l.frames[len(l.frames)-1].seq
}

// droppedFrom is the first sequence number dropped (0: none).
func (l *eventLog) droppedFrom() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropped
}

// eventKey is the store key of event seq of response id.
func eventKey(id string, seq int) string { return fmt.Sprintf("%s/%010d", id, seq) }

// putFrames writes frames of response id in tx (and the drop mark into cur when set).
func putFrames(ctx context.Context, tx store.Tx, id string, frames []streamFrame) error {
	for _, f := range frames {
		if err := tx.Put(ctx, store.ResponseEvents, eventKey(id, f.seq), f.data); err != nil {
			return err
		}
	}
	return nil
}

// flushEvents writes the new events of log (response id, run runID) to the store, when
// there are new ones or a new drop mark. A record cancelled (here or on another replica)
// takes no more events: the run is cut at once (cancel) and, as it ends, stores the events
// it made and its response.cancelled after them (storeCancelledTerminal), the one history
// every reader replays.
func (g *Gateway) flushEvents(ctx context.Context, id, runID string, log *eventLog, cancel context.CancelCauseFunc) error {
	frames, dropped := log.unstored(false)
	if len(frames) == 0 && dropped == log.storedDrop() {
		return nil
	}
	cancelled := false
	wrote, err := g.updateRun(ctx, id, runID, func(cur *storedResponse) bool {
		cancelled = cur.Run.CancelRequested || !unfinished(cur.Response.Status)
		if cancelled {
			return false
		}
		if cur.Stream != nil && dropped > 0 {
			cur.Stream.DroppedFrom = dropped
		}
		return true
	}, frames)
	if err == nil && wrote {
		log.markStored(len(frames), dropped)
	}
	if err == nil && cancelled && cancel != nil {
		cancel(errBackgroundCancelled)
	}
	return err
}

// storedTerminalSeq is the sequence number of the terminal event stored for response id,
// -1 when none is.
func storedTerminalSeq(ctx context.Context, r store.Reader, id string) (int, error) {
	last, err := r.List(ctx, store.ResponseEvents, store.ListOptions{Prefix: id + "/", Descending: true, Limit: 1})
	if err != nil {
		return -1, fmt.Errorf("completions: read the events of response %s: %w", id, err)
	}
	if len(last) == 1 && terminalEvent(frameType(last[0].Value)) {
		if seq, err := strconv.Atoi(last[0].Key[len(id)+1:]); err == nil {
			return seq, nil
		}
	}
	return -1, nil
}

// lastStoredSeq is the sequence number of the last event stored for response id, -1 when
// none is.
func lastStoredSeq(ctx context.Context, r store.Reader, id string) (int, error) {
	last, err := r.List(ctx, store.ResponseEvents, store.ListOptions{Prefix: id + "/", Descending: true, Limit: 1})
	if err != nil {
		return -1, fmt.Errorf("completions: read the events of response %s: %w", id, err)
	}
	if len(last) == 1 {
		if seq, err := strconv.Atoi(last[0].Key[len(id)+1:]); err == nil {
			return seq, nil
		}
	}
	return -1, nil
}

// ErrStreamEventsDropped means a resume asked for events a background stream did not
// record (past BackgroundStreamMaxEvents or BackgroundStreamMaxBytes).
var ErrStreamEventsDropped = invalid("starting_after", "the events asked for were not kept")

// backgroundStreamBounds are the configured bounds of a background stream's record.
func (g *Gateway) backgroundStreamBounds() (events, bytes int) {
	events, bytes = g.opts.StoredResponses.BackgroundStreamMaxEvents, g.opts.StoredResponses.BackgroundStreamMaxBytes
	if events <= 0 {
		events = DefaultBackgroundStreamMaxEvents
	}
	if bytes <= 0 {
		bytes = DefaultBackgroundStreamMaxBytes
	}
	return events, bytes
}

// StreamStartedError is StreamBackgroundResponse's error once it has started writing the
// event stream: the caller can no longer answer with an error status.
type StreamStartedError struct{ Err error }

// Error says the stream broke, and why.
func (e *StreamStartedError) Error() string {
	return "completions: the event stream broke: " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *StreamStartedError) Unwrap() error { return e.Err }

// StreamBackgroundResponse writes the stream events of background response id of owner
// to w as server-sent events: those after sequence number startingAfter (-1: all), then
// the new ones as its run makes them, until its terminal event (response.completed,
// response.incomplete, response.failed or response.cancelled) or ctx ends — which stops
// only this reader, never the run. On the replica running it the events come at once;
// on another they are read from the store every 150 ms. Before anything is written: an
// unknown id matches ErrResponseNotFound; a response not asked with background and
// stream is a *ValidationError on stream; a startingAfter inside the events the record
// dropped (its bound reached) one on starting_after. Once the stream started, an error
// (ctx's among them) is a *StreamStartedError; a response deleted meanwhile ends the
// stream with an "error" event.
func (g *Gateway) StreamBackgroundResponse(ctx context.Context, owner, id string, startingAfter int, w http.ResponseWriter) error {
	rec, err := g.storedResponse(ctx, owner, id)
	if err != nil {
		return err
	}
	if rec.Stream == nil {
		return invalid("stream", "response %q was not created with background: true and stream: true: only such a response can be streamed; read it with GET /v1/responses/{response_id} without stream", id)
	}
	log := g.bg.log(id)
	dropped := rec.Stream.DroppedFrom
	if log != nil {
		dropped = log.droppedFrom()
	}
	// Refused: a resume that would skip a dropped event, i.e. one at or after dropped-1
	// and before the terminal event's predecessor (the terminal, which carries the whole
	// response, is kept; at or past it the stream ends at once).
	if dropped > 0 && startingAfter >= dropped-1 {
		end := -1
		if log != nil {
			end = log.terminalSeq()
		}
		if end < 0 {
			if end, err = storedTerminalSeq(ctx, g.opts.Store, id); err != nil {
				return err
			}
		}
		if end >= 0 && startingAfter >= end-1 {
			dropped = 0
		}
	}
	if dropped > 0 && startingAfter >= dropped-1 {
		maxEvents, maxBytes := g.backgroundStreamBounds()
		ve := invalid("starting_after", "the events of response %q after sequence number %d were not kept (a background stream records at most %d events and %d bytes; its terminal event, with the whole response, is kept): resume from an earlier sequence number, or read the response with GET /v1/responses/{response_id} without stream", id, dropped-1, maxEvents, maxBytes)
		ve.Err = ErrStreamEventsDropped
		return ve
	}
	sse := NewSSEWriter(w)
	out := &frameWriter{w: w, sse: sse, after: startingAfter}
	if log != nil {
		err = out.followLocal(ctx, log)
	} else {
		err = g.followStored(ctx, owner, id, out)
	}
	if err != nil {
		return &StreamStartedError{Err: err}
	}
	return nil
}

// frameWriter sends recorded frames to a client, each once, in order.
type frameWriter struct {
	w     http.ResponseWriter
	sse   *SSEWriter
	after int  // the last sequence number sent
	ended bool // a terminal event was sent
}

func (f *frameWriter) send(frames []streamFrame) error {
	for _, fr := range frames {
		if fr.seq <= f.after || f.ended {
			continue
		}
		if _, err := f.w.Write(fr.data); err != nil {
			return err
		}
		f.after, f.ended = fr.seq, terminalEvent(frameType(fr.data))
	}
	return f.sse.Flush()
}

// followLocal follows a log of this process until its terminal event or ctx ends.
func (f *frameWriter) followLocal(ctx context.Context, log *eventLog) error {
	for !f.ended {
		frames, sealed, changed := log.after(f.after)
		if err := f.send(frames); err != nil {
			return err
		}
		if sealed || f.ended {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
	return nil
}

// followStored follows the events of response id in the store until its terminal event or
// ctx ends. A response cancelled while its run (on another replica) lives waits for the
// events and the response.cancelled the run stores as it stops; one whose run ended
// without storing a terminal event (its process died) gets one made from the record,
// stored after its events (storeTerminalFromRecord) so that every reader replays it.
func (g *Gateway) followStored(ctx context.Context, owner, id string, f *frameWriter) error {
	for {
		if err := g.sendStored(ctx, id, f); err != nil || f.ended {
			return err
		}
		rec, err := g.storedResponse(ctx, owner, id)
		if errors.Is(err, ErrResponseNotFound) {
			// Deleted while read (its run stopped): the stream ends saying so.
			gone := responsesErrorEvent("not_found", fmt.Sprintf("response %q was deleted", id))
			gone.SequenceNumber = f.after + 1
			if _, err := f.w.Write(encodeFrame(gone)); err != nil {
				return err
			}
			return f.sse.Flush()
		}
		if err != nil {
			return err
		}
		if !unfinished(rec.Response.Status) {
			if err := g.sendStored(ctx, id, f); err != nil || f.ended {
				return err
			}
			end, err := storedTerminalSeq(ctx, g.opts.Store, id)
			if err != nil {
				return err
			}
			if end >= 0 {
				return f.sse.Flush() // it ended, and the client has seen all (starting_after at or past its end)
			}
			if !g.runGone(id, rec) {
				// Cancelled while its run (on another replica) is alive: the run stops at
				// once it sees the cancel and stores its events and its response.cancelled
				// after them; wait for those, the one history every reader replays.
			} else if err := g.storeTerminalFromRecord(ctx, id); err != nil {
				return err
			} else {
				continue
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backgroundFollowEvery):
		}
	}
}

// runGone reports whether the run of the ended record rec (response id) will store no
// more events: it is not alive (no run, or a heartbeat older than BackgroundStaleAfter).
func (g *Gateway) runGone(id string, rec *storedResponse) bool {
	if rec.Run == nil || rec.Response.Status != "cancelled" {
		return true // a run stores its other ends with their terminal event, at once
	}
	if g.bg.running(id) {
		return false
	}
	dead, _ := jobqueue.Stale(rec.Run.Heartbeat, time.Now(), g.backgroundStaleAfter())
	return dead
}

// storeTerminalFromRecord stores, after the stored events of response id, the terminal
// event made from its ended record, unless one is stored: for a run that ended without
// storing one (its process died). Every reader then replays that one.
func (g *Gateway) storeTerminalFromRecord(ctx context.Context, id string) error {
	err := g.opts.Store.Update(ctx, func(tx store.Tx) error {
		cur, err := readRecord(ctx, tx, id)
		if err != nil || cur == nil || unfinished(cur.Response.Status) {
			return err
		}
		if end, err := storedTerminalSeq(ctx, tx, id); err != nil || end >= 0 {
			return err
		}
		last, err := lastStoredSeq(ctx, tx, id)
		if err != nil {
			return err
		}
		l := newEventLog(1, 0)
		l.next = last + 1
		l.appendTerminal(cur.Response)
		return putFrames(ctx, tx, id, l.frames)
	})
	if err != nil {
		return fmt.Errorf("completions: store the end of the stream of response %s: %w", id, err)
	}
	return nil
}

// sendStored sends the stored events of response id after f.after.
func (g *Gateway) sendStored(ctx context.Context, id string, f *frameWriter) error {
	for {
		entries, err := g.opts.Store.List(ctx, store.ResponseEvents, store.ListOptions{Prefix: id + "/", After: eventKey(id, f.after), Limit: 256})
		if err != nil {
			return fmt.Errorf("completions: read the events of response %s: %w", id, err)
		}
		frames := make([]streamFrame, 0, len(entries))
		for _, e := range entries {
			seq, err := strconv.Atoi(e.Key[len(id)+1:])
			if err != nil {
				continue
			}
			frames = append(frames, streamFrame{seq: seq, data: e.Value})
		}
		if err := f.send(frames); err != nil {
			return err
		}
		if len(entries) < 256 || f.ended {
			return nil
		}
	}
}
