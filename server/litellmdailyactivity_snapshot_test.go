package server

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// listHookDriver calls onList before each listing of the daily spend.
type listHookDriver struct {
	store.Driver
	onList func()
}

func (d listHookDriver) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	if c == store.SpendRollups {
		d.onList()
	}
	return d.Driver.List(ctx, c, opts)
}

// sameMetrics reports whether a and b are the same totals (the spend up to rounding).
func sameMetrics(a, b litellmSpendMetrics) bool {
	spend := math.Abs(a.Spend-b.Spend) < 1e-9
	a.Spend, b.Spend = 0, 0
	return spend && a == b
}

// checkDailyActivityAddsUp fails t unless, on every day of a, the day's totals are the sum
// of its api_keys, of its models and of its providers, each model's and provider's the sum
// of its api_key_breakdown, and the period's are the sum of its days.
func checkDailyActivityAddsUp(t *testing.T, what string, a litellmDailyActivity) {
	t.Helper()
	var period litellmSpendMetrics
	for _, d := range a.Results {
		var keys, models, providers litellmSpendMetrics
		for _, k := range d.Breakdown.APIKeys {
			addMetrics(&keys, k.Metrics)
		}
		entryAddsUp := func(name string, e litellmMetric) {
			var keys litellmSpendMetrics
			for _, k := range e.APIKeyBreakdown {
				addMetrics(&keys, k.Metrics)
			}
			if !sameMetrics(e.Metrics, keys) {
				t.Fatalf("%s: %s: %s %+v, its api_key_breakdown %+v", what, d.Date, name, e.Metrics, keys)
			}
		}
		for name, m := range d.Breakdown.Models {
			addMetrics(&models, m.Metrics)
			entryAddsUp(name, m)
		}
		for name, p := range d.Breakdown.Providers {
			addMetrics(&providers, p.Metrics)
			entryAddsUp(name, p)
		}
		if !sameMetrics(d.Metrics, keys) || !sameMetrics(d.Metrics, models) || !sameMetrics(d.Metrics, providers) {
			t.Fatalf("%s: %s: the day %+v, its api_keys %+v, models %+v, providers %+v", what, d.Date, d.Metrics, keys, models, providers)
		}
		addMetrics(&period, d.Metrics)
	}
	md := a.Metadata
	if md.TotalAPIRequests != period.APIRequests || md.TotalFailedRequests != period.FailedRequests || md.TotalPromptTokens != period.PromptTokens ||
		math.Abs(md.TotalSpend-period.Spend) > 1e-9 {
		t.Fatalf("%s: the period %+v, its days %+v", what, md, period)
	}
}

// addMetrics adds b to a.
func addMetrics(a *litellmSpendMetrics, b litellmSpendMetrics) {
	a.Spend += b.Spend
	a.PromptTokens += b.PromptTokens
	a.CompletionTokens += b.CompletionTokens
	a.TotalTokens += b.TotalTokens
	a.APIRequests += b.APIRequests
	a.FailedRequests += b.FailedRequests
	a.SuccessfulRequests += b.SuccessfulRequests
}

// TestDailyActivityOneSnapshot: /user/daily/activity read the daily spend per key and per
// model apart, each after writing what was pending, so a request observed between the two
// counted in the day's totals (and models) but not in its api_keys. Now one answer is one
// read: with requests of three keys and three models (one failing) on three days, and a
// request observed while the answer reads the store, every day's totals are the sum of its
// api_keys, models and providers; the request observed meanwhile is in the next answer,
// which adds up too.
func TestDailyActivityOneSnapshot(t *testing.T) {
	var roll *usagelog.Rollup
	var armed atomic.Bool
	own := ownerOfKey(t, testKey)
	day0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	late := func() {
		if armed.CompareAndSwap(true, false) {
			roll.ObserveRequest(context.Background(), completions.RequestRecord{Owner: own, KeyID: "vk_late", Model: "openai/late", Outcome: completions.RequestOK,
				Usage: completions.Usage{PromptTokens: 7, CompletionTokens: 3}})
		}
	}
	hs, s, setNow, r := dailyActivityServerOn(t, func(d store.Driver) store.Driver { return listHookDriver{Driver: d, onList: late} })
	roll = r
	a := litellmGenerate(t, s, `{"key_alias":"a"}`)
	b := litellmGenerate(t, s, `{"key_alias":"b"}`)
	for i := range 3 {
		setNow(day0.AddDate(0, 0, i))
		chatOK(t, hs.URL, testKey, "openai/ok", "")
		chatOK(t, hs.URL, a.Key, "openai/ok", "")
		chatOK(t, hs.URL, b.Key, "openai/free", "")
		if i > 0 {
			chatOK(t, hs.URL, a.Key, "openai/free", "")
		}
		if resp, body := post(t, hs.URL+"/v1/chat/completions", b.Key, `{"model":"openai/down","messages":[{"role":"user","content":"hi"}]}`); resp.StatusCode < 400 {
			t.Fatalf("openai/down: %d %s", resp.StatusCode, body)
		}
	}
	const path = "/user/daily/activity?start_date=2026-03-01&end_date=2026-03-03"
	armed.Store(true)
	first := dailyActivityAnswer(t, s, testKey, path)
	if armed.Load() {
		t.Fatal("the answer did not read the store")
	}
	if len(first.Results) != 3 || first.Metadata.TotalAPIRequests != 14 || first.Metadata.TotalFailedRequests != 3 {
		t.Fatalf("the 14 requests on 3 days: %+v", first.Metadata)
	}
	checkDailyActivityAddsUp(t, "with a request observed while reading", first)
	next := dailyActivityAnswer(t, s, testKey, path)
	checkDailyActivityAddsUp(t, "the next answer", next)
	if next.Metadata.TotalAPIRequests != 15 || next.Results[0].Breakdown.APIKeys["vk_late"].Metrics.PromptTokens != 7 ||
		next.Results[0].Breakdown.Models["openai/late"].Metrics.APIRequests != 1 {
		t.Fatalf("the request observed meanwhile, in the next answer: %+v", next.Results[0])
	}
}
