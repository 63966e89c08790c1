package completions

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestMemberLimitsSharedByReplicas: a model group member's rpm and tpm were counted per
// process, so N replicas let a deployment have N times its limits (where LiteLLM's
// replicas share theirs through Redis). With Options.SharedLimits, the calls and tokens one
// replica counted for a member count on the others from their next Sync: the replica that
// did not call it skips it for the next member once the other reached its limit.
func TestMemberLimitsSharedByReplicas(t *testing.T) {
	for _, c := range []struct {
		name  string
		limit MemberLimits
		calls int // the calls replica A makes to reach the limit
	}{
		{"rpm", MemberLimits{RPM: 2}, 2},
		{"tpm", MemberLimits{TPM: 100}, 2}, // 60 tokens each: 120 ≥ 100
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := newTestClock()
			st := memstore.New()
			groups := map[string]ModelGroup{"g": {Models: []string{"a/m1", "b/m2"}, Limits: []MemberLimits{c.limit, {}}}}
			replica := func(counters *store.Counters) *harness {
				h := newHarness(t, func(o *Options) {
					o.ModelGroups = groups
					o.Now = clock.now
					o.SharedLimits = counters
				})
				h.a.on("m1", step{text: "x", usage: providers.Usage{PromptTokens: 40, CompletionTokens: 20}})
				return h
			}
			ca, cb := store.NewCounters(st, "limits"), store.NewCounters(st, "limits")
			a, b := replica(ca), replica(cb)
			ctx := context.Background()
			sync := func() {
				t.Helper()
				for _, c := range []*store.Counters{ca, cb} {
					if err := c.Sync(ctx, clock.now()); err != nil {
						t.Fatal(err)
					}
				}
			}
			sync()
			for range c.calls {
				if resp, err := a.g.Complete(ctx, Scope{}, groupReq("g")); err != nil || resp.Provider != "a" {
					t.Fatalf("replica A: %v, %v; want a/m1", resp, err)
				}
				clock.advance(time.Second)
			}
			sync()
			resp, err := b.g.Complete(ctx, Scope{}, groupReq("g"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Provider != "b" || resp.Attempts[0].Outcome != OutcomeSkipped || !strings.Contains(resp.Attempts[0].Error, c.name) {
				t.Fatalf("replica B after A reached a/m1's %s: answered by %s, attempts %+v; want a/m1 skipped at its limit", c.name, resp.Provider, resp.Attempts)
			}
			if n := a.a.callCount("m1") + b.a.callCount("m1"); n != c.calls {
				t.Fatalf("a/m1 was called %d times across the replicas, want %d", n, c.calls)
			}
			clock.advance(time.Minute)
			if resp, err := b.g.Complete(ctx, Scope{}, groupReq("g")); err != nil || resp.Provider != "a" {
				t.Fatalf("a minute later on B: %v, %v; want a/m1", resp, err)
			}
		})
	}
}
