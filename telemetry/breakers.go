package telemetry

import "github.com/prometheus/client_golang/prometheus"

// Breakers reports circuit-breaker state at scrape time, as
// switchyard_gateway_circuit_breaker_state{gen_ai_request_model, state} = 1 for each
// model's current state (closed, open, half_open). states is the gateway's
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
	for model, state := range c.states() {
		ch <- prometheus.MustNewConstMetric(breakerDesc, prometheus.GaugeValue, 1, c.m.models.value(model), state)
	}
}
