package telemetry

import "github.com/prometheus/client_golang/prometheus"

// Latencies reports at scrape time how fast each model answered lately, the figures latency
// routing ranks by (completions.Gateway.Latencies), as
// switchyard_gateway_model_latency_seconds{gen_ai_request_model, kind}: kind first_token
// (streams) and per_output_token (every answer); models reported as "other" show their mean.
func (m *Metrics) Latencies(figures func() map[string]map[string]float64) {
	m.reg.MustRegister(&latencyCollector{figures: figures, m: m})
}

var latencyDesc = prometheus.NewDesc("switchyard_gateway_model_latency_seconds",
	"Moving average of a model's latency as the gateway measured its recent answers: kind first_token (streams) or per_output_token.",
	[]string{"gen_ai_request_model", "kind"}, nil)

type latencyCollector struct {
	figures func() map[string]map[string]float64
	m       *Metrics
}

// Describe implements prometheus.Collector.
func (c *latencyCollector) Describe(ch chan<- *prometheus.Desc) { ch <- latencyDesc }

// Collect implements prometheus.Collector: one gauge per model label and kind.
func (c *latencyCollector) Collect(ch chan<- prometheus.Metric) {
	// Models sharing a label ("other") are averaged: one series per (label, kind).
	type series struct{ model, kind string }
	sum, n := map[series]float64{}, map[series]float64{}
	for model, kinds := range c.figures() {
		label := c.m.modelLabel(model, false)
		for kind, v := range kinds {
			s := series{label, kind}
			sum[s] += v
			n[s]++
		}
	}
	for s, v := range sum {
		ch <- prometheus.MustNewConstMetric(latencyDesc, prometheus.GaugeValue, v/n[s], s.model, s.kind)
	}
}
