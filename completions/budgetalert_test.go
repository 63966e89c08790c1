package completions

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// alertLog is a test BudgetAlertFunc that records every alert.
type alertLog struct {
	mu  sync.Mutex
	got []BudgetAlert
}

func (l *alertLog) record(_ context.Context, a BudgetAlert) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, a)
}

func (l *alertLog) thresholds() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, a := range l.got {
		out = append(out, a.Threshold)
	}
	return out
}

// Each request costs $0.001 (1000 input tokens of a/priced); the thresholds fall between
// requests: soft $0.0045 (the 5th), 85% of $0.0095 (the 9th), $0.0095 (the 10th).
var alertLimits = BudgetLimits{SoftCostUSD: 0.0045, MaxCostUSD: 0.0095, ResetEvery: 24 * time.Hour}

// TestBudgetAlertsOncePerThresholdAndPeriod: charges reaching the soft budget, 85% and
// 100% of the max report each once, later charges nothing; a new period reports them
// again; a new max budget out of reach reports its threshold again when reached.
func TestBudgetAlertsOncePerThresholdAndPeriod(t *testing.T) {
	ctx := context.Background()
	shared, err := CreateSharedBudget(ctx, memstore.New(), "key/t", alertLimits)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*Budget{"memory": NewBudget(alertLimits), "shared": shared} {
		now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
		b.now = func() time.Time { return now }
		var got []string
		charge := func(n int) {
			for range n {
				alerts, err := b.charge(ctx, 1000, 0.001, true)
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range alerts {
					got = append(got, a.Threshold)
					if a.Budget != b.id || a.SoftUSD != 0.0045 || a.MaxUSD != 0.0095 || a.SpentUSD < 0.0045 {
						t.Fatalf("%s: alert %+v", name, a)
					}
				}
			}
		}
		charge(4)
		if len(got) != 0 {
			t.Fatalf("%s: $0.004 reported %v", name, got)
		}
		charge(16) // $0.020: past every threshold, charged anyway (answers in flight)
		if want := []string{ThresholdSoft, ThresholdNear, ThresholdMax}; !slices.Equal(got, want) {
			t.Fatalf("%s: 20 charges reported %v, want %v", name, got, want)
		}
		now = now.Add(25 * time.Hour) // the next period
		got = nil
		charge(20)
		if want := []string{ThresholdSoft, ThresholdNear, ThresholdMax}; !slices.Equal(got, want) {
			t.Fatalf("%s: the next period reported %v, want %v", name, got, want)
		}
	}

	// A raised max budget (PATCH) is reported again when reached; the soft one is not.
	raised := alertLimits
	raised.MaxCostUSD = 0.0295
	st := shared.st
	if err := st.Update(ctx, func(tx store.Tx) error { return SetSharedBudgetLimits(ctx, tx, "key/t", raised) }); err != nil {
		t.Fatal(err)
	}
	b, err := LoadSharedBudget(ctx, st, "key/t")
	if err != nil {
		t.Fatal(err)
	}
	b.now = shared.now
	var got []string
	for range 10 { // $0.020 → $0.030
		alerts, _ := b.charge(ctx, 1000, 0.001, true)
		for _, a := range alerts {
			got = append(got, a.Threshold)
		}
	}
	if want := []string{ThresholdNear, ThresholdMax}; !slices.Equal(got, want) {
		t.Fatalf("after raising the max: %v, want %v", got, want)
	}
}

// TestBudgetAlertsOnceAcrossGateways: two gateways on one store, each with its own hook,
// charge one virtual key's account at once: each threshold is reported once in all.
func TestBudgetAlertsOnceAcrossGateways(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	logs := []*alertLog{{}, {}}
	var gws []*Gateway
	for i := range 2 {
		h := newHarness(t, func(o *Options) { o.Store, o.BudgetAlert = st, logs[i].record })
		h.a.on("priced", step{text: "ok", usage: providers.Usage{PromptTokens: 1000}})
		gws = append(gws, h.g)
	}
	limits := alertLimits
	limits.ResetEvery = 0
	if _, err := CreateSharedBudget(ctx, st, "key/k", limits); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			g := gws[i%2]
			b, err := LoadSharedBudget(ctx, st, "key/k")
			if err != nil {
				t.Error(err)
				return
			}
			for range 5 {
				_, _ = g.Complete(ctx, Scope{Owner: "o", Tag: "key:k", Budget: b}, userReq("hi", "a/priced"))
			}
		})
	}
	wg.Wait()
	all := append(logs[0].thresholds(), logs[1].thresholds()...)
	slices.Sort(all)
	if want := []string{ThresholdNear, ThresholdMax, ThresholdSoft}; !slices.Equal(all, want) { // sorted: "85%" < "max" < "soft"
		t.Fatalf("two gateways reported %v (A %v, B %v), want each threshold once", all, logs[0].thresholds(), logs[1].thresholds())
	}
	b, _ := LoadSharedBudget(ctx, st, "key/k")
	if u := b.Used(ctx); u.CostUSD < limits.MaxCostUSD || u.Crossed != (BudgetCrossings{Soft: true, Near: true, Max: true}) {
		t.Fatalf("the account reads %+v", u)
	}
}
