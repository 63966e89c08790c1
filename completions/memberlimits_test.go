package completions

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// testClock is a clock tests move by hand. It starts at the real time (request deadlines
// are contexts on the real clock) and only moves forward by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newTestClock() *testClock { return &testClock{t: time.Now().Truncate(time.Minute)} }

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// limitsHarness is a gateway on a hand-moved clock with groups.
func limitsHarness(t *testing.T, groups map[string]ModelGroup) (*harness, *testClock) {
	t.Helper()
	clock := newTestClock()
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = groups
		o.Now = clock.now
	})
	return h, clock
}

// groupReq is a stateless request to model (a group) without retries.
func groupReq(model string) *Request {
	r := userReq("hi", model)
	r.ephemeral = true
	r.MaxRetries = intp(0)
	return r
}

// A member at its rpm is skipped for the next member (recorded as a skipped attempt); once
// the minute has passed it gets requests again. Counted at the scripted upstreams.
func TestMemberRPMSkipsToNextMemberUntilTheMinutePasses(t *testing.T) {
	h, clock := limitsHarness(t, map[string]ModelGroup{"g": {Models: []string{"a/m1", "b/m2"}, Limits: []MemberLimits{{RPM: 2}, {}}}})
	ctx := context.Background()
	for i := range 5 {
		resp, err := h.g.Complete(ctx, Scope{}, groupReq("g"))
		if err != nil {
			t.Fatal(err)
		}
		want := "a"
		if i >= 2 {
			want = "b"
			if len(resp.Attempts) != 2 || resp.Attempts[0].Model != "a/m1" || resp.Attempts[0].Outcome != OutcomeSkipped || resp.Attempts[0].Kind != limitReachedKind ||
				!strings.Contains(resp.Attempts[0].Error, "rpm 2") {
				t.Fatalf("request %d attempts = %+v, want a/m1 skipped at its rpm, then b/m2", i, resp.Attempts)
			}
		}
		if resp.Provider != want {
			t.Fatalf("request %d answered by %s, want %s", i, resp.Provider, want)
		}
		clock.advance(time.Second)
	}
	if a, b := h.a.callCount("m1"), h.b.callCount("m2"); a != 2 || b != 3 {
		t.Fatalf("upstream calls a/m1=%d b/m2=%d, want 2 and 3", a, b)
	}
	clock.advance(55 * time.Second) // at 60 s: the first call has left the minute, the second (at 1 s) not yet
	resp, err := h.g.Complete(ctx, Scope{}, groupReq("g"))
	if err != nil || resp.Provider != "a" {
		t.Fatalf("after the first call left the minute: %v, %v; want a/m1", resp, err)
	}
	if resp2, err := h.g.Complete(ctx, Scope{}, groupReq("g")); err != nil || resp2.Provider != "b" {
		t.Fatalf("a/m1 is at 2 again: %v, %v; want b/m2", resp2, err)
	}
	clock.advance(2 * time.Minute)
	for range 2 {
		if resp, err := h.g.Complete(ctx, Scope{}, groupReq("g")); err != nil || resp.Provider != "a" {
			t.Fatalf("a new minute: %v, %v; want a/m1", resp, err)
		}
	}
	if a := h.a.callCount("m1"); a != 5 {
		t.Fatalf("a/m1 calls = %d, want 5", a)
	}
}

// Retries count against rpm: a member whose retry would pass its rpm is not retried.
func TestMemberRPMCountsRetries(t *testing.T) {
	h, _ := limitsHarness(t, map[string]ModelGroup{"g": {Models: []string{"a/m1", "b/m2"}, Limits: []MemberLimits{{RPM: 2}, {}}}})
	h.a.on("m1", step{err: upstreamErr(providers.KindOverloaded, 503, 0)})
	req := groupReq("g")
	req.MaxRetries = intp(5)
	resp, err := h.g.Complete(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Provider != "b" || h.a.callCount("m1") != 2 {
		t.Fatalf("answered by %s after %d calls of a/m1; want b after 2 (its rpm)", resp.Provider, h.a.callCount("m1"))
	}
}

// tpm is counted from the answers' usage: a member is admitted while the minute's tokens
// are under its tpm, then skipped until they leave the minute.
func TestMemberTPMCountedFromUsage(t *testing.T) {
	h, clock := limitsHarness(t, map[string]ModelGroup{"g": {Models: []string{"a/m1", "b/m2"}, Limits: []MemberLimits{{TPM: 100}, {}}}})
	h.a.on("m1", step{text: "x", usage: providers.Usage{PromptTokens: 40, CompletionTokens: 20}})
	ctx := context.Background()
	var got []string
	for range 4 {
		resp, err := h.g.Complete(ctx, Scope{}, groupReq("g"))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp.Provider)
		clock.advance(time.Second)
	}
	// 0 tokens: admitted; 60 < 100: admitted; 120: skipped, twice.
	if strings.Join(got, "") != "aabb" {
		t.Fatalf("answered by %v, want a, a, b, b", got)
	}
	clock.advance(time.Minute)
	if resp, err := h.g.Complete(ctx, Scope{}, groupReq("g")); err != nil || resp.Provider != "a" {
		t.Fatalf("a minute later: %v, %v; want a/m1", resp, err)
	}
}

