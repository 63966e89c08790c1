package completions

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestCircuitBreakerSharedByReplicas: with Options.SharedLimits, a breaker one replica
// opens opens on the others at their next Sync, so they skip the failing model without
// each paying Failures calls to learn it (LiteLLM shares its cooldowns the same way); a
// replica whose breaker is already open or probing keeps its own state.
func TestCircuitBreakerSharedByReplicas(t *testing.T) {
	up := newScriptedUpstream(t)
	adapter := providers.NewOpenAI(providers.Config{Name: "up", BaseURL: up.srv.URL + "/v1", APIKey: "sk-test"})
	st := memstore.New()
	ctx := context.Background()
	var logsB strings.Builder
	replica := func(c *store.Counters, logs io.Writer) *Gateway {
		g, err := New(Options{Providers: fakeRegistry{"up": adapter}, Sleep: (&sleepRecorder{}).sleep, SharedLimits: c,
			Backoff: Backoff{Initial: time.Millisecond, Jitter: -1}, Breaker: BreakerOptions{Failures: 3, Cooldown: time.Hour},
			Logger: slog.New(slog.NewTextHandler(logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	ca, cb := store.NewCounters(st, "limits"), store.NewCounters(st, "limits")
	a, b := replica(ca, io.Discard), replica(cb, &logsB)
	sync := func() {
		t.Helper()
		for _, c := range []*store.Counters{ca, cb} {
			if err := c.Sync(ctx, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	sync()
	up.on("primary", status(503, "", "Service Unavailable"))
	up.on("backup", answer(backupAnswer))
	ask := func(g *Gateway) *Response {
		t.Helper()
		req := userReq("hi", "up/primary")
		req.FallbackModels = []string{"up/backup"}
		req.MaxRetries = intp(0)
		resp, err := g.Complete(ctx, Scope{}, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for range 3 {
		ask(a)
	}
	if a.BreakerStates()["up/primary"] != BreakerOpen || len(b.BreakerStates()) != 0 {
		t.Fatalf("before a Sync: a %v, b %v", a.BreakerStates(), b.BreakerStates())
	}
	sync()
	if b.BreakerStates()["up/primary"] != BreakerOpen {
		t.Fatalf("after a Sync b's breakers read %v, want up/primary open", b.BreakerStates())
	}
	calls := up.callCount("primary")
	if resp := ask(b); resp.Attempts[0].Outcome != OutcomeSkipped || resp.Attempts[0].Kind != "circuit_open" || up.callCount("primary") != calls {
		t.Fatalf("b called the model a found down: attempts %+v", resp.Attempts)
	}
	if !strings.Contains(logsB.String(), "circuit breaker open") || !strings.Contains(logsB.String(), "another replica") {
		t.Errorf("b's log does not say why it opened:\n%s", logsB.String())
	}
	// Nothing more is shared while nothing trips again: b's state stays its own.
	sync()
	if b.BreakerStates()["up/primary"] != BreakerOpen {
		t.Fatalf("b's breakers %v", b.BreakerStates())
	}
}
