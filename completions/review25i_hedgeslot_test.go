package completions

import (
	"context"
	"testing"
)

// A hedged start that lost is cancelled: its slot in flight is free at once, not held for
// as long as the winner's stream is open (another request can use that member meanwhile).
func TestReview25iHedgeLoserGivesItsSlotBack(t *testing.T) {
	h, _ := limitsHarness(t, map[string]ModelGroup{"g": {Models: []string{"a/m1", "b/m2"}, Limits: []MemberLimits{{MaxParallel: 1}, {MaxParallel: 1}}}})
	h.a.on("m1", step{hang: true}, step{text: "a answers"})
	h.b.on("m2", step{text: "b answers"})
	req := groupReq("g")
	req.Stream = true
	req.FaultPolicy.HedgeAfter = ptr(0.01) // a/m1 never answers: b/m2 is started and wins
	st, err := h.g.Stream(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	if st.Provider() != "b" {
		t.Fatalf("answered by %s, want b/m2 (a/m1 hangs)", st.Provider())
	}
	if a, b := inFlightOf(h.g, "a/m1"), inFlightOf(h.g, "b/m2"); a != 0 || b != 1 {
		t.Fatalf("with b/m2's stream open: in flight a/m1=%d b/m2=%d; want 0 (the loser was cancelled) and 1", a, b)
	}
	resp, err := h.g.Complete(context.Background(), Scope{}, groupReq("g"))
	if err != nil || resp.Provider != "a" {
		t.Fatalf("another request meanwhile: %v, %v; want a/m1 (its slot is free)", resp, err)
	}
	st.Close()
	if a, b := inFlightOf(h.g, "a/m1"), inFlightOf(h.g, "b/m2"); a != 0 || b != 0 {
		t.Fatalf("after the stream closed: in flight a/m1=%d b/m2=%d; want 0 and 0", a, b)
	}
}
