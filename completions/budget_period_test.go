package completions

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestBudgetCostAndPeriod: a USD bound stops a budget once its cost reaches it, and with
// ResetEvery the account starts afresh a whole number of periods after its first use, in
// memory and in the store alike.
func TestBudgetCostAndPeriod(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)
	limits := BudgetLimits{MaxCostUSD: 0.05, ResetEvery: 24 * time.Hour}
	shared, err := CreateSharedBudget(ctx, memstore.New(), "key/t", limits)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*Budget{"memory": NewBudget(limits), "shared": shared} {
		now := start
		b.now = func() time.Time { return now }
		for i := range 2 { // 0 and 0.03 are below 0.05
			if _, err := b.reserveCall(ctx); err != nil {
				t.Fatalf("%s: call %d: %v", name, i+1, err)
			}
			if _, err := b.charge(ctx, 100, 0.03, true); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.reserveCall(ctx); !errors.Is(err, ErrBudgetExceeded) {
			t.Fatalf("%s: at $0.06 of $0.05: %v", name, err)
		}
		if u := b.Used(ctx); u.Calls != 2 || u.Tokens != 200 || u.CostUSD < 0.059 || !u.PeriodStart.Equal(start) {
			t.Fatalf("%s: used %+v", name, u)
		}
		now = start.Add(23 * time.Hour)
		if _, err := b.reserveCall(ctx); !errors.Is(err, ErrBudgetExceeded) {
			t.Fatalf("%s: within the day: %v", name, err)
		}
		now = start.Add(50 * time.Hour) // two days and two hours later: the third period
		if u := b.Used(ctx); u.Calls != 0 || u.CostUSD != 0 || !u.PeriodStart.Equal(start.Add(48*time.Hour)) {
			t.Fatalf("%s: a new period reads %+v", name, u)
		}
		if _, err := b.reserveCall(ctx); err != nil {
			t.Fatalf("%s: in a new period: %v", name, err)
		}
		if u := b.Used(ctx); u.Calls != 1 || !u.PeriodStart.Equal(start.Add(48*time.Hour)) {
			t.Fatalf("%s: used in the new period %+v", name, u)
		}
	}
}

// TestBudgetAllowsNames: a budget's allowed names are read as a request names models: a
// model group allows its models, a bare name the model it resolves to, and Allows answers
// for names as /v1/models lists them.
func TestBudgetAllowsNames(t *testing.T) {
	groups := map[string][]string{"pair": {"openai/a", "openai/b"}}
	expand := func(n string) []string {
		if n == "c" {
			return []string{"openai/c"}
		}
		return groups[n]
	}
	b := NewBudget(BudgetLimits{AllowedModels: []string{"pair", "c"}})
	for model, want := range map[string]bool{"openai/a": true, "openai/b": true, "openai/c": true, "openai/d": false, "pair": true} {
		if got := b.allows(model, expand); got != want {
			t.Errorf("allows(%s) = %v, want %v", model, got, want)
		}
	}
	if NewBudget(BudgetLimits{AllowedModels: []string{"openai/a"}}).allows("openai/a", nil) != true {
		t.Error("an exact name")
	}
	if !NewBudget(BudgetLimits{}).allows("any/model", nil) {
		t.Error("no list allows every model")
	}
}

// TestSpendGateAdmitsWhatTheBudgetCanPay: of requests in flight together, a budget with a
// USD bound admits one at a time until it has an answer to take a request's mean cost
// from, then as many as that mean says it can still pay for; released requests make room.
func TestSpendGateAdmitsWhatTheBudgetCanPay(t *testing.T) {
	ctx := context.Background()
	var sg spendGate
	b := NewBudget(BudgetLimits{MaxCostUSD: 0.05})
	first, err := sg.admit(ctx, b, false)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() {
		rel, err := sg.admit(ctx, b, false) // no answer yet: waits for the first to end
		if err == nil {
			rel()
		}
		waiting <- err
	}()
	select {
	case err := <-waiting:
		t.Fatalf("a second request was admitted before the first answer: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := b.charge(ctx, 10, 0.02, true); err != nil { // the first answer: $0.02
		t.Fatal(err)
	}
	first()
	if err := <-waiting; err != nil {
		t.Fatalf("after the first answer: %v", err)
	}
	// Spent $0.02, about $0.02 a request: one in flight projects $0.04, two $0.06.
	r1, err := sg.admit(ctx, b, false)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := sg.admit(ctx, b, false)
	if err != nil {
		t.Fatalf("second in flight ($0.04 projected): %v", err)
	}
	if _, err := sg.admit(ctx, b, false); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("third in flight ($0.06 projected of $0.05): %v", err)
	}
	r2()
	r3, err := sg.admit(ctx, b, false)
	if err != nil {
		t.Fatalf("after one ended: %v", err)
	}
	r1()
	r3()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	unbounded := NewBudget(BudgetLimits{MaxCalls: 5})
	if rel, err := sg.admit(cctx, unbounded, false); err != nil {
		t.Fatalf("a budget without USD or token bound is not gated: %v", err)
	} else {
		rel()
	}
}

