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
