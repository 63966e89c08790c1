package completions

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/alerting"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// BenchmarkBudgetedCompleteAlerts measures what alerting adds to a request of a virtual
// key with a USD budget kept in the store (soft budget, max budget, a month's period): the
// gateway without hooks against one whose BudgetAlert and breaker OnChange feed an
// alerting.Alerter posting to a local receiver. The thresholds are far away, as for nearly
// every request; the request that crosses one also pays one Alerter.Send
// (BenchmarkAlerterSend).
//
//	go test ./completions -run '^$' -bench 'BudgetedCompleteAlerts|AlerterSend' -benchtime 20000x -count 6
func BenchmarkBudgetedCompleteAlerts(b *testing.B) {
	recv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer recv.Close()
	for _, on := range []bool{false, true} {
		name := "alerting_off"
		if on {
			name = "alerting_on"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			st := memstore.New()
			up := newFake("a").on("priced", step{text: "ok", usage: providers.Usage{PromptTokens: 10, CompletionTokens: 5}})
			opts := Options{Providers: fakeRegistry{"a": up}, Prices: fakePrices{}, Store: st}
			if on {
				al, err := alerting.New(alerting.Options{Webhooks: []alerting.Webhook{{URL: recv.URL}}})
				if err != nil {
					b.Fatal(err)
				}
				defer al.Close(ctx)
				opts.BudgetAlert = func(_ context.Context, a BudgetAlert) {
					_ = al.Send(alerting.BudgetEvent(a.Budget, a.Threshold, a.SpentUSD, a.SoftUSD, a.MaxUSD, a.PeriodStart, a.Time))
				}
				opts.Breaker.OnChange = func(c BreakerChange) {
					_ = al.Send(alerting.OutageEvent(c.Model, c.To == BreakerOpen, c.Failures, c.Cause, c.Time))
				}
			}
			g, err := New(opts)
			if err != nil {
				b.Fatal(err)
			}
			bud, err := CreateSharedBudget(ctx, st, "key/bench", BudgetLimits{SoftCostUSD: 1e6, MaxCostUSD: 2e6, ResetEvery: 30 * 24 * time.Hour})
			if err != nil {
				b.Fatal(err)
			}
			scope := Scope{Owner: "o", Tag: "key:bench", Budget: bud}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Complete(ctx, scope, userReq("hi", "a/priced")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAlerterSend is what an alert adds to the request whose charge crossed a
// threshold: building the event and queueing it (the POST is made by a worker).
func BenchmarkAlerterSend(b *testing.B) {
	recv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer recv.Close()
	al, err := alerting.New(alerting.Options{Webhooks: []alerting.Webhook{{URL: recv.URL}}, QueueSize: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer al.Close(context.Background())
	at := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		_ = al.Send(alerting.BudgetEvent("vk_0123456789abcdef", alerting.ThresholdNear, 21.4, 20, 25, at, at))
	}
}
