package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/alerting"
	"github.com/switchyard-ai/switchyard/completions"
)

// TestReview29cTagBudgetAlert: a request tag's account (POST /tag/new's soft_budget and
// max_budget, completions.TagBudgetID) crossing a threshold is alerted as the tag's
// (subject the tag, subject_kind tag), not as a key named "tag/<owner>/<tag>", which
// showed the owner's id and called the tag a key.
func TestReview29cTagBudgetAlert(t *testing.T) {
	rec := newFakeAlertReceiver(t)
	w, err := alerting.ParseWebhook(rec.serve.URL, alerting.FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	al, err := alerting.New(alerting.Options{Webhooks: []alerting.Webhook{w}})
	if err != nil {
		t.Fatal(err)
	}
	budgetAlerts(al)(context.Background(), completions.BudgetAlert{Budget: completions.TagBudgetID("key_0123abcd", "team:search"),
		Threshold: alerting.ThresholdSoft, SpentUSD: 1.5, SoftUSD: 1, Time: time.Now()})
	if err := al.Close(context.Background()); err != nil { // delivers what was queued
		t.Fatal(err)
	}
	got := rec.all()
	if len(got) != 1 {
		t.Fatalf("%d alerts, want 1", len(got))
	}
	var e alerting.Event
	if err := json.Unmarshal(got[0].body, &e); err != nil {
		t.Fatal(err)
	}
	if e.Subject != "team:search" || e.Details["subject_kind"] != "tag" || !strings.HasPrefix(e.Message, "Tag team:search") || strings.Contains(string(got[0].body), "key_0123abcd") {
		t.Fatalf("alert %s, want one about tag team:search", got[0].body)
	}
}
