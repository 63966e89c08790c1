package completions

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestSetRoutesSwapsGroups: a group added by SetRoutes answers, one removed is no longer a
// model, a bad table is refused whole (the one in force stays), and a member of an unknown
// provider is refused.
func TestSetRoutesSwapsGroups(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"old": {Models: []string{"a/m1"}}}
	})
	h.a.on("m1", step{text: "from a"})
	h.b.on("m2", step{text: "from b"})
	ctx := context.Background()
	ask := func(model string) (*Response, error) {
		return h.g.Complete(ctx, Scope{}, chatRequest(t, `{"model":"`+model+`","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`))
	}
	if err := h.g.SetRoutes(Routes{ModelGroups: map[string]ModelGroup{"new": {Models: []string{"b/m2"}}}, Stored: map[string]string{DeploymentID("new", "b/m2"): "dep-1"}}); err != nil {
		t.Fatal(err)
	}
	if resp, err := ask("new"); err != nil || resp.Provider != "b" || resp.ModelGroup != "new" {
		t.Fatalf("the added group: %+v, %v", resp, err)
	}
	var ve *ValidationError
	if _, err := ask("old"); !errors.As(err, &ve) {
		t.Fatalf("the removed group: %v, want a validation error (no such model)", err)
	}
	if !h.g.IsModelGroup("new") || h.g.IsModelGroup("old") {
		t.Errorf("groups now: %v", h.g.ModelGroups())
	}
	var stored bool
	for _, d := range h.g.Deployments() {
		if d.ModelName == "new" {
			stored = d.Stored && d.ID == "dep-1"
		}
	}
	if !stored {
		t.Errorf("the stored member is not listed as stored with its id: %+v", h.g.Deployments())
	}
	for _, bad := range []map[string]ModelGroup{
		{"x": {Models: nil}},
		{"x": {Models: []string{"nosuch/m"}}},
		{"x": {Models: []string{"a/m1"}, Limits: []MemberLimits{{RPM: 1}}}, "y": {Models: []string{"a/m1"}, Limits: []MemberLimits{{RPM: 2}}}},
	} {
		if err := h.g.SetRoutes(Routes{ModelGroups: bad}); !errors.Is(err, ErrInvalid) {
			t.Errorf("SetRoutes(%v) = %v, want ErrInvalid", bad, err)
		}
	}
	if resp, err := ask("new"); err != nil || resp.Provider != "b" {
		t.Fatalf("after refused swaps the table in force changed: %+v, %v", resp, err)
	}
}

// TestSetRoutesKeepsCountsAndInFlightTable: a member whose limits are unchanged keeps its
// calls in flight across a swap, and a request under way keeps the table it started with
// (its slot is given back to the counts it took it from, not to the new table's).
func TestSetRoutesKeepsCountsAndInFlightTable(t *testing.T) {
	limited := map[string]ModelGroup{"g": {Models: []string{"a/m1"}, Limits: []MemberLimits{{MaxParallel: 5}}}}
	h := newHarness(t, func(o *Options) { o.ModelGroups = limited })
	h.a.on("m1", step{text: "held", delay: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := h.g.Complete(ctx, Scope{}, chatRequest(t, `{"model":"g","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`))
		done <- err
	}()
	for inFlightOf(h.g, "a/m1") != 1 {
		time.Sleep(time.Millisecond)
	}
	old := h.g.routes().limits.of("a/m1")
	if err := h.g.SetRoutes(Routes{ModelGroups: limited}); err != nil {
		t.Fatal(err)
	}
	if n := inFlightOf(h.g, "a/m1"); n != 1 {
		t.Errorf("after a swap with the same limits: %d in flight, want the 1 carried over", n)
	}
	// New limits: new counts; the request under way gives its slot back to the old ones.
	if err := h.g.SetRoutes(Routes{ModelGroups: map[string]ModelGroup{"g": {Models: []string{"a/m1"}, Limits: []MemberLimits{{MaxParallel: 7}}}}}); err != nil {
		t.Fatal(err)
	}
	if n := inFlightOf(h.g, "a/m1"); n != 0 {
		t.Errorf("new limits: %d in flight, want 0 (counted anew)", n)
	}
	cancel()
	<-done
	old.mu.Lock()
	n := old.inFlight
	old.mu.Unlock()
	if n != 0 {
		t.Errorf("the request that ended left %d in flight on the table it started with", n)
	}
}

// TestSetRoutesUnderConcurrentRequests: requests run while tables are swapped (run with
// -race): each answers from a member of a table in force while it ran.
func TestSetRoutesUnderConcurrentRequests(t *testing.T) {
	tables := []map[string]ModelGroup{
		{"g": {Models: []string{"a/m1"}, Limits: []MemberLimits{{RPM: 100000, MaxParallel: 50}}}},
		{"g": {Models: []string{"b/m2"}, Timeouts: []MemberTimeouts{{Timeout: 30}}}},
	}
	h := newHarness(t, func(o *Options) { o.ModelGroups = tables[0] })
	h.a.on("m1", step{text: "a"})
	h.b.on("m2", step{text: "b"})
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				resp, err := h.g.Complete(ctx, Scope{}, chatRequest(t, `{"model":"g","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`))
				if err != nil {
					errs <- err
					return
				}
				if resp.Provider != "a" && resp.Provider != "b" {
					errs <- fmt.Errorf("answered by %q", resp.Provider)
				}
			}
		}()
	}
	for i := 0; i < 50; i++ {
		if err := h.g.SetRoutes(Routes{ModelGroups: tables[i%2]}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := h.g.SetRoutes(Routes{ModelGroups: tables[0]}); err != nil {
		t.Fatal(err)
	}
	if n := inFlightOf(h.g, "a/m1"); n != 0 {
		t.Errorf("%d in flight after every request ended", n)
	}
}
