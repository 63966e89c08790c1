package usagelog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// fakeDownDriver is a test fake of a database that is unreachable for its first down
// transactions (a PostgreSQL restart under a replica), then answers.
type fakeDownDriver struct {
	store.Driver
	down atomic.Int64
}

func (d *fakeDownDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	if d.down.Add(-1) >= 0 {
		return errors.New("failed to connect: dial unix /tmp/pg/.s.PGSQL.5432: connect: no such file or directory")
	}
	return d.Driver.Update(ctx, fn)
}

// TestHistoryWritesAgainAfterStoreOutage: requests answered while the database restarts
// were dropped from the request history (/spend/logs) while the daily spend
// (/user/daily/activity) kept them for its next write, so the two disagreed; the writer
// now writes them again once the store answers.
func TestHistoryWritesAgainAfterStoreOutage(t *testing.T) {
	ctx := context.Background()
	d := &fakeDownDriver{Driver: memstore.NewDriver()}
	d.down.Store(7) // the batch of two and each request alone, twice, then one more
	h := NewHistory(store.New(d), HistoryOptions{RetryWait: time.Nanosecond})
	defer h.Close(ctx)
	now := time.Now().UTC()
	h.ObserveRequest(ctx, historyRecord("k", "", now.Add(-2*time.Second), 1))
	h.ObserveRequest(ctx, historyRecord("k", "", now.Add(-time.Second), 2))
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if h.Failed() != 0 {
		t.Fatalf("%d requests failed after an outage shorter than the retries", h.Failed())
	}
	listsAndCounts(t, h, "", RequestQuery{Owner: "k"}, 2)
}

// TestHistoryGivesUpAfterLongOutage: an outage longer than the retries still ends with the
// requests counted failed, not a writer stuck for ever.
func TestHistoryGivesUpAfterLongOutage(t *testing.T) {
	ctx := context.Background()
	d := &fakeDownDriver{Driver: memstore.NewDriver()}
	d.down.Store(1 << 40)
	h := NewHistory(store.New(d), HistoryOptions{RetryWait: time.Nanosecond})
	defer h.Close(ctx)
	h.ObserveRequest(ctx, historyRecord("k", "", time.Now().UTC(), 1))
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if h.Failed() != 1 {
		t.Fatalf("Failed() = %d, want 1", h.Failed())
	}
}

// retryLog is a test fake of a log/slog handler: it keeps every record's message and
// attributes as text, and closes retrying at the writer's first "writing again" warning
// (the writer is then in its retry wait).
type retryLog struct {
	mu       sync.Mutex
	lines    []string
	retrying chan struct{}
	once     sync.Once
}

func newRetryLog() *retryLog { return &retryLog{retrying: make(chan struct{})} }

func (l *retryLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *retryLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *retryLog) WithGroup(string) slog.Handler            { return l }
func (l *retryLog) Handle(_ context.Context, r slog.Record) error {
	line := r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool { line += " " + a.String(); return true })
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
	if strings.Contains(r.Message, "writing again") {
		l.once.Do(func() { close(l.retrying) })
	}
	return nil
}

// text is every line logged so far.
func (l *retryLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// TestHistoryCloseEndsRetryWait: a server stopping while its database was down waited in
// the history writer's retry (up to 16 s a wait, about 31 s a batch): Close returned at its
// ctx's end with "requests not written yet" while the writer slept on in the background,
// and nothing said which requests were lost. Close now ends the wait once its ctx has
// ended, the writer makes one last attempt and gives up, and each request not written is
// logged at error with its request id and model, counted in Failed and in Close's error.
func TestHistoryCloseEndsRetryWait(t *testing.T) {
	d := &fakeDownDriver{Driver: memstore.NewDriver()}
	d.down.Store(1 << 40)
	lg := newRetryLog()
	h := NewHistory(store.New(d), HistoryOptions{RetryWait: time.Hour, Logger: slog.New(lg)})
	now := time.Now().UTC()
	for i := range 3 {
		r := historyRecord("k", "", now.Add(time.Duration(i-3)*time.Second), i)
		r.RequestID = fmt.Sprint("chatcmpl-lost-", i)
		h.ObserveRequest(context.Background(), r)
	}
	<-lg.retrying // the writer waits an hour before trying again
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the shutdown's budget is spent
	err := h.Close(ctx)
	if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "3 requests not written") {
		t.Fatalf("Close: %v, want the 3 requests not written", err)
	}
	select {
	case <-h.done:
	default:
		t.Fatal("Close returned with the writer still waiting to retry")
	}
	if h.Failed() != 3 {
		t.Fatalf("Failed() = %d, want 3", h.Failed())
	}
	logged := lg.text()
	for i := range 3 {
		if !strings.Contains(logged, fmt.Sprint("ERROR usagelog: request history: a request was not saved owner=k request_id=chatcmpl-lost-", i, " model=openai/gpt-4o")) {
			t.Fatalf("request %d is not logged as not saved:\n%s", i, logged)
		}
	}
}

// TestHistoryCloseWritesWhatTheStoreTakes: a store that answers again by the time Close
// gives up waiting gets the queued requests in the writer's last attempt, rather than the
// writer sleeping through the rest of its retry wait while the process exits.
func TestHistoryCloseWritesWhatTheStoreTakes(t *testing.T) {
	d := &fakeDownDriver{Driver: memstore.NewDriver()}
	d.down.Store(1 << 40)
	lg := newRetryLog()
	h := NewHistory(store.New(d), HistoryOptions{RetryWait: time.Hour, Logger: slog.New(lg)})
	h.ObserveRequest(context.Background(), historyRecord("k", "", time.Now().UTC().Add(-time.Second), 1))
	<-lg.retrying
	d.down.Store(0) // the database is back
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if h.Failed() != 0 {
		t.Fatalf("Failed() = %d, want 0", h.Failed())
	}
	listsAndCounts(t, h, "after Close", RequestQuery{Owner: "k"}, 1)
}
