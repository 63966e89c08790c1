package completions

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// countingParent is a caller's context that counts the contexts made on it that are to
// be cancelled with it (context.WithDeadline and its kind register through its AfterFunc,
// as it is no context package type) and how many of those are still registered: a
// context cancelled (its timer stopped) is no longer. The request's deadline contexts are
// the ones a request makes on its caller's context (its attempts' are made on those).
type countingParent struct {
	context.Context
	done chan struct{}

	mu         sync.Mutex
	made, live int
}

func newCountingParent() *countingParent {
	return &countingParent{Context: context.Background(), done: make(chan struct{})}
}

func (c *countingParent) Done() <-chan struct{} { return c.done }

func (c *countingParent) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	c.made++
	c.live++
	c.mu.Unlock()
	stopped := context.AfterFunc(c.Context, f) // Background: never runs f
	var once sync.Once
	return func() bool {
		once.Do(func() {
			c.mu.Lock()
			c.live--
			c.mu.Unlock()
		})
		return stopped()
	}
}

func (c *countingParent) counts() (made, live int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.made, c.live
}

// TestAdmissionAndCallsShareOneDeadline: a request with a budget makes the request's
// deadline context once, for its admission into the spend gate and its calls together
// (it made one for each), so it makes no more contexts on its caller's than a request
// without a budget; none is left when it ends — answered, or refused by its budget after
// admission (its calls used up: the kept context is cancelled). The counts are of
// contexts, not timings.
func TestAdmissionAndCallsShareOneDeadline(t *testing.T) {
	h := newHarness(t, nil)
	complete := func(scope Scope) (made, live int, err error) {
		parent := newCountingParent()
		_, err = h.g.Complete(parent, scope, userReq("hi", "a/m1"))
		made, live = parent.counts()
		return made, live, err
	}
	bare, live, err := complete(Scope{})
	if err != nil || bare == 0 || live != 0 {
		t.Fatalf("without a budget: %d contexts made, %d left, %v; want some made, none left", bare, live, err)
	}
	b := NewBudget(BudgetLimits{MaxCostUSD: 100, MaxCalls: 2})
	for i := range 2 {
		made, live, err := complete(Scope{Budget: b})
		if err != nil || made != bare || live != 0 {
			t.Fatalf("with a budget, request %d: %d contexts made (without: %d), %d left, %v; want as many made, none left", i, made, bare, live, err)
		}
	}
	// Admitted by the gate, then refused for the calls used up (reserveCall).
	made, live, err := complete(Scope{Budget: b})
	if !errors.Is(err, ErrBudgetExceeded) || made == 0 || live != 0 {
		t.Fatalf("refused after admission: %d contexts made, %d left, %v; want ErrBudgetExceeded and none left", made, live, err)
	}
}

// TestStreamKeepsAdmissionDeadlineUntilClosed: a stream outlives its admission. The
// deadline context its admission made bounds the stream while it is read — not cancelled
// when the admission ends (the stream reads on to its end), and still the request's
// deadline (a stream stalled past RequestTimeout is cut) — and stops when the stream is
// closed.
func TestStreamKeepsAdmissionDeadlineUntilClosed(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.RequestTimeout = 300 * time.Millisecond })
	b := NewBudget(BudgetLimits{MaxCostUSD: 100})
	h.a.on("m1", step{text: "one two three four", usage: providers.Usage{PromptTokens: 3, CompletionTokens: 4}})
	parent := newCountingParent()
	st, err := h.g.Stream(parent, Scope{Budget: b}, userReq("hi", "a/m1"))
	if err != nil {
		t.Fatal(err)
	}
	if made, live := parent.counts(); made != 1 || live != 1 {
		t.Fatalf("an open stream with a budget: %d deadline contexts made, %d live; want one, held by the stream", made, live)
	}
	frags, err := drain(t, st) // closes it
	if err != nil || strings.Join(frags, "") != "one two three four" {
		t.Fatalf("read %q, %v; want the whole answer", frags, err)
	}
	if _, live := parent.counts(); live != 0 {
		t.Fatalf("%d deadline contexts live after the stream closed, want 0", live)
	}

	h.a.on("m2", step{text: "one two three four", stallAt: 1, stall: true})
	st, err = h.g.Stream(context.Background(), Scope{Budget: b}, userReq("hi", "a/m2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, st); err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("a stream stalled past the request's deadline ended with %v, want its deadline", err)
	}
}

// TestBackgroundRunOutlivesItsCreation: a background response of a key with a budget is
// created under its caller's context and run under its own, which the caller's end does
// not end: the run is admitted into the spend gate and answered after the creating
// context was cancelled.
func TestBackgroundRunOutlivesItsCreation(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m1", step{text: "later", delay: 50 * time.Millisecond})
	b := NewBudget(BudgetLimits{MaxCostUSD: 100})
	ctx, cancel := context.WithCancel(context.Background())
	o, err := startBackgroundCtx(t, ctx, h.g, Scope{Owner: "alice", Budget: b}, "alice", `{"model":"a/m1","input":"x","background":true}`)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if got := waitEnded(t, h.g, "alice", o.ID); got.Status != "completed" {
		t.Fatalf("status %s %+v; want completed", got.Status, got.Error)
	}
	if u := b.Used(context.Background()); u.Calls != 1 {
		t.Fatalf("calls taken from the budget: %d, want 1", u.Calls)
	}
}

