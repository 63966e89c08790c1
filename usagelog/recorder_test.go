package usagelog

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func record(owner, model, outcome string, latency time.Duration, cost float64, tokens int) completions.RequestRecord {
	r := completions.RequestRecord{Owner: owner, Outcome: outcome, Model: model, Latency: latency,
		Attempts: []completions.Attempt{{Model: model, Outcome: completions.OutcomeOK, LatencyMS: latency.Milliseconds()}}}
	if outcome == completions.RequestOK {
		r.Usage = completions.Usage{PromptTokens: tokens, CompletionTokens: tokens, TotalTokens: 2 * tokens,
			Costs: completions.Costs{TotalTokensCost: cost, PriceKnown: true}}
	} else {
		r.Model = ""
		r.Attempts[0].Outcome, r.Attempts[0].Kind = completions.OutcomeError, "overloaded"
		r.Err = errors.New("every model failed")
	}
	return r
}

func TestRequestsAreBoundedNewestFirstAndPerOwner(t *testing.T) {
	r := New(Options{Requests: 5})
	ctx := context.Background()
	for i := range 8 {
		owner := "a"
		if i%2 == 1 {
			owner = "b"
		}
		r.ObserveRequest(ctx, record(owner, fmt.Sprintf("p/m%d", i), completions.RequestOK, time.Millisecond, 0, 1))
	}
	// Kept: requests 4-8 (ids), i = 3..7; owner a has i = 4, 6.
	a := r.Requests("a", 0, 0)
	if len(a) != 2 || a[0].Model != "p/m6" || a[1].Model != "p/m4" || a[0].ID != 7 || a[1].ID != 5 {
		t.Fatalf("owner a: %+v", a)
	}
	b := r.Requests("b", 0, 0)
	if len(b) != 3 || b[0].Model != "p/m7" || b[2].Model != "p/m3" {
		t.Fatalf("owner b: %+v", b)
	}
	if got := r.Requests("b", 2, 0); len(got) != 2 || got[1].Model != "p/m5" {
		t.Fatalf("limit: %+v", got)
	}
	if got := r.Requests("b", 0, 7); len(got) != 2 || got[0].ID != 6 || got[1].ID != 4 {
		t.Fatalf("before: %+v", got)
	}
	if got := r.Requests("nobody", 10, 0); got == nil || len(got) != 0 {
		t.Fatalf("unknown owner: %#v", got)
	}
	// The copies are the caller's.
	a[0].Attempts[0].Model = "changed"
	if r.Requests("a", 1, 0)[0].Attempts[0].Model != "p/m6" {
		t.Fatal("Requests shares its attempts")
	}
}

func TestFailedRequestIsNamedAfterItsLastAttempt(t *testing.T) {
	r := New(Options{})
	r.ObserveRequest(context.Background(), record("a", "p/down", completions.RequestFailed, 30*time.Millisecond, 0, 0))
	r.ObserveRequest(context.Background(), completions.RequestRecord{Owner: "a", Outcome: completions.RequestCancelled})
	got := r.Requests("a", 0, 0)
	if len(got) != 2 || got[1].Model != "p/down" || got[1].Answered || got[1].Error != "every model failed" ||
		got[1].Attempts[0].Kind != "overloaded" || got[0].Model != NoModel || got[0].Attempts == nil {
		t.Fatalf("%+v", got)
	}
	s := r.Series("a", time.Hour, time.Minute)
	if len(s.Models) != 2 {
		t.Fatalf("series: %+v", s)
	}
	for _, m := range s.Models {
		switch m.Model {
		case "p/down":
			if m.Total.Errors != 1 || m.Total.Cancelled != 0 {
				t.Fatalf("failed: %+v", m.Total)
			}
		case NoModel:
			if m.Total.Errors != 0 || m.Total.Cancelled != 1 {
				t.Fatalf("cancelled: %+v", m.Total)
			}
		}
	}
}

