package completions

// Review 11d: a stream its caller closes early is charged by Close; a Recv made after
// that Close (the documented "Close may be called from any goroutine" race: the Close
// lands between two Recvs of the reading goroutine) reads the closed upstream's error and
// fail charges the stream a second time (budget and ledger) and rewrites the attempt.

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

func TestReview11dRecvAfterEarlyCloseChargesTwice(t *testing.T) {
	h := newHarness(t, nil)
	// After 3 fragments the upstream waits for more; once the stream is closed (its
	// context cancelled) it fails with a connection error, as a real upstream read on a
	// closed body does.
	h.a.on("long", step{text: "one two three four five six", stall: true, stallAt: 3,
		usage: providers.Usage{PromptTokens: 100, CompletionTokens: 100}})
	b := NewBudget(BudgetLimits{MaxTokens: 100000})
	ctx := context.Background()
	st, err := h.g.Stream(ctx, Scope{Budget: b}, userReq("hi", "a/long"))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := st.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	// Another goroutine closes the stream while the reader is between two Recvs.
	done := make(chan struct{})
	go func() { st.Close(); close(done) }()
	<-done
	afterClose := b.Used(ctx)
	ledgerAfterClose := len(h.ledger.all())
	if afterClose.Tokens == 0 || ledgerAfterClose != 1 {
		t.Fatalf("the early Close charged %+v, %d ledger entries; want one charge", afterClose, ledgerAfterClose)
	}
	// The reader's next Recv.
	if _, err := st.Recv(); err == nil {
		t.Fatal("Recv after Close returned a fragment")
	}
	if u := b.Used(ctx); u.Tokens != afterClose.Tokens {
		t.Errorf("a Recv after the early Close charged the stream again: %d tokens, then %d", afterClose.Tokens, u.Tokens)
	}
	if n := len(h.ledger.all()); n != ledgerAfterClose {
		t.Errorf("%d ledger entries after the Recv, want %d (one per stream)", n, ledgerAfterClose)
	}
	if a := st.p.attempts[len(st.p.attempts)-1]; a.Kind != "closed_early" {
		t.Errorf("the closed attempt was rewritten: %s/%s", a.Outcome, a.Kind)
	}
}

// A Close from another goroutine while Recv waits on the upstream (the case the 11c mend
// names) ends the Recv with the closed upstream's error, and fail records the healthy
// model's attempt as a failure ("error"/"connection", a warning logged) rather than as the
// caller's leaving ("cancelled"/"closed_early", as when no Recv runs): telemetry's
// attempts counter and traces count an error against the model for a client's choice.
func TestReview11dCloseDuringRecvRecordsAModelError(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("long", step{text: "one two three four five six", stall: true, stallAt: 3,
		usage: providers.Usage{PromptTokens: 100, CompletionTokens: 100}})
	ctx := context.Background()
	st, err := h.g.Stream(ctx, Scope{}, userReq("hi", "a/long"))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := st.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	errc := make(chan error, 1)
	go func() { _, err := st.Recv(); errc <- err }()
	time.Sleep(30 * time.Millisecond) // the Recv waits on the stalled upstream
	st.Close()
	<-errc
	a := st.p.attempts[len(st.p.attempts)-1]
	if a.Outcome != OutcomeCancelled {
		t.Errorf("the caller's Close recorded the attempt as %s/%s: %s", a.Outcome, a.Kind, a.Error)
	}
}
