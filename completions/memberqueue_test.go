package completions

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// slotGatedProvider is a scripted upstream whose calls each block until the test lets
// that call through (closing its release) or the call's context ends; it counts the calls
// it has at once.
type slotGatedProvider struct {
	*fakeProvider
	now     atomic.Int64    // calls running
	most    atomic.Int64    // the most running at once
	started chan *gatedCall // each call, as it starts
}

// gatedCall is one call held by a slotGatedProvider.
type gatedCall struct {
	model   string
	release chan struct{} // closed by the test: the call goes on
}

func newSlotGated(f *fakeProvider) *slotGatedProvider {
	return &slotGatedProvider{fakeProvider: f, started: make(chan *gatedCall, 100)}
}

// enter counts a call in and holds it until released or ctx ends; leave counts it out.
func (g *slotGatedProvider) enter(ctx context.Context, model string) (leave func(), err error) {
	n := g.now.Add(1)
	for {
		m := g.most.Load()
		if n <= m || g.most.CompareAndSwap(m, n) {
			break
		}
	}
	c := &gatedCall{model: model, release: make(chan struct{})}
	g.started <- c
	leave = func() { g.now.Add(-1) }
	select {
	case <-c.release:
		return leave, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}

func (g *slotGatedProvider) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	leave, err := g.enter(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	defer leave()
	return g.fakeProvider.Complete(ctx, req)
}

func (g *slotGatedProvider) Stream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	leave, err := g.enter(ctx, req.Model)
	if err != nil {
		return nil, err
	}
	st, err := g.fakeProvider.Stream(ctx, req)
	if err != nil {
		leave()
		return nil, err
	}
	return &slotLeavingStream{Stream: st, leave: leave}, nil
}

// slotLeavingStream counts its call out of the slotGatedProvider when it is closed.
type slotLeavingStream struct {
	providers.Stream
	leave func()
	once  sync.Once
}

func (s *slotLeavingStream) Close() error {
	s.once.Do(s.leave)
	return s.Stream.Close()
}

// queueHarness is a gateway on group g whose a/m1 has max_parallel mp and whose
// provider a is gated; attempts may take as long as the test needs.
func queueHarness(t *testing.T, groups map[string]ModelGroup) (*harness, *slotGatedProvider) {
	t.Helper()
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = groups
		o.AttemptTimeout, o.FirstTokenTimeout, o.StreamIdleTimeout = time.Minute, time.Minute, time.Minute
	})
	gp := newSlotGated(h.a)
	h.g.opts.Providers = fakeRegistry{"a": gp, "b": h.b}
	return h, gp
}