// max_parallel counts calls in flight: while a member holds its one call, the next request
// goes to the other member (callable at once, so it does not queue for the first:
// memberqueue_test.go); when it ends, the member is used again. A stream holds its call
// until it is closed.
func TestMemberMaxParallelCountsCallsInFlight(t *testing.T) {
	h, _ := limitsHarness(t, map[string]ModelGroup{"g": {Models: []string{"a/m1", "b/m2"}, Limits: []MemberLimits{{MaxParallel: 1}, {}}}})
	h.a.on("m1", step{hang: true}, step{text: "a"})
	ctx, cancel := context.WithCancel(context.Background())
	held := make(chan error, 1)
	go func() {
		_, err := h.g.Complete(ctx, Scope{}, groupReq("g"))
		held <- err
	}()
	for h.a.callCount("m1") == 0 { // the first request is in flight on a/m1
		time.Sleep(time.Millisecond)
	}
	resp, err := h.g.Complete(context.Background(), Scope{}, groupReq("g"))
	if err != nil || resp.Provider != "b" {
		t.Fatalf("with a/m1's one call in flight: %v, %v; want b/m2", resp, err)
	}
	cancel()
	if err := <-held; !errors.Is(err, context.Canceled) {
		t.Fatalf("held request: %v", err)
	}
	resp, err = h.g.Complete(context.Background(), Scope{}, groupReq("g"))
	if err != nil || resp.Provider != "a" {
		t.Fatalf("after a/m1's call ended: %v, %v; want a/m1", resp, err)
	}

	// A stream holds its call until closed.
	req := groupReq("g")
	req.Stream = true
	st, err := h.g.Stream(context.Background(), Scope{}, req)
	if err != nil || st.Provider() != "a" {
		t.Fatalf("stream: %v; want a/m1", err)
	}
	if resp, err := h.g.Complete(context.Background(), Scope{}, groupReq("g")); err != nil || resp.Provider != "b" {
		t.Fatalf("with a stream open on a/m1: %v, %v; want b/m2", resp, err)
	}
	st.Close()
	if resp, err := h.g.Complete(context.Background(), Scope{}, groupReq("g")); err != nil || resp.Provider != "a" {
		t.Fatalf("after the stream closed: %v, %v; want a/m1", resp, err)
	}
	if n := h.a.callCount("m1"); n != 4 {
		t.Fatalf("a/m1 calls = %d, want 4", n)
	}
}