// TestSpendGateWaitEndsAtTheDeadline: a request of a fresh budgeted key that waits behind
// the key's first (whose cost is not known yet) is refused at its own deadline, without
// taking a call, rather than started with no time left (review 11d).
func TestSpendGateWaitEndsAtTheDeadline(t *testing.T) {
	p, release := heldProvider()
	h := newHarness(t, func(o *Options) {
		o.Providers = fakeRegistry{"a": p}
		o.RequestTimeout = 300 * time.Millisecond
	})
	b := NewBudget(BudgetLimits{MaxTokens: 1000, MaxCalls: 10})
	ctx := context.Background()
	first := startHeld(h.g, p, b, ptr(5.0)) // the first outlasts the second's deadline
	r := userReq("hi", "a/m")
	r.ephemeral = true
	_, err := h.g.Complete(ctx, Scope{Budget: b, Received: time.Now()}, r)
	if !errors.Is(err, ErrBudgetBusy) || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("the second request: %v", err)
	}
	if u := b.Used(ctx); u.Calls != 1 {
		t.Errorf("the refused request took a call: %+v", u)
	}
	close(release)
	<-first
}

// TestTokenWindow: a budget's tokens per minute are those its answers used in the minute
// before now; a request over it is refused with when to retry: when the earliest of them
// leaves the minute.
func TestTokenWindow(t *testing.T) {
	var sg spendGate
	b := NewBudget(BudgetLimits{TokensPerMinute: 100})
	t0 := time.Unix(1_800_000_000, 0)
	sg.used(b, 60, t0)
	sg.used(b, 30, t0.Add(20*time.Second))
	if err := sg.rate(b, t0.Add(30*time.Second)); err != nil {
		t.Fatalf("90 of 100: %v", err)
	}
	sg.used(b, 20, t0.Add(40*time.Second))
	err := sg.rate(b, t0.Add(45*time.Second))
	var te *TokenRateError
	if !errors.As(err, &te) || !errors.Is(err, ErrTokenRate) || te.Used != 110 || te.RetryAfter != 15*time.Second {
		t.Fatalf("110 of 100: %v", err)
	}
	if err := sg.rate(b, t0.Add(61*time.Second)); err != nil { // the 60 left the minute
		t.Fatalf("after the first answer left the minute: %v", err)
	}
	if err := sg.rate(NewBudget(BudgetLimits{}), t0); err != nil {
		t.Fatalf("no bound: %v", err)
	}
}

// heldProvider is a scripted provider whose calls wait until release is closed (or their
// context ends), then answer with 20 tokens.
func heldProvider() (*scriptedN, chan struct{}) {
	release := make(chan struct{})
	return &scriptedN{fn: func(ctx context.Context, _ int, req *providers.Request) (*providers.Response, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &providers.Response{Text: "x", Model: req.Model, Usage: providers.Usage{PromptTokens: 10, CompletionTokens: 10}}, nil
	}}, release
}

// startHeld starts a request of b's on g (its own timeout when given) and returns once its
// call reached p, a heldProvider; the request's error comes on the channel.
func startHeld(g *Gateway, p *scriptedN, b *Budget, timeout *float64) chan error {
	done := make(chan error, 1)
	go func() {
		r := userReq("hi", "a/m")
		r.ephemeral = true
		r.FaultPolicy.Timeout = timeout
		_, err := g.Complete(context.Background(), Scope{Budget: b, Received: time.Now()}, r)
		done <- err
	}()
	for p.calls.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	return done
}