// waitQueued waits until n requests are queued on model; it fails the test when ended
// reports that a request it waits for ended instead (refused rather than queued).
func waitQueued(t *testing.T, g *Gateway, model string, n int, ended func() bool) {
	t.Helper()
	for queuedOn(g, model) != n {
		if ended() {
			t.Fatalf("a request ended instead of queueing on %s (%d queued, want %d)", model, queuedOn(g, model), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// With max_parallel 1 and no other member, a second request does not fail with a 429:
// it waits until the first call ends, then is answered; the upstream never has two calls
// at once. Streams hold their slot until closed.
func TestMemberMaxParallelQueuesInsteadOfRefusing(t *testing.T) {
	for _, stream := range []bool{false, true} {
		h, gp := queueHarness(t, map[string]ModelGroup{"g": {Models: []string{"a/m1"}, Limits: []MemberLimits{{MaxParallel: 1}}}})
		h.a.on("m1", step{text: "first"}, step{text: "second"})
		ask := func() (string, error) {
			req := groupReq("g")
			if stream {
				req.Stream = true
				st, err := h.g.Stream(context.Background(), Scope{}, req)
				if err != nil {
					return "", err
				}
				defer st.Close()
				text := ""
				for {
					c, err := st.Recv()
					if err != nil {
						return text, nil
					}
					text += c.Text
				}
			}
			resp, err := h.g.Complete(context.Background(), Scope{}, req)
			if err != nil {
				return "", err
			}
			return resp.Message.Content[0].Text, nil
		}
		type answer struct {
			text string
			err  error
		}
		first, second := make(chan answer, 1), make(chan answer, 1)
		go func() { s, err := ask(); first <- answer{s, err} }()
		c1 := <-gp.started // the first call is at the upstream, holding a/m1's one slot
		go func() { s, err := ask(); second <- answer{s, err} }()
		waitQueued(t, h.g, "a/m1", 1, func() bool { return len(second) > 0 }) // the second waits for it, not refused
		select {
		case a := <-second:
			t.Fatalf("stream=%v: second request ended (%q, %v) while the first held the slot; want it queued", stream, a.text, a.err)
		default:
		}
		close(c1.release)
		if a := <-first; a.err != nil || a.text != "first" {
			t.Fatalf("stream=%v: first = %q, %v", stream, a.text, a.err)
		}
		close((<-gp.started).release) // only now: the slot is free
		if a := <-second; a.err != nil || a.text != "second" {
			t.Fatalf("stream=%v: second = %q, %v; want answered after the first ended", stream, a.text, a.err)
		}
		if m := gp.most.Load(); m != 1 {
			t.Fatalf("stream=%v: the upstream had %d calls at once; max_parallel is 1", stream, m)
		}
		if n, q := inFlightOf(h.g, "a/m1"), queuedOn(h.g, "a/m1"); n != 0 || q != 0 {
			t.Fatalf("stream=%v: after both: %d in flight, %d queued; want 0, 0", stream, n, q)
		}
	}
}

// Many concurrent requests on two members of max_parallel 2 and 1: the upstream never has
// more than 3 calls at once (nor a member more than its bound), every request is answered,
// and the counts return to 0.
func TestMemberMaxParallelManyWaiters(t *testing.T) {
	h, gp := queueHarness(t, map[string]ModelGroup{"g": {Models: []string{"a/m1", "a/m2"}, Limits: []MemberLimits{{MaxParallel: 2}, {MaxParallel: 1}}}})
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := h.g.Complete(context.Background(), Scope{}, groupReq("g")); err != nil {
				errs <- err
			}
		}()
	}
	bad := make(chan string, n)
	go func() {
		for range n {
			c := <-gp.started
			if a, b := inFlightOf(h.g, "a/m1"), inFlightOf(h.g, "a/m2"); a > 2 || b > 1 {
				bad <- fmt.Sprintf("in flight a/m1=%d a/m2=%d", a, b)
			}
			close(c.release)
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("request failed: %v", err)
	}
	select {
	case s := <-bad:
		t.Fatalf("past max_parallel: %s", s)
	default:
	}
	if m := gp.most.Load(); m > 3 {
		t.Fatalf("the upstream had %d calls at once; the members allow 3", m)
	}
	if c := h.a.callCount("m1") + h.a.callCount("m2"); c != n {
		t.Fatalf("%d upstream calls, want %d", c, n)
	}
	for _, m := range []string{"a/m1", "a/m2"} {
		if f, q := inFlightOf(h.g, m), queuedOn(h.g, m); f != 0 || q != 0 {
			t.Fatalf("%s: %d in flight, %d queued after every request; want 0, 0", m, f, q)
		}
	}
}

// A request waiting for a slot whose caller goes away ends with the context's error and
// leaves the queue; many such requests leave the counts as they were.
func TestMemberMaxParallelCancelledWaiterLeaks(t *testing.T) {
	h, gp := queueHarness(t, map[string]ModelGroup{"g": {Models: []string{"a/m1"}, Limits: []MemberLimits{{MaxParallel: 1}}}})
	held := make(chan error, 1)
	go func() {
		_, err := h.g.Complete(context.Background(), Scope{}, groupReq("g"))
		held <- err
	}()
	c1 := <-gp.started
	ctx, cancel := context.WithCancel(context.Background())
	const n = 20
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := h.g.Complete(ctx, Scope{}, groupReq("g"))
			errs <- err
		}()
	}
	waitQueued(t, h.g, "a/m1", n, func() bool { return len(errs) > 0 })
	cancel()
	for range n {
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("a cancelled waiter: %v, want context.Canceled", err)
		}
	}
	if f, q := inFlightOf(h.g, "a/m1"), queuedOn(h.g, "a/m1"); f != 1 || q != 0 {
		t.Fatalf("after the waiters went: %d in flight, %d queued; want 1 (the first), 0", f, q)
	}
	close(c1.release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if f := inFlightOf(h.g, "a/m1"); f != 0 {
		t.Fatalf("%d in flight after every request; want 0", f)
	}
	if c := h.a.callCount("m1"); c != 1 {
		t.Fatalf("%d upstream calls; the cancelled waiters made none", c)
	}
}

// Waiting requests are served first come first served: a request arriving while others
// wait does not take the slot ahead of them.
func TestMemberMaxParallelQueueIsFIFO(t *testing.T) {
	h, gp := queueHarness(t, map[string]ModelGroup{"g": {Models: []string{"a/m1"}, Limits: []MemberLimits{{MaxParallel: 1}}}})
	ask := func(text string, out chan<- string) {
		r := userReq(text, "g")
		r.ephemeral, r.MaxRetries = true, intp(0)
		if _, err := h.g.Complete(context.Background(), Scope{}, r); err != nil {
			out <- "error: " + err.Error()
			return
		}
		out <- text
	}
	done := make(chan string, 4)
	go ask("r0", done)
	c := <-gp.started
	for i := 1; i <= 3; i++ {
		go ask(fmt.Sprintf("r%d", i), done)
		waitQueued(t, h.g, "a/m1", i, func() bool { return len(done) > 0 })
	}
	var order []string
	for range 4 {
		close(c.release)
		order = append(order, <-done)
		if len(order) < 4 {
			c = <-gp.started
		}
	}
	if got := fmt.Sprint(order); got != "[r0 r1 r2 r3]" {
		t.Fatalf("answered in the order %s, want r0 r1 r2 r3 (first come first served)", got)
	}
}

// The member that frees first is the one the waiting request goes to, even when it is
// not the request's first model; a member at its rpm keeps the 429 (nothing to wait for
// by slot) while another is at max_parallel.
func TestMemberMaxParallelWaitsOnAnyMember(t *testing.T) {
	h, gp := queueHarness(t, map[string]ModelGroup{"g": {Models: []string{"a/m1", "a/m2"}, Limits: []MemberLimits{{MaxParallel: 1}, {MaxParallel: 1}}}})
	h.a.on("m2", step{text: "from m2"})
	ctx1, cancel1 := context.WithCancel(context.Background())
	defer cancel1()
	go h.g.Complete(ctx1, Scope{}, groupReq("a/m1")) // holds a/m1 (never released)
	<-gp.started
	held2 := make(chan error, 1)
	go func() { _, err := h.g.Complete(context.Background(), Scope{}, groupReq("a/m2")); held2 <- err }()
	c2 := <-gp.started
	got := make(chan *Response, 1)
	go func() {
		resp, err := h.g.Complete(context.Background(), Scope{}, groupReq("g"))
		if err != nil {
			t.Errorf("the waiting request: %v", err)
		}
		got <- resp
	}()
	waitQueued(t, h.g, "a/m2", 1, func() bool { return len(got) > 0 })
	if q := queuedOn(h.g, "a/m1"); q != 1 {
		t.Fatalf("queued on a/m1: %d; want the request waiting on both members", q)
	}
	close(c2.release) // a/m2's call ends
	if err := <-held2; err != nil {
		t.Fatal(err)
	}
	c3 := <-gp.started
	if c3.model != "m2" {
		t.Fatalf("the waiting request went to %s; want m2 (its slot freed first)", c3.model)
	}
	close(c3.release)
	resp := <-got
	if resp == nil || resp.Message.Content[0].Text != "from m2" {
		t.Fatalf("answer %+v; want a/m2's", resp)
	}
	if q1, q2 := queuedOn(h.g, "a/m1"), queuedOn(h.g, "a/m2"); q1 != 0 || q2 != 0 {
		t.Fatalf("queued after: a/m1 %d, a/m2 %d; want 0", q1, q2)
	}
}

// At the request's deadline a request still waiting for a slot is a *LimitedError (429),
// and leaves the queue.
func TestMemberMaxParallelWaitEndsAtTheDeadline(t *testing.T) {
	h, gp := queueHarness(t, map[string]ModelGroup{"g": {Models: []string{"a/m1"}, Limits: []MemberLimits{{MaxParallel: 1}}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.g.Complete(ctx, Scope{}, groupReq("g"))
	<-gp.started
	req := groupReq("g")
	req.FaultPolicy.Timeout = ptr(0.05)
	_, err := h.g.Complete(context.Background(), Scope{}, req)
	var le *LimitedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLimited) {
		t.Fatalf("err = %v, want a *LimitedError at the deadline", err)
	}
	if q := queuedOn(h.g, "a/m1"); q != 0 {
		t.Fatalf("%d still queued", q)
	}
	if n := len(gp.started); n != 0 {
		t.Fatalf("%d more upstream calls; the request that waited made none", n)
	}
}

// A slot freed while requests are queued is theirs: a request arriving before the woken
// one has taken it does not barge ahead (it finds the member at its max_parallel), and
// only as many queued requests are woken as slots are free.
func TestMemberSlotFreedGoesToTheQueue(t *testing.T) {
	now := time.Now()
	u := &memberUsage{model: "a/m1", lim: MemberLimits{MaxParallel: 1}}
	if _, _, at := u.take(now, nil); at != limitNone {
		t.Fatalf("first take: %v", at)
	}
	w1, w2 := newSlotWaiter(), newSlotWaiter()
	u.queue(w1)
	u.queue(w2)
	u.release()
	select {
	case <-w1.poke:
	default:
		t.Fatal("the first queued request was not woken by the freed slot")
	}
	select {
	case <-w2.poke:
		t.Fatal("the second queued request was woken for the one slot the first comes before it for")
	default:
	}
	if _, _, at := u.take(now, nil); at != limitParallel {
		t.Fatalf("a newcomer took the slot the queue waits for (%v)", at)
	}
	if _, _, at := u.take(now, w2); at != limitParallel {
		t.Fatalf("the second queued took the slot of the first (%v)", at)
	}
	if _, _, at := u.take(now, w1); at != limitNone {
		t.Fatalf("the first queued was refused its slot (%v)", at)
	}
	u.leave(w2) // it stops waiting
	u.release()
	if _, _, at := u.take(now, nil); at != limitNone || u.inFlight != 1 || len(u.waiters) != 0 {
		t.Fatalf("with nobody queued: %v, %d in flight, %d queued", at, u.inFlight, len(u.waiters))
	}
}
