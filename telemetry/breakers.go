package telemetry

import "github.com/prometheus/client_golang/prometheus"

// Breakers reports circuit-breaker state at scrape time, as
// switchyard_gateway_circuit_breaker_state{gen_ai_request_model, state} = 1 for each
// model's current state (closed, open, half_open); the models reported as "other" add up. states is the gateway's
// (completions.Gateway.BreakerStates); models never tripped are absent.
func (m *Metrics) Breakers(states func() map[string]string) {
	m.reg.MustRegister(&breakerCollector{states: states, m: m})
}

var breakerDesc = prometheus.NewDesc("switchyard_gateway_circuit_breaker_state",
	"Circuit breaker state per model: 1 for its current state (closed, open or half_open).",
	[]string{"gen_ai_request_model", "state"}, nil)

type breakerCollector struct {
	states func() map[string]string
	m      *Metrics
}

func (c *breakerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- breakerDesc }

func (c *breakerCollector) Collect(ch chan<- prometheus.Metric) {
	// Several models may share the label "other": one series per (label, state), counting
	// the models in that state (a duplicate series fails the whole scrape).
	type series struct{ model, state string }
	n := map[series]float64{}
	for model, state := range c.states() {
		n[series{c.m.modelLabel(model, false), state}]++
	}
	for s, v := range n {
		ch <- prometheus.MustNewConstMetric(breakerDesc, prometheus.GaugeValue, v, s.model, s.state)
	}
}
