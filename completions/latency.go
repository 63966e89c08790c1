package completions

import (
	"slices"
	"sync"
	"time"
)

// latencyWeight is the weight of a new measurement in a model's moving averages: the last
// ten or so answers count, so a model that slowed down is ranked by how it answers now.
const latencyWeight = 0.2

// maxLatencyModels bounds the models measured (request bodies name models; a flood of
// made-up names must not grow the table without end): models beyond it are not measured.
const maxLatencyModels = 4096

// latencyStats keeps, per model ("provider/model"), moving averages of how fast it answered
// this process's recent requests — the figures that latency routing (ModelGroup.Fastest,
// tradeoff "latency") ranks by, as LiteLLM's latency-based routing does:
//
//   - firstToken: seconds from the start of a streamed attempt to its first fragment
//     (what a streaming client waits before it sees anything);
//   - perToken: seconds of a whole attempt per output token (streamed or not; an answer's
//     length does not make its model look slow).
//
// An attempt that timed out or found the model unavailable (a 429, a 5xx, a broken
// connection) counts as one that took its time, at least the first-token timeout, for both
// figures: a failing model sinks below the ones that answer. The zero value is ready to use; it is safe for concurrent use.
type latencyStats struct {
	mu     sync.Mutex
	models map[string]*modelLatency
}

// modelLatency is one model's figures (seconds) and how many measurements each averages.
type modelLatency struct {
	firstToken, perToken float64
	streams, answers     int
}

// ewma is the moving average avg of n measurements with sample added (sample alone when
// n is 0).
func ewma(avg float64, n int, sample float64) float64 {
	if n == 0 {
		return sample
	}
	return avg + latencyWeight*(sample-avg)
}

// entry returns model's figures, nil when the table is full and model is not in it. The
// caller holds mu.
func (l *latencyStats) entry(model string) *modelLatency {
	if l.models == nil {
		l.models = map[string]*modelLatency{}
	}
	m := l.models[model]
	if m == nil && len(l.models) < maxLatencyModels {
		m = &modelLatency{}
		l.models[model] = m
	}
	return m
}

// answered records an attempt of model that answered in total with tokens output tokens;
// firstToken is when its first fragment came, for a streamed attempt (0 for a whole one).
func (l *latencyStats) answered(model string, firstToken, total time.Duration, tokens int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.entry(model)
	if m == nil {
		return
	}
	if firstToken > 0 {
		m.firstToken = ewma(m.firstToken, m.streams, firstToken.Seconds())
		m.streams++
	}
	m.perToken = ewma(m.perToken, m.answers, total.Seconds()/float64(max(tokens, 1)))
	m.answers++
}

// timedOut records an attempt of model that gave nothing in took (it timed out or was
// unavailable): as slow as that, on both figures.
func (l *latencyStats) timedOut(model string, took time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.entry(model)
	if m == nil {
		return
	}
	s := took.Seconds()
	m.firstToken, m.perToken = ewma(m.firstToken, m.streams, s), ewma(m.perToken, m.answers, s)
	m.streams++
	m.answers++
}

// figure is model's latency for a request (its time to first token when streamed, else its
// time per output token) and whether it was measured.
func (l *latencyStats) figure(model string, stream bool) (float64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.models[model]
	switch {
	case m == nil:
		return 0, false
	case stream && m.streams > 0:
		return m.firstToken, true
	case !stream && m.answers > 0:
		return m.perToken, true
	}
	return 0, false
}

// fastestFirst orders ts by their measured latency for the request (see figure), fastest
// first; models not measured yet come before all others, in their given order, so that
// each gets measured (a new deployment is tried rather than never chosen).
func (l *latencyStats) fastestFirst(ts []target, stream bool) []target {
	type timed struct {
		t        target
		secs     float64
		measured bool
	}
	all := make([]timed, len(ts))
	for i, t := range ts {
		s, ok := l.figure(t.name, stream)
		all[i] = timed{t, s, ok}
	}
	slices.SortStableFunc(all, func(a, b timed) int {
		switch {
		case a.measured != b.measured:
			if !a.measured {
				return -1
			}
			return 1
		case a.secs < b.secs:
			return -1
		case a.secs > b.secs:
			return 1
		}
		return 0
	})
	out := make([]target, len(ts))
	for i, x := range all {
		out[i] = x.t
	}
	return out
}

// Latency returns model's ("provider/model") seconds per output token as the gateway
// measured its recent answers (a moving average; see ModelGroup.Fastest), and whether it
// has any: for a model selector's latency tradeoff (routing.Options.Latency).
func (g *Gateway) Latency(model string) (float64, bool) { return g.latency.figure(model, false) }

// Latencies returns every measured model's figures, in seconds: "first_token" (streams)
// and "per_output_token" (every answer), each present once measured — for metrics
// (telemetry.Metrics.Latencies).
func (g *Gateway) Latencies() map[string]map[string]float64 {
	g.latency.mu.Lock()
	defer g.latency.mu.Unlock()
	out := make(map[string]map[string]float64, len(g.latency.models))
	for name, m := range g.latency.models {
		kinds := map[string]float64{}
		if m.streams > 0 {
			kinds["first_token"] = m.firstToken
		}
		if m.answers > 0 {
			kinds["per_output_token"] = m.perToken
		}
		out[name] = kinds
	}
	return out
}

// latencies is the measured latency (see figure) of each of names that has one, for a
// LatencyRanker; unmeasured models are given 0 — the fastest — so that they get tried
// and measured.
func (l *latencyStats) latencies(names []string, stream bool) map[string]float64 {
	out := make(map[string]float64, len(names))
	for _, n := range names {
		s, _ := l.figure(n, stream)
		out[n] = s
	}
	return out
}
