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

// TestAccountBudgetAlerts: the budget alerts of an organization's, a user's, a team
// membership's, an organization membership's and a tag's accounts name the account and its
// kind (they were sent as a key's, subject "org/<owner>/…", the owner's key id in it: review
// 29c's TestReview29cTagBudgetAlert for tags, folded in here); a key's account is still the key's.
func TestAccountBudgetAlerts(t *testing.T) {
	rec := newFakeAlertReceiver(t)
	w, err := alerting.ParseWebhook(rec.serve.URL, alerting.FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	al, err := alerting.New(alerting.Options{Webhooks: []alerting.Webhook{w}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ budget, subject, kind, noun string }{
		{"org/key_0123abcd/acme", "acme", "organization", "Organization acme"},
		{"user/key_0123abcd/ann", "ann", "user", "User ann"},
		{"member/key_0123abcd/eng/ann", "eng/ann", "team_member", "Team member eng/ann"},
		{"orgmember/key_0123abcd/acme/ann", "acme/ann", "organization_member", "Organization member acme/ann"},
		{"tag/key_0123abcd/team:search", "team:search", "tag", "Tag team:search"},
		{"key/vk_1", "vk_1", "", "Key vk_1"},
		{"litellm-proxy-budget", "litellm-proxy-budget", "proxy", "Proxy budget litellm-proxy-budget"},
	}
	for _, c := range cases {
		budgetAlerts(al)(context.Background(), completions.BudgetAlert{Budget: c.budget, Threshold: alerting.ThresholdMax, SpentUSD: 2, MaxUSD: 1, Time: time.Now()})
	}
	if err := al.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := rec.all()
	if len(got) != len(cases) {
		t.Fatalf("%d alerts, want %d", len(got), len(cases))
	}
	for _, g := range got {
		var e alerting.Event
		if err := json.Unmarshal(g.body, &e); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, c := range cases {
			if e.Subject == c.subject {
				found = true
				if e.Details["subject_kind"] != c.kind || !strings.HasPrefix(e.Message, c.noun) || strings.Contains(string(g.body), "key_0123abcd") {
					t.Errorf("alert %s, want one about %s (%s)", g.body, c.subject, c.kind)
				}
			}
		}
		if !found {
			t.Errorf("an alert of no case: %s", g.body)
		}
	}
}
