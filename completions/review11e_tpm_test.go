package completions

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Review 11e (1): RetryAfter is documented as "when enough of them leave the window", but it
// is when the *oldest* second leaves it. With 10 tokens long ago and 200 recently (limit 100),
// a client that waits RetryAfter and retries is refused again.
func TestReview11eRetryAfterWhenEnoughLeave(t *testing.T) {
	var sg spendGate
	b := NewBudget(BudgetLimits{TokensPerMinute: 100})
	t0 := time.Unix(1_800_000_000, 0)
	sg.used(b, 10, t0)
	sg.used(b, 200, t0.Add(50*time.Second))
	now := t0.Add(55 * time.Second)
	err := sg.rate(b, now)
	var te *TokenRateError
	if !errors.As(err, &te) {
		t.Fatalf("210 of 100 not refused: %v", err)
	}
	if err := sg.rate(b, now.Add(te.RetryAfter)); err != nil {
		t.Fatalf("retried after RetryAfter=%s and refused again: %v", te.RetryAfter, err)
	}
}

// Review 11e (2): the tokens-per-minute check runs once, before the spend gate's wait; a
// request that waited behind the key's first starts after that first answer used up the
// minute's tokens, without being checked again, and calls the upstream.
func TestReview11eWaiterRechecksTokenRate(t *testing.T) {
	p, release := heldProvider()
	h := newHarness(t, func(o *Options) {
		o.Providers = fakeRegistry{"a": p}
		o.RequestTimeout = 5 * time.Second
	})
	b := NewBudget(BudgetLimits{MaxTokens: 1000, TokensPerMinute: 15})
	ctx := context.Background()
	first := startHeld(h.g, p, b, nil)
	second := make(chan error, 1)
	go func() {
		r := userReq("hi", "a/m")
		r.ephemeral = true
		_, err := h.g.Complete(ctx, Scope{Budget: b, Received: time.Now()}, r)
		second <- err
	}()
	time.Sleep(100 * time.Millisecond) // the second is waiting behind the first
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("first: %v", err)
	}
	err := <-second
	if !errors.Is(err, ErrTokenRate) || p.calls.Load() != 1 {
		t.Fatalf("second started after the first used 20 of 15 tokens per minute: err=%v upstream calls=%d", err, p.calls.Load())
	}
}
