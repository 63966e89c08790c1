package telemetry

import "github.com/prometheus/client_golang/prometheus"

// newAlertsCounter is switchyard_alerts_total{event, outcome}.
func newAlertsCounter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "switchyard_alerts_total",
		Help: "Alert deliveries to webhooks (one per event and webhook), by event (soft_budget_crossed, budget_85_percent, budget_reached, deployment_down, deployment_recovered) and outcome (sent, failed, dropped)."},
		[]string{"event", "outcome"})
}

// Alert counts one alert delivery of event with its outcome (switchyard_alerts_total); it
// is alerting.Options.Observe.
func (m *Metrics) Alert(event, outcome string) {
	m.alerts.WithLabelValues(event, outcome).Inc()
}
