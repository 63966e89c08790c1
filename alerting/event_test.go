package alerting

import (
	"strings"
	"testing"
	"time"
)

// TestEndUserBudgetEvent: an end user's budget event names the end user as its subject,
// says so in subject_kind and its message, and keeps the period start.
func TestEndUserBudgetEvent(t *testing.T) {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	e := EndUserBudgetEvent("alice", ThresholdMax, 2, 0, 2, start, start.Add(time.Hour))
	if e.Type != EventBudgetReached || e.Group != GroupBudget || e.Subject != "alice" || e.Details["subject_kind"] != "end_user" ||
		e.Details["period_start"] != "2025-01-01T00:00:00Z" || !strings.HasPrefix(e.Message, "End user alice spent $2.0000") || e.Figures["max_budget_usd"] != 2 {
		t.Fatalf("%+v", e)
	}
	if e := EndUserBudgetEvent("bob", ThresholdSoft, 1, 1, 0, time.Time{}, start); e.Type != EventSoftBudget || e.Details["subject_kind"] != "end_user" {
		t.Fatalf("%+v", e)
	}
}

// TestHealthCheckEvent: a failing health check is a deployment_down outage event naming the
// model, its names, the failure's kind and its source; passing again a deployment_recovered.
func TestHealthCheckEvent(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.FixedZone("x", 3600))
	e := HealthCheckEvent("openai/gpt-4o", []string{"smart", "fast"}, true, "overloaded", at)
	if e.Type != EventDeploymentDown || e.Group != GroupOutage || e.Subject != "openai/gpt-4o" || !e.Time.Equal(at) || e.Time.Location() != time.UTC {
		t.Errorf("down event %+v", e)
	}
	if e.Details["source"] != SourceHealthCheck || e.Details["error_class"] != "overloaded" || e.Details["model_names"] != "smart,fast" || !strings.Contains(e.Message, "health check failed (overloaded)") {
		t.Errorf("down event details %v, message %q", e.Details, e.Message)
	}
	e = HealthCheckEvent("openai/gpt-4o", []string{"smart"}, false, "", at)
	if e.Type != EventDeploymentRecovered || e.Group != GroupOutage || e.Details["source"] != SourceHealthCheck || e.Details["error_class"] != "" || !strings.Contains(e.Message, "recovered") {
		t.Errorf("recovered event %+v", e)
	}
}
