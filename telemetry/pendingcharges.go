package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-ai/switchyard/completions"
)

// PendingCharges reports at scrape time the budget charges of answered requests that the
// store did not take and the gateway keeps to apply again (completions.Gateway.
// PendingCharges): switchyard_budget_pending_charges (how many are pending),
// switchyard_budget_pending_charges_cost_usd and _tokens (what they hold),
// switchyard_budget_pending_charge_oldest_seconds (how long the oldest has waited; 0 when
// none), and the counters switchyard_budget_pending_charges_applied_total, _lost_total
// (given up: too many pending, or still pending at shutdown) and _unknown_total (a
// commit's answer lost: not applied again). A pending count that keeps rising says the
// store refuses the gateway's writes.
func (m *Metrics) PendingCharges(stats func() completions.PendingChargeStats) {
	m.reg.MustRegister(&pendingChargesCollector{stats: stats})
}

var (
	pendingChargesDesc = prometheus.NewDesc("switchyard_budget_pending_charges",
		"Budget charges of answered requests the store did not take, kept to apply again.", nil, nil)
	pendingCostDesc = prometheus.NewDesc("switchyard_budget_pending_charges_cost_usd",
		"USD the pending budget charges hold.", nil, nil)
	pendingTokensDesc = prometheus.NewDesc("switchyard_budget_pending_charges_tokens",
		"Tokens the pending budget charges hold.", nil, nil)
	pendingOldestDesc = prometheus.NewDesc("switchyard_budget_pending_charge_oldest_seconds",
		"How long the oldest pending budget charge has waited (0: none pending).", nil, nil)
	pendingAppliedDesc = prometheus.NewDesc("switchyard_budget_pending_charges_applied_total",
		"Pending budget charges applied once the store took them.", nil, nil)
	pendingLostDesc = prometheus.NewDesc("switchyard_budget_pending_charges_lost_total",
		"Budget charges given up: too many pending, or still pending when the gateway closed.", nil, nil)
	pendingUnknownDesc = prometheus.NewDesc("switchyard_budget_pending_charges_unknown_total",
		"First budget charges whose commit got no answer and whose outcome the store cannot tell (a store without PostgreSQL's transaction status to ask; one that can tell keeps the charge pending until it does): maybe kept, not applied again.", nil, nil)
)

type pendingChargesCollector struct {
	stats func() completions.PendingChargeStats
}

// Describe implements prometheus.Collector.
func (c *pendingChargesCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{pendingChargesDesc, pendingCostDesc, pendingTokensDesc, pendingOldestDesc,
		pendingAppliedDesc, pendingLostDesc, pendingUnknownDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *pendingChargesCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	oldest := 0.0
	if !s.Oldest.IsZero() {
		oldest = max(0, time.Since(s.Oldest).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(pendingChargesDesc, prometheus.GaugeValue, float64(s.Count))
	ch <- prometheus.MustNewConstMetric(pendingCostDesc, prometheus.GaugeValue, s.CostUSD)
	ch <- prometheus.MustNewConstMetric(pendingTokensDesc, prometheus.GaugeValue, float64(s.Tokens))
	ch <- prometheus.MustNewConstMetric(pendingOldestDesc, prometheus.GaugeValue, oldest)
	ch <- prometheus.MustNewConstMetric(pendingAppliedDesc, prometheus.CounterValue, float64(s.Applied))
	ch <- prometheus.MustNewConstMetric(pendingLostDesc, prometheus.CounterValue, float64(s.Lost))
	ch <- prometheus.MustNewConstMetric(pendingUnknownDesc, prometheus.CounterValue, float64(s.Unknown))
}