func TestSeriesBucketMath(t *testing.T) {
	c := &clock{t: time.Date(2026, 5, 1, 10, 0, 30, 0, time.UTC)}
	r := New(Options{Window: time.Hour, Now: c.now})
	ctx := context.Background()
	obs := func(owner, model, outcome string, lat time.Duration, cost float64) {
		r.ObserveRequest(ctx, record(owner, model, outcome, lat, cost, 10))
	}
	// 10:00: two of x (100 ms and 300 ms), one failed x, one of y; owner b's x.
	obs("a", "p/x", completions.RequestOK, 100*time.Millisecond, 0.25)
	obs("a", "p/x", completions.RequestOK, 300*time.Millisecond, 0.5)
	obs("a", "p/x", completions.RequestFailed, 50*time.Millisecond, 0)
	obs("a", "p/y", completions.RequestOK, 20*time.Millisecond, 2)
	obs("b", "p/x", completions.RequestOK, 1000*time.Millisecond, 100)
	// 10:07 and 10:14: one x each.
	c.t = c.t.Add(7 * time.Minute)
	obs("a", "p/x", completions.RequestOK, 200*time.Millisecond, 1)
	c.t = c.t.Add(7 * time.Minute)
	obs("a", "p/x", completions.RequestOK, 400*time.Millisecond, 1)

	s := r.Series("a", time.Hour, time.Minute)
	if len(s.Models) != 2 || s.Models[0].Model != "p/x" || s.Models[1].Model != "p/y" || s.StepSeconds != 60 {
		t.Fatalf("models: %+v", s)
	}
	x := s.Models[0]
	want := Bucket{Requests: 5, Errors: 1, PromptTokens: 40, CompletionTokens: 40, CostUSD: 2.75, LatencyMSSum: 1050, LatencyMSMax: 400}
	if x.Total != want {
		t.Fatalf("x total = %+v, want %+v", x.Total, want)
	}
	if len(x.Points) != 3 || !x.Points[0].T.Equal(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)) ||
		x.Points[0].Requests != 3 || x.Points[0].LatencyMSMax != 300 || math.Abs(x.Points[0].LatencyMSMean-150) > 1e-9 ||
		!x.Points[2].T.Equal(time.Date(2026, 5, 1, 10, 14, 0, 0, time.UTC)) {
		t.Fatalf("x points: %+v", x.Points)
	}
	if !s.End.Equal(time.Date(2026, 5, 1, 10, 15, 0, 0, time.UTC)) || !s.Start.Equal(time.Date(2026, 5, 1, 9, 15, 0, 0, time.UTC)) {
		t.Fatalf("range %v - %v", s.Start, s.End)
	}

	// Steps of 10 minutes are aligned: 10:00-10:10 holds 10:00 and 10:07.
	s = r.Series("a", time.Hour, 10*time.Minute)
	x = s.Models[0]
	if s.StepSeconds != 600 || len(x.Points) != 2 || x.Points[0].Requests != 4 || x.Points[1].Requests != 1 ||
		x.Points[0].CostUSD != 1.75 || x.Points[0].LatencyMSMax != 300 {
		t.Fatalf("10 min steps: %+v", x.Points)
	}

	// A 10-minute window leaves 10:00 out (it covers 10:05-10:14).
	s = r.Series("a", 10*time.Minute, time.Minute)
	if len(s.Models) != 1 || s.Models[0].Total.Requests != 2 {
		t.Fatalf("10 min window: %+v", s)
	}

	// Owner b sees only its own.
	s = r.Series("b", time.Hour, time.Minute)
	if len(s.Models) != 1 || s.Models[0].Total.CostUSD != 100 {
		t.Fatalf("owner b: %+v", s)
	}

	// An hour later 10:00 has left the window; its slot is reused by 11:00 without mixing.
	c.t = time.Date(2026, 5, 1, 11, 0, 10, 0, time.UTC)
	obs("a", "p/y", completions.RequestOK, 10*time.Millisecond, 3)
	s = r.Series("a", 24*time.Hour, time.Minute) // clamped to the recorder's hour
	for _, m := range s.Models {
		switch m.Model {
		case "p/x":
			if m.Total.Requests != 2 {
				t.Fatalf("x after an hour: %+v", m.Total)
			}
		case "p/y":
			if m.Total.Requests != 1 || m.Total.CostUSD != 3 {
				t.Fatalf("y after an hour (the old minute mixed in?): %+v", m.Total)
			}
		}
	}
	if got := s.End.Sub(s.Start); got != time.Hour {
		t.Fatalf("clamped window = %v", got)
	}
}

func TestSeriesPerMinuteIsBounded(t *testing.T) {
	r := New(Options{SeriesPerMinute: 3})
	for i := range 10 {
		r.ObserveRequest(context.Background(), record("a", fmt.Sprintf("p/m%d", i), completions.RequestOK, time.Millisecond, 1, 1))
	}
	s := r.Series("a", time.Hour, time.Minute)
	total := 0
	var other *ModelSeries
	for i, m := range s.Models {
		total += m.Total.Requests
		if m.Model == OtherModel {
			other = &s.Models[i]
		}
	}
	if len(s.Models) != 4 || other == nil || other.Total.Requests != 7 || total != 10 {
		t.Fatalf("%+v", s.Models)
	}
}

func TestConcurrentObservers(t *testing.T) {
	r := New(Options{Requests: 64})
	done := make(chan bool)
	for g := range 8 {
		go func() {
			for i := range 200 {
				r.ObserveRequest(context.Background(), record(fmt.Sprint(g%2), "p/m", completions.RequestOK, time.Millisecond, 0.001, i))
				if i%50 == 0 {
					r.Requests("0", 10, 0)
					r.Series("1", time.Hour, 5*time.Minute)
				}
			}
			done <- true
		}()
	}
	for range 8 {
		<-done
	}
	n := 0
	for _, m := range r.Series("0", time.Hour, time.Hour).Models {
		n += m.Total.Requests
	}
	if n != 800 || len(r.Requests("0", 0, 0))+len(r.Requests("1", 0, 0)) != 64 {
		t.Fatalf("counted %d", n)
	}
}

// BenchmarkObserveRequest is the recorder's cost per gateway request (BENCHMARKS.md).
func BenchmarkObserveRequest(b *testing.B) {
	r := New(Options{})
	rec := record("key_0123456789abcdef", "openai/gpt-4o-mini", completions.RequestOK, 120*time.Millisecond, 0.0001, 50)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.ObserveRequest(context.Background(), rec)
		}
	})
}

// TestEmbeddingsRequestsAreMarked: an embeddings request is listed with its operation.
func TestEmbeddingsRequestsAreMarked(t *testing.T) {
	r := New(Options{})
	r.ObserveRequest(context.Background(), completions.RequestRecord{Owner: "a", Operation: completions.OperationEmbeddings, Outcome: completions.RequestOK,
		Model: "openai/text-embedding-3-small", Usage: completions.Usage{PromptTokens: 9, TotalTokens: 9}})
	r.ObserveRequest(context.Background(), completions.RequestRecord{Owner: "a", Outcome: completions.RequestOK, Model: "openai/gpt-4o"})
	got := r.Requests("a", 10, 0)
	if len(got) != 2 || got[1].Operation != "embeddings" || got[1].PromptTokens != 9 || got[0].Operation != "" {
		t.Fatalf("requests %+v", got)
	}
}