// When every member of the group and of its fallback group is at its limit, the request
// fails with a *LimitedError (ErrLimited) naming the group, with the wait until the first
// member frees up, and no upstream is called.
func TestEveryMemberAtLimitIsLimitedError(t *testing.T) {
	h, clock := limitsHarness(t, map[string]ModelGroup{
		"g":    {Models: []string{"a/m1"}, Limits: []MemberLimits{{RPM: 1}}, Fallbacks: []string{"back"}},
		"back": {Models: []string{"b/m2"}, Limits: []MemberLimits{{RPM: 1}}},
	})
	ctx := context.Background()
	if resp, err := h.g.Complete(ctx, Scope{}, groupReq("g")); err != nil || resp.Provider != "a" {
		t.Fatalf("first: %v, %v", resp, err)
	}
	clock.advance(10 * time.Second)
	if resp, err := h.g.Complete(ctx, Scope{}, groupReq("g")); err != nil || resp.Provider != "b" {
		t.Fatalf("second (the fallback group): %v, %v", resp, err)
	}
	clock.advance(10 * time.Second)
	_, err := h.g.Complete(ctx, Scope{}, groupReq("g"))
	var le *LimitedError
	if !errors.Is(err, ErrLimited) || !errors.As(err, &le) {
		t.Fatalf("err = %v, want a *LimitedError", err)
	}
	if le.Model != "g" || le.RetryAfterSeconds() != 40 || len(le.Attempts) != 2 {
		t.Fatalf("LimitedError = %+v (Retry-After %d), want group g, 40 s (a/m1 frees at 60 s), 2 skipped", le, le.RetryAfterSeconds())
	}
	for _, s := range []string{"No deployments available for selected model", "Try again in 40 seconds", `model group "g"`, "a/m1 (rpm 1", "b/m2 (rpm 1"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message %q lacks %q", err.Error(), s)
		}
	}
	if h.a.callCount("m1") != 1 || h.b.callCount("m2") != 1 {
		t.Fatalf("upstream calls %d, %d; want 1 each (none for the refused request)", h.a.callCount("m1"), h.b.callCount("m2"))
	}
	// Streams are refused the same way.
	req := groupReq("g")
	req.Stream = true
	if _, err := h.g.Stream(ctx, Scope{}, req); !errors.Is(err, ErrLimited) {
		t.Fatalf("stream: %v, want ErrLimited", err)
	}
	clock.advance(40 * time.Second)
	if resp, err := h.g.Complete(ctx, Scope{}, groupReq("g")); err != nil || resp.Provider != "a" {
		t.Fatalf("after Retry-After: %v, %v; want a/m1", resp, err)
	}
}

// A member at its limit is skipped before a member whose breaker is open is probed: the
// breaker's last-resort probe does not bypass a limit.
func TestLimitedMemberAndOpenBreaker(t *testing.T) {
	h, _ := limitsHarness(t, map[string]ModelGroup{"g": {Models: []string{"a/m1", "b/m2"}, Limits: []MemberLimits{{RPM: 1}, {}}}})
	ctx := context.Background()
	if resp, err := h.g.Complete(ctx, Scope{}, groupReq("g")); err != nil || resp.Provider != "a" {
		t.Fatalf("first: %v, %v", resp, err)
	}
	h.b.on("m2", step{err: upstreamErr(providers.KindOverloaded, 503, 0)})
	for range 5 { // open b/m2's breaker
		h.g.Complete(ctx, Scope{}, groupReq("b/m2"))
	}
	// a/m1 at its rpm, b/m2's breaker open: b/m2 is probed (a limit is never bypassed).
	_, err := h.g.Complete(ctx, Scope{}, groupReq("g"))
	var af *AllFailedError
	if !errors.As(err, &af) || h.a.callCount("m1") != 1 {
		t.Fatalf("err = %v, a/m1 calls %d; want b/m2 probed and failing, a/m1 not called again", err, h.a.callCount("m1"))
	}
}

// Limits are validated at start, naming the group and the member.
func TestMemberLimitsValidation(t *testing.T) {
	for _, c := range []struct {
		groups string
		want   string
	}{
		{`{"g":{"models":["a/m1","b/m2"],"limits":[{"rpm":1}]}}`, `model group "g": limits: one per model, got 1 for 2 models`},
		{`{"g":{"models":["a/m1","b/m2"],"limits":[{},{"tpm":-5}]}}`, `model group "g": limits[1].tpm (b/m2): must be 0 (no bound) or more, got -5`},
		{`{"g":{"models":["a/m1"],"limits":[{"rpm":5}]},"h":{"models":["a/m1"],"limits":[{"rpm":6}]}}`, `model group "h": limits[0] of a/m1 differ from those model group "g" gives it`},
		{`{"g":{"models":["a/m1"],"limits":[{"max_parallel":"x"}]}}`, `max_parallel`},
	} {
		_, err := ParseModelGroups([]byte(c.groups))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.groups, err, c.want)
		}
	}
	groups, err := ParseModelGroups([]byte(`{"g":{"models":["a/m1","b/m2"],"shuffle":true,"weights":[1,1],"limits":[{"rpm":60,"tpm":1000,"max_parallel":2},{}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if l := groups["g"].Limits[0]; l != (MemberLimits{RPM: 60, TPM: 1000, MaxParallel: 2}) {
		t.Fatalf("limits = %+v", l)
	}
	// New checks groups made in Go too.
	_, err = New(Options{Providers: fakeRegistry{"a": newFake("a")}, ModelGroups: map[string]ModelGroup{"g": {Models: []string{"a/m1"}, Limits: []MemberLimits{{RPM: -1}}}}})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `model group "g": limits[0].rpm (a/m1)`) {
		t.Fatalf("New: %v", err)
	}
}
