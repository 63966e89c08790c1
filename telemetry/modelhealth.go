package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-ai/switchyard/completions"
)

// ModelHealth reports the background model health checks (completions.HealthMonitor's
// Latest) at scrape time, as
// switchyard_gateway_deployment_healthy{model_group, gen_ai_request_model} = 1 (its last
// check passed) or 0 for each deployment checked, and
// switchyard_gateway_deployment_health_checked_timestamp_seconds, the Unix time the latest
// round ended. Nothing is reported before the first round has ended. A model group and model
// pair that shares its label values with another (models past the label bound are "other")
// reads 0 when any of them is unhealthy.
func (m *Metrics) ModelHealth(latest func() (completions.HealthRound, bool)) {
	m.reg.MustRegister(&modelHealthCollector{latest: latest, m: m})
}

var (
	deploymentHealthyDesc = prometheus.NewDesc("switchyard_gateway_deployment_healthy",
		"Whether a deployment's latest background health check passed (1) or failed (0) (serve --model-health-interval).",
		[]string{"model_group", "gen_ai_request_model"}, nil)
	healthCheckedDesc = prometheus.NewDesc("switchyard_gateway_deployment_health_checked_timestamp_seconds",
		"Unix time the latest round of background model health checks ended.", nil, nil)
)

type modelHealthCollector struct {
	latest func() (completions.HealthRound, bool)
	m      *Metrics
}

func (c *modelHealthCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- deploymentHealthyDesc
	ch <- healthCheckedDesc
}

func (c *modelHealthCollector) Collect(ch chan<- prometheus.Metric) {
	round, ok := c.latest()
	if !ok {
		return
	}
	type series struct{ group, model string }
	healthy := map[series]float64{}
	var order []series
	for _, r := range round.Results {
		s := series{r.Deployment.ModelName, c.m.modelLabel(r.Deployment.Model, false)}
		v, seen := healthy[s]
		if !seen {
			order = append(order, s)
			v = 1
		}
		if r.Err != nil {
			v = 0
		}
		healthy[s] = v
	}
	for _, s := range order {
		ch <- prometheus.MustNewConstMetric(deploymentHealthyDesc, prometheus.GaugeValue, healthy[s], s.group, s.model)
	}
	ch <- prometheus.MustNewConstMetric(healthCheckedDesc, prometheus.GaugeValue, float64(round.Finished.UnixNano())/1e9)
}
