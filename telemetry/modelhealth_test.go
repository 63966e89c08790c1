package telemetry

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestModelHealth: each checked deployment's gauge says whether its latest check passed, and
// the round's end is a timestamp; before the first round nothing is reported.
func TestModelHealth(t *testing.T) {
	m := New(Options{})
	var round completions.HealthRound
	have := false
	m.ModelHealth(func() (completions.HealthRound, bool) { return round, have })
	if body := scrape(t, m.Handler(""), ""); strings.Contains(body, "switchyard_gateway_deployment_health") {
		t.Fatalf("reported before the first round:\n%s", body)
	}
	end := time.Unix(1700000000, 500_000_000)
	round = completions.HealthRound{Finished: end, Results: []completions.HealthResult{
		{Deployment: completions.Deployment{ModelName: "smart", Model: "openai/gpt-4o"}},
		{Deployment: completions.Deployment{ModelName: "smart", Model: "anthropic/claude"}, Err: errors.New("503")},
	}}
	have = true
	body := scrape(t, m.Handler(""), "")
	for _, want := range []string{
		`switchyard_gateway_deployment_healthy{gen_ai_request_model="openai/gpt-4o",model_group="smart"} 1`,
		`switchyard_gateway_deployment_healthy{gen_ai_request_model="anthropic/claude",model_group="smart"} 0`,
		`switchyard_gateway_deployment_health_checked_timestamp_seconds 1.7000000005e+09`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %s:\n%s", want, body)
		}
	}
}