// uncomparableCtx is a caller's context of a type == panics on (it holds a map).
type uncomparableCtx struct {
	context.Context
	tags map[string]string
}

// TestUncomparableCallerContext: a caller's context of a type that cannot be compared is
// served (its deadline context is made anew for the calls, not shared), without a panic.
func TestUncomparableCallerContext(t *testing.T) {
	h := newHarness(t, nil)
	b := NewBudget(BudgetLimits{MaxCostUSD: 100})
	ctx := uncomparableCtx{context.Background(), map[string]string{"k": "v"}}
	if _, err := h.g.Complete(ctx, Scope{Budget: b}, userReq("hi", "a/m1")); err != nil {
		t.Fatal(err)
	}
	if sameContext(ctx, ctx) {
		t.Fatal("sameContext of an uncomparable context: true")
	}
}

// TestPassThroughDropsAdmissionDeadline: a request admitted into its budget's spend gate
// that makes no call through the gateway's attempts (a pass-through, whose route forwards
// it under its caller's context) stops the deadline context its admission made as soon
// as it is admitted, rather than keeping its timer until the request ends (a stream's
// may be long after): none is live once BeginPassThrough returns, nor after End.
func TestPassThroughDropsAdmissionDeadline(t *testing.T) {
	up := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: "http://127.0.0.1:1/v1", APIKey: "sk-test"})
	g, err := New(Options{Providers: fakeRegistry{"openai": up}, Prices: fakePrices{}})
	if err != nil {
		t.Fatal(err)
	}
	parent := newCountingParent()
	pt, err := g.BeginPassThrough(parent, Scope{Budget: NewBudget(BudgetLimits{MaxCostUSD: 100})}, "openai", "gpt-4o-mini", true)
	if err != nil {
		t.Fatal(err)
	}
	if made, live := parent.counts(); made != 1 || live != 0 {
		t.Fatalf("admitted: %d deadline contexts made, %d live; want the admission's one, stopped", made, live)
	}
	pt.End(parent, PassThroughUsage{Usage: providers.Usage{PromptTokens: 10, CompletionTokens: 1}, Reported: true}, time.Millisecond, nil)
	if made, live := parent.counts(); made != 1 || live != 0 {
		t.Fatalf("after the pass-through ended: %d deadline contexts made, %d live; want one made, none live", made, live)
	}
}

// TestRealtimeDropsAdmissionDeadline: a realtime session of a key with a budget, admitted
// into its spend gate, stops the deadline context its admission made once admitted: the
// session (and its dial, under its caller's context) outlives the request's deadline, so
// no call takes that context over, and its timer does not run for the session's life.
func TestRealtimeDropsAdmissionDeadline(t *testing.T) {
	up := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: "http://127.0.0.1:1/v1", APIKey: "sk-test"})
	g, err := New(Options{Providers: fakeRegistry{"openai": up}, Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	parent := newCountingParent()
	s, err := g.BeginRealtime(parent, Scope{Budget: NewBudget(BudgetLimits{MaxCostUSD: 100})}, "openai/gpt-realtime")
	if err != nil {
		t.Fatal(err)
	}
	if made, live := parent.counts(); made != 1 || live != 0 {
		t.Fatalf("admitted: %d deadline contexts made, %d live; want the admission's one, stopped", made, live)
	}
	s.End(parent, nil)
	if made, live := parent.counts(); made != 1 || live != 0 {
		t.Fatalf("after the session ended: %d deadline contexts made, %d live; want one made, none live", made, live)
	}
}

// TestLeasedAdmissionSharesTheDeadline: a stored budget's request on a gateway sharing its
// limits through the store is admitted in the transaction that takes its call (its
// lease: enterBudget's leased path), under the request's deadline context, which its
// calls then take over as they do after admitSpend: no more contexts made than without a
// budget, none left.
func TestLeasedAdmissionSharesTheDeadline(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	h := newHarness(t, func(o *Options) { o.Store, o.SharedLimits = st, store.NewCounters(st, "limits") })
	b, err := CreateSharedBudget(ctx, st, "key/vk", BudgetLimits{MaxTokens: 100000})
	if err != nil {
		t.Fatal(err)
	}
	if leased, _ := h.g.spend.leasedAccounts(b); leased == nil {
		t.Fatal("the stored budget is not admitted by lease")
	}
	counted := func(scope Scope) (made, live int) {
		parent := newCountingParent()
		if _, err := h.g.Complete(parent, scope, userReq("hi", "a/m1")); err != nil {
			t.Fatal(err)
		}
		return parent.counts()
	}
	bare, _ := counted(Scope{})
	if made, live := counted(Scope{Budget: b}); made != bare || live != 0 {
		t.Fatalf("leased: %d contexts made (without a budget: %d), %d left; want as many, none left", made, bare, live)
	}
}
