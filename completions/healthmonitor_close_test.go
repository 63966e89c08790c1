package completions

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestHealthMonitorCloseWaits: Close stops the loop Start launched and returns only once it
// has returned: a round under way (a check that answers only when its context ends) is cut
// short and dropped, and what the loop does after it (here its wait for the next round,
// counted without a lock, so the race detector sees a loop still running) happened before
// Close returned. A second Close returns at once.
func TestHealthMonitorCloseWaits(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"grp": {Models: []string{"a/stuck"}}}
	})
	h.a.on("stuck", step{hang: true})
	waits := 0 // written by the loop, read after Close: no lock, on purpose
	m, err := NewHealthMonitor(h.g, HealthMonitorOptions{Interval: time.Hour,
		After: func(time.Duration) <-chan time.Time { waits++; return make(chan time.Time) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for h.a.callCount("stuck") == 0 { // the round is under way
		time.Sleep(time.Millisecond)
	}
	m.Close()
	if waits != 1 {
		t.Errorf("the loop reached its wait %d times before Close returned, want 1 (the cut round's end)", waits)
	}
	if _, ok := m.Latest(); ok {
		t.Error("the round cut short by Close was kept")
	}
	m.Close()
}

// TestHealthMonitorStartAfterClose: as net/http's Server after Close, a closed monitor's
// Start fails with ErrHealthMonitorClosed and checks nothing (Close before any Start
// included), and a second Start while the loop runs fails with ErrHealthMonitorStarted
// rather than launch a second loop.
func TestHealthMonitorStartAfterClose(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"grp": {Models: []string{"a/ok"}}}
	})
	h.a.on("ok", step{text: "ok"})
	newMonitor := func() *HealthMonitor {
		m, err := NewHealthMonitor(h.g, HealthMonitorOptions{Interval: time.Hour,
			After: func(time.Duration) <-chan time.Time { return make(chan time.Time) }})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}

	never := newMonitor()
	never.Close()
	if err := never.Start(context.Background()); !errors.Is(err, ErrHealthMonitorClosed) {
		t.Errorf("Start after a Close without Start: %v, want ErrHealthMonitorClosed", err)
	}

	m := newMonitor()
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(context.Background()); !errors.Is(err, ErrHealthMonitorStarted) {
		t.Errorf("a second Start: %v, want ErrHealthMonitorStarted", err)
	}
	for h.a.callCount("ok") == 0 { // the first round checked
		time.Sleep(time.Millisecond)
	}
	m.Close()
	calls := h.a.callCount("ok")
	if err := m.Start(context.Background()); !errors.Is(err, ErrHealthMonitorClosed) {
		t.Errorf("Start after Close: %v, want ErrHealthMonitorClosed", err)
	}
	m.Close() // returns at once: nothing runs
	if got := h.a.callCount("ok"); got != calls {
		t.Errorf("a Start after Close checked %d more times, want none", got-calls)
	}
}
