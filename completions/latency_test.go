package completions

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestLatencyStats: the figures are moving averages of each measurement kind (time to first
// token of streams, time per output token of every answer); a timeout counts as that slow;
// unmeasured models come first, then fastest first; the table is bounded.
func TestLatencyStats(t *testing.T) {
	var l latencyStats
	l.answered("p/a", 0, 10*time.Second, 100) // whole: 0.1 s per token
	if _, ok := l.figure("p/a", true); ok {
		t.Error("a whole answer gave a time to first token")
	}
	if f, ok := l.figure("p/a", false); !ok || f != 0.1 {
		t.Errorf("per token %v %v, want 0.1", f, ok)
	}
	l.answered("p/a", 2*time.Second, 4*time.Second, 0) // streamed, no tokens counted: per token = whole time
	if f, _ := l.figure("p/a", true); f != 2 {
		t.Errorf("first token %v, want 2", f)
	}
	if f, _ := l.figure("p/a", false); f != 0.1+latencyWeight*(4-0.1) {
		t.Errorf("per token %v, want the moving average %v", f, 0.1+latencyWeight*(4-0.1))
	}
	l.timedOut("p/b", 30*time.Second)
	if f, _ := l.figure("p/b", true); f != 30 {
		t.Errorf("a timeout's first token %v, want 30", f)
	}
	ts := []target{{name: "p/b"}, {name: "p/a"}, {name: "p/new"}, {name: "p/c"}}
	l.answered("p/c", time.Second, 3*time.Second, 30)
	var order []string
	for _, t := range l.fastestFirst(ts, true) {
		order = append(order, t.name)
	}
	if want := []string{"p/new", "p/c", "p/a", "p/b"}; !slices.Equal(order, want) {
		t.Errorf("streamed order %v, want %v", order, want)
	}
	if lat := l.latencies([]string{"p/a", "p/new"}, true); lat["p/a"] != 2 || lat["p/new"] != 0 || len(lat) != 2 {
		t.Errorf("latencies %v", lat)
	}
	for i := range maxLatencyModels + 10 {
		l.answered(fmt.Sprintf("p/m%d", i), 0, time.Second, 1)
	}
	if n := len(l.models); n != maxLatencyModels {
		t.Errorf("%d models measured, want at most %d", n, maxLatencyModels)
	}
}

// TestFastestGroup: a fastest group tries its measured-fastest model first (and a new model
// before any measured one); every answer is measured, so the order follows what it sees.
func TestFastestGroup(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"quick": {Models: []string{"a/slow", "b/fast", "b/new"}, Fastest: true}}
	})
	h.g.latency.answered("a/slow", 0, 9*time.Second, 10)
	h.g.latency.answered("b/fast", 0, time.Second, 10)
	h.g.latency.answered("b/new", 0, 3*time.Second, 10)
	req := chatRequest(t, `{"model":"quick","messages":[{"role":"user","content":"hi"}]}`)
	resp, err := h.g.Complete(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Provider+"/"+resp.Model != "b/fast" {
		t.Errorf("answered by %s/%s, want b/fast", resp.Provider, resp.Model)
	}
	if h.g.latency.models["b/fast"].answers != 2 {
		t.Errorf("the answer was not measured: %+v", h.g.latency.models["b/fast"])
	}
	// The fastest one times out from now on: once its figure is the slowest, the next
	// request goes to the next fastest first.
	h.b.on("fast", step{err: upstreamErr(providers.KindTimeout, 0, 0)})
	resp, err = h.g.Complete(context.Background(), Scope{}, chatRequest(t, `{"model":"quick","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || resp.Attempts[0].Model != "b/fast" || resp.Attempts[0].Kind != "timeout" || resp.Model != "new" {
		t.Fatalf("%+v, %v", resp, err)
	}
	if f, _ := h.g.latency.figure("b/fast", false); f <= 0.3 {
		t.Errorf("the timeout did not slow b/fast's figure: %v", f)
	}
	resp, err = h.g.Complete(context.Background(), Scope{}, chatRequest(t, `{"model":"quick","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || resp.Attempts[0].Model != "b/new" {
		t.Errorf("after the timeout: %+v, %v", resp.Attempts, err)
	}
}

// latencyRanker is a test LatencyRanker: it records the latencies it is given and puts the
// fastest first.
type latencyRanker struct {
	reversingRanker
	mu   sync.Mutex
	seen []map[string]float64
}

func (r *latencyRanker) RankFastest(_ context.Context, _ []providers.Message, models []string, latencies map[string]float64) ([]string, error) {
	r.mu.Lock()
	r.seen = append(r.seen, latencies)
	r.mu.Unlock()
	slices.SortStableFunc(models, func(a, b string) int {
		switch {
		case latencies[a] < latencies[b]:
			return -1
		case latencies[a] > latencies[b]:
			return 1
		}
		return 0
	})
	return models, nil
}

// TestRoutedLatencyGroup: a routed group with tradeoff latency gives the ranker each
// model's measured latency for the request (time to first token when streamed).
func TestRoutedLatencyGroup(t *testing.T) {
	ranker := &latencyRanker{}
	h := newHarness(t, func(o *Options) {
		o.Ranker = ranker
		o.ModelGroups = map[string]ModelGroup{"smart": {Models: []string{"a/m1", "b/m2"}, Route: true, Tradeoff: "latency"}}
	})
	h.g.latency.answered("a/m1", 3*time.Second, 6*time.Second, 10)
	h.g.latency.answered("b/m2", time.Second, 8*time.Second, 10)
	req := chatRequest(t, `{"model":"smart","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	st, err := h.g.Stream(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if len(ranker.seen) != 1 || ranker.seen[0]["a/m1"] != 3 || ranker.seen[0]["b/m2"] != 1 || st.Model() != "m2" {
		t.Errorf("ranker saw %v; answered by %s", ranker.seen, st.Model())
	}
}

// TestHedgedTimeoutIsMeasured: a hedged start that gives no first token in time counts as
// slow for latency routing, as an unhedged one does.
func TestHedgedTimeoutIsMeasured(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.FirstTokenTimeout = 30 * time.Millisecond })
	h.a.on("silent", step{hang: true})
	req := userReq("hi", "a/silent", "b/ok")
	req.Stream = true
	req.HedgeAfter = ptr(5.0) // the silent model times out long before a hedge would start
	st, err := h.g.Stream(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if st.Model() != "ok" || len(st.p.attempts) < 1 || st.p.attempts[0].Kind != "timeout" {
		t.Fatalf("answered by %s; attempts %+v", st.Model(), st.p.attempts)
	}
	if f, ok := h.g.latency.figure("a/silent", true); !ok || f < 0.03 {
		t.Errorf("the hedged timeout was not measured: %v %v", f, ok)
	}
}

// TestFastestGroupSinksAFailingMember: a member that fails (429, 5xx) is measured as slow,
// so a fastest group stops trying it first, instead of keeping it first as unmeasured.
func TestFastestGroupSinksAFailingMember(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"quick": {Models: []string{"a/flaky", "b/ok"}, Fastest: true}}
		o.DefaultMaxRetries = -1
	})
	h.a.on("flaky", step{err: upstreamErr(providers.KindRateLimited, 429, 0)})
	for i := range 2 {
		resp, err := h.g.Complete(context.Background(), Scope{}, chatRequest(t, `{"model":"quick","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		first := resp.Attempts[0].Model
		if want := []string{"a/flaky", "b/ok"}[i]; first != want {
			t.Errorf("request %d tried %s first, want %s (attempts %+v)", i, first, want, resp.Attempts)
		}
	}
}
