package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// scriptedUpstream is an OpenAI-compatible upstream that counts the calls of each model and
// answers 503 for the models marked down.
type scriptedUpstream struct {
	mu    sync.Mutex
	calls map[string]int
	down  map[string]bool
}

func (u *scriptedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model string `json:"model"`
	}
	json.NewDecoder(r.Body).Decode(&body)
	u.mu.Lock()
	u.calls[body.Model]++
	down := u.down[body.Model]
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if down {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
		return
	}
	io.WriteString(w, `{"id":"x","object":"chat.completion","model":"`+body.Model+`","choices":[{"index":0,"message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
}

func (u *scriptedUpstream) total() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, c := range u.calls {
		n += c
	}
	return n
}

func (u *scriptedUpstream) setDown(model string, down bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.down[model] = down
}

// backgroundHealth is a server whose /health answers a HealthMonitor run on test ticks.
type backgroundHealth struct {
	up      *scriptedUpstream
	s       *Server
	m       *completions.HealthMonitor
	ticks   chan time.Time
	rounds  chan completions.HealthRound
	changes chan completions.HealthChange
	stop    context.CancelFunc
	done    chan struct{}
}

func newBackgroundHealth(t *testing.T) *backgroundHealth {
	t.Helper()
	b := &backgroundHealth{up: &scriptedUpstream{calls: map[string]int{}, down: map[string]bool{}},
		ticks: make(chan time.Time), rounds: make(chan completions.HealthRound, 16),
		changes: make(chan completions.HealthChange, 16), done: make(chan struct{})}
	ups := httptest.NewServer(b.up)
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: ups.URL + "/v1", APIKey: "sk-test"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		ModelGroups: map[string]completions.ModelGroup{
			"grp":   {Models: []string{"up/a", "up/b"}},
			"other": {Models: []string{"up/a"}}, // up/a under two names: one call a round
		}})
	if err != nil {
		t.Fatal(err)
	}
	b.m, err = completions.NewHealthMonitor(g, completions.HealthMonitorOptions{Interval: time.Hour, Concurrency: 4,
		After:    func(time.Duration) <-chan time.Time { return b.ticks },
		OnRound:  func(r completions.HealthRound) { b.rounds <- r },
		OnChange: func(c completions.HealthChange) { b.changes <- c }})
	if err != nil {
		t.Fatal(err)
	}
	b.s = testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	for _, o := range []Option{Completions(g), BackgroundModelHealth(b.m)} {
		if err := o(b.s); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.stop = cancel
	go func() {
		defer close(b.done)
		b.m.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-b.done
	})
	return b
}

// round waits for the monitor's next round.
func (b *backgroundHealth) round(t *testing.T) completions.HealthRound {
	t.Helper()
	select {
	case r := <-b.rounds:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no health check round")
	}
	return completions.HealthRound{}
}

// tick lets the monitor's wait end and waits for the round it starts.
func (b *backgroundHealth) tick(t *testing.T) completions.HealthRound {
	t.Helper()
	select {
	case b.ticks <- time.Now():
	case <-time.After(10 * time.Second):
		t.Fatal("the monitor is not waiting for its tick")
	}
	return b.round(t)
}

type cachedHealthReply struct {
	healthReply
	CheckedAt *time.Time `json:"checked_at"`
}

func cachedHealthOf(t *testing.T, r reply) cachedHealthReply {
	t.Helper()
	healthOf(t, r) // status, counts, no secret
	var h cachedHealthReply
	if err := json.Unmarshal([]byte(r.raw), &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestBackgroundHealthChecksAtStartAndEachTick: the monitor checks every model group member at
// start and at each tick (a model under two names once); /health answers the latest round,
// with its time, without calling upstream; ?model= narrows it, still without a call.
func TestBackgroundHealthChecksAtStartAndEachTick(t *testing.T) {
	b := newBackgroundHealth(t)
	first := b.round(t)
	if n := b.up.total(); n != 2 {
		t.Fatalf("%d upstream calls in the first round, want 2 (up/a once, up/b)", n)
	}
	if len(first.Results) != 3 {
		t.Fatalf("first round: %d results, want the 3 deployments", len(first.Results))
	}
	for range 3 {
		b.tick(t)
	}
	if n := b.up.total(); n != 8 {
		t.Fatalf("%d upstream calls after the start and 3 ticks, want 8", n)
	}
	latest, _ := b.m.Latest()
	for range 5 {
		h := cachedHealthOf(t, do(t, b.s, "GET", "/health", testKey, ""))
		if h.HealthyCount != 3 || h.UnhealthyCount != 0 {
			t.Errorf("cached /health: %+v", h)
		}
		if h.CheckedAt == nil || !h.CheckedAt.Equal(latest.Finished) {
			t.Errorf("checked_at %v, want the latest round's end %v", h.CheckedAt, latest.Finished)
		}
	}
	h := cachedHealthOf(t, do(t, b.s, "GET", "/health?model=grp", testKey, ""))
	if h.HealthyCount != 2 || h.UnhealthyCount != 0 {
		t.Errorf("cached /health?model=grp: %+v", h)
	}
	h = cachedHealthOf(t, do(t, b.s, "GET", "/health?model=up/b", testKey, ""))
	if h.HealthyCount != 1 || h.Healthy[0]["model"] != "up/b" {
		t.Errorf("cached /health?model=up/b: %+v", h)
	}
	if n := b.up.total(); n != 8 {
		t.Errorf("%d upstream calls after cached /health answers, want still 8", n)
	}
	if r := do(t, b.s, "GET", "/health?fresh=maybe", testKey, ""); r.status != http.StatusBadRequest || !strings.Contains(r.raw, "fresh") {
		t.Errorf("fresh=maybe: %d %s, want a 400 naming fresh", r.status, r.raw)
	}
}

// TestBackgroundHealthTurnsUnhealthy: a member that starts failing shows in /health's
// unhealthy endpoints at the next round and is told once as a change (not at every round);
// healthy again, once more.
func TestBackgroundHealthTurnsUnhealthy(t *testing.T) {
	b := newBackgroundHealth(t)
	b.round(t)
	b.up.setDown("b", true)
	b.tick(t)
	h := cachedHealthOf(t, do(t, b.s, "GET", "/health", testKey, ""))
	if h.UnhealthyCount != 1 || h.Unhealthy[0]["model"] != "up/b" || !strings.Contains(h.Unhealthy[0]["error"].(string), "503") && !strings.Contains(h.Unhealthy[0]["error"].(string), "overloaded") {
		t.Fatalf("after up/b went down: %+v", h)
	}
	b.tick(t)
	b.tick(t)
	var changes []completions.HealthChange
	for len(b.changes) > 0 {
		changes = append(changes, <-b.changes)
	}
	if len(changes) != 1 || changes[0].Model != "up/b" || changes[0].Healthy || changes[0].Err == nil {
		t.Fatalf("changes after 3 failed rounds: %+v, want up/b down once", changes)
	}
	b.up.setDown("b", false)
	b.tick(t)
	b.tick(t)
	if len(b.changes) != 1 {
		t.Fatalf("%d changes after recovering, want 1", len(b.changes))
	}
	if c := <-b.changes; c.Model != "up/b" || !c.Healthy {
		t.Errorf("recovery change %+v", c)
	}
	if h := cachedHealthOf(t, do(t, b.s, "GET", "/health", testKey, "")); h.UnhealthyCount != 0 {
		t.Errorf("after recovering: %+v", h)
	}
}

// TestBackgroundHealthFreshChecksNow: ?fresh=true calls upstream as without background checks
// and does not replace the latest round.
func TestBackgroundHealthFreshChecksNow(t *testing.T) {
	b := newBackgroundHealth(t)
	before := b.round(t)
	b.up.setDown("a", true)
	h := cachedHealthOf(t, do(t, b.s, "GET", "/health?fresh=true", testKey, ""))
	if n := b.up.total(); n != 4 {
		t.Errorf("%d upstream calls after a fresh check, want 4 (2 a round)", n)
	}
	if h.UnhealthyCount != 2 || h.HealthyCount != 1 || h.CheckedAt == nil {
		t.Errorf("fresh /health: %+v", h)
	}
	if latest, _ := b.m.Latest(); !latest.Finished.Equal(before.Finished) {
		t.Errorf("a fresh check replaced the latest round")
	}
	if h := cachedHealthOf(t, do(t, b.s, "GET", "/health", testKey, "")); h.UnhealthyCount != 0 {
		t.Errorf("cached /health after a fresh check: %+v, want the background round's", h)
	}
}

// TestBackgroundHealthStopsWithContext: cancelling Run's context ends it while it waits for
// its next tick, and no further round runs.
func TestBackgroundHealthStopsWithContext(t *testing.T) {
	b := newBackgroundHealth(t)
	b.round(t)
	b.stop()
	select {
	case <-b.done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
	if n := b.up.total(); n != 2 {
		t.Errorf("%d upstream calls, want only the first round's 2", n)
	}
}
