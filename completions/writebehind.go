package completions

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// ConversationWrites says when a turn is written to the conversation store relative to the
// answer being sent.
type ConversationWrites int

const (
	// WriteThrough, the default, commits each turn before the response (or a stream's final
	// event) is sent: an answered turn is never lost. With a store that syncs to disk
	// (bbolt), every request then waits for a disk flush.
	WriteThrough ConversationWrites = iota
	// WriteBehind sends the answer once the turn is queued; a background writer commits the
	// queued turns together, normally within a disk flush or two. Reading a conversation
	// (Gateway.Conversation, or a request continuing it) first waits for its queued turns,
	// so callers always see their own turns. Gateway.Close commits what is queued; a crash
	// loses the queued turns (at most Options.WriteBehindQueue), never older ones. A turn
	// the writer cannot commit is logged at error level.
	WriteBehind
)

// String returns "through" or "behind".
func (w ConversationWrites) String() string {
	if w == WriteBehind {
		return "behind"
	}
	return "through"
}

// ParseConversationWrites parses "through" or "behind".
func ParseConversationWrites(s string) (ConversationWrites, error) {
	switch s {
	case "through", "":
		return WriteThrough, nil
	case "behind":
		return WriteBehind, nil
	}
	return 0, errors.New(`conversation writes must be "through" or "behind"`)
}

// maxWriteBatch bounds the turns committed in one transaction.
const maxWriteBatch = 256

// errWriterClosed is returned by enqueue after Close; the caller then writes through.
var errWriterClosed = errors.New("completions: conversation writer closed")

// turnJob is one queued turn: apply writes it within a transaction.
type turnJob struct {
	convID string
	apply  func(ctx context.Context, tx store.Tx) error
}

// pendingTurns counts a conversation's queued turns; done closes when none is left.
type pendingTurns struct {
	n    int
	done chan struct{}
}

// turnWriter commits queued turns in the background (WriteBehind).
type turnWriter struct {
	st  *store.Store
	log *slog.Logger

	jobs chan turnJob

	mu       sync.Mutex
	closed   bool
	sending  sync.WaitGroup // enqueue calls between the closed check and the send
	pending  map[string]*pendingTurns
	finished chan struct{} // closed when run has committed everything and returned
}

func newTurnWriter(st *store.Store, queue int, log *slog.Logger) *turnWriter {
	w := &turnWriter{st: st, log: log, jobs: make(chan turnJob, queue), pending: map[string]*pendingTurns{},
		finished: make(chan struct{})}
	go w.run()
	return w
}

// enqueue queues a turn, waiting while the queue is full. It fails with errWriterClosed
// after Close, or with ctx's error.
func (w *turnWriter) enqueue(ctx context.Context, j turnJob) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errWriterClosed
	}
	w.sending.Add(1)
	p := w.pending[j.convID]
	if p == nil {
		p = &pendingTurns{done: make(chan struct{})}
		w.pending[j.convID] = p
	}
	p.n++
	w.mu.Unlock()
	defer w.sending.Done()
	// Room in the queue takes the turn even if ctx just ended: the answer was delivered.
	select {
	case w.jobs <- j:
		return nil
	default:
	}
	select {
	case w.jobs <- j:
		return nil
	case <-ctx.Done():
		w.settle(j.convID)
		return ctx.Err()
	}
}

// settle marks one of convID's turns as no longer queued.
func (w *turnWriter) settle(convID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.pending[convID]
	if p == nil {
		return
	}
	if p.n--; p.n == 0 {
		close(p.done)
		delete(w.pending, convID)
	}
}

// await returns once convID has no queued turns, or with ctx's error.
func (w *turnWriter) await(ctx context.Context, convID string) error {
	w.mu.Lock()
	p := w.pending[convID]
	w.mu.Unlock()
	if p == nil {
		return nil
	}
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *turnWriter) run() {
	defer close(w.finished)
	for j := range w.jobs {
		batch := []turnJob{j}
	more:
		for len(batch) < maxWriteBatch {
			select {
			case j, ok := <-w.jobs:
				if !ok {
					break more
				}
				batch = append(batch, j)
			default:
				break more
			}
		}
		w.commit(batch)
	}
}

// commit writes batch in one transaction; when that fails it writes the turns one by one,
// so one bad turn does not take the others with it.
func (w *turnWriter) commit(batch []turnJob) {
	defer func() {
		for _, j := range batch {
			w.settle(j.convID)
		}
	}()
	write := func(jobs []turnJob) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return w.st.Update(ctx, func(tx store.Tx) error {
			for _, j := range jobs {
				if err := j.apply(ctx, tx); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := write(batch); err == nil || len(batch) == 1 {
		if err != nil {
			w.log.Error("completions: conversation turn not saved", "conversation", batch[0].convID, "err", err)
		}
		return
	}
	for _, j := range batch {
		if err := write([]turnJob{j}); err != nil {
			w.log.Error("completions: conversation turn not saved", "conversation", j.convID, "err", err)
		}
	}
}

// close stops accepting turns and returns once the queued ones are committed, or with
// ctx's error (the writer then goes on committing in the background).
func (w *turnWriter) close(ctx context.Context) error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		w.mu.Unlock()
		go func() {
			w.sending.Wait()
			close(w.jobs)
		}()
	} else {
		w.mu.Unlock()
	}
	select {
	case <-w.finished:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
