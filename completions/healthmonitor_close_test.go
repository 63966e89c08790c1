package completions

import (
	"context"
	"testing"
	"time"
)

// TestHealthMonitorCloseWaits: Close stops the loop Start launched and returns only once it
// has returned: a round under way (a check that answers only when its context ends) is cut
// short and dropped, and what the loop does after it (here its wait for the next round,
// counted without a lock, so the race detector sees a loop still running) happened before
// Close returned. Close before Start and a second Close return at once.
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
	m.Close() // not started: returns at once
	m.Start(context.Background())
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
