package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/switchyard-ai/switchyard/alerting"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/telemetry"
)

// alertFlags are serve's alerting flags.
type alertFlags struct {
	Webhooks []string
	Format   string
	Secret   string
	Events   string
}

func (f *alertFlags) register(fs *flag.FlagSet) {
	fs.Func("alert-webhook", "URL alerts are POSTed to (repeatable or comma-separated); prefix slack: for a Slack incoming webhook ({\"text\": ...}) or json: for the event as JSON (default --alert-format)", func(v string) error {
		// Checked by check, not here: the flag package (and a bad environment variable's
		// error) would quote the whole value, and a webhook's URL may hold its secret.
		f.Webhooks = append(f.Webhooks, splitList(v)...)
		return nil
	})
	fs.StringVar(&f.Format, "alert-format", "json", "format of --alert-webhook URLs without a prefix: json or slack")
	fs.StringVar(&f.Secret, "alert-webhook-secret", "", "secret that signs every alert: X-Switchyard-Signature: sha256=<hex HMAC-SHA256 of \"<X-Switchyard-Timestamp>.<body>\">")
	fs.StringVar(&f.Events, "alert-events", "budget,outage", "comma-separated alerts to send: budget (a virtual key's soft_budget_usd, 85% and 100% of max_budget_usd, once per budget period) and outage (a model's circuit breaker opens and closes, or with --model-health-interval its background health check starts failing or passes again; per process)")
}

// check validates the flags. Its errors never quote a webhook's URL, which may hold its
// secret: they name the webhook by its place and its redacted URL (alerting.RedactURL).
// Nothing is checked without a webhook.
func (f *alertFlags) check() error {
	if len(f.Webhooks) == 0 {
		return nil
	}
	if f.Format != string(alerting.FormatJSON) && f.Format != string(alerting.FormatSlack) {
		return fmt.Errorf("--alert-format must be json or slack, got %q", f.Format)
	}
	for i, u := range f.Webhooks {
		if _, err := alerting.ParseWebhook(u, alerting.Format(f.Format)); err != nil {
			return fmt.Errorf("--alert-webhook %d of %d: %w", i+1, len(f.Webhooks), err)
		}
	}
	for _, e := range splitList(f.Events) {
		if e != alerting.GroupBudget && e != alerting.GroupOutage {
			return fmt.Errorf("--alert-events: %q is not budget or outage", e)
		}
	}
	return nil
}

// alerts is a serve process's alerting: nil when no --alert-webhook is given.
type alerts struct {
	alerter *alerting.Alerter
	budget  bool // budget events on
	outage  bool // outage events on
}

// newAlerts starts the Alerter of f (nil, nil without a webhook); m, when not nil, counts
// its deliveries.
func newAlerts(f alertFlags, m *telemetry.Metrics, log *slog.Logger) (*alerts, error) {
	if len(f.Webhooks) == 0 {
		return nil, nil
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	opts := alerting.Options{Secret: f.Secret, Logger: log}
	for _, u := range f.Webhooks {
		w, err := alerting.ParseWebhook(u, alerting.Format(f.Format))
		if err != nil {
			return nil, fmt.Errorf("--alert-webhook: %w", err)
		}
		opts.Webhooks = append(opts.Webhooks, w)
	}
	if m != nil {
		opts.Observe = m.Alert
	}
	a, err := alerting.New(opts)
	if err != nil {
		return nil, fmt.Errorf("--alert-webhook: %w", err)
	}
	events := splitList(f.Events)
	targets := make([]string, len(opts.Webhooks))
	for i, w := range opts.Webhooks {
		targets[i] = w.String() // redacted: scheme and host
	}
	log.Info("alerts on", "webhooks", strings.Join(targets, ","), "events", strings.Join(events, ","), "signed", f.Secret != "")
	return &alerts{alerter: a, budget: slices.Contains(events, alerting.GroupBudget), outage: slices.Contains(events, alerting.GroupOutage)}, nil
}

// hook sets the gateway's hooks in opts that feed the alerts (a nil a sets none).
func (a *alerts) hook(opts *completions.Options) {
	if a == nil {
		return
	}
	if a.budget {
		opts.BudgetAlert = budgetAlerts(a.alerter)
	}
	if a.outage {
		opts.Breaker.OnChange = outageAlerts(a.alerter)
	}
}

// option is the server option that drains the alerts at shutdown (nil a: none). Listed
// before the gateway's, it closes after it: the gateway's last alerts are sent.
func (a *alerts) option() server.Option {
	return func(s *server.Server) error {
		if a != nil {
			s.OnClose(a.alerter.Close)
		}
		return nil
	}
}

// budgetAlerts turns the gateway's budget thresholds into alerts to al: the subject is
// the virtual key's id, or for a shared account its name — a team's, an end user's, a tag's,
// an organization's, a user's, a team membership's ("team/user"), an organization
// membership's ("org/user") or the proxy-wide budget's (server.ProxyBudgetID) — with its
// kind in Details["subject_kind"].
func budgetAlerts(al *alerting.Alerter) completions.BudgetAlertFunc {
	return func(_ context.Context, b completions.BudgetAlert) {
		// The shared accounts' ids are "<kind>/<owner>/<name>" (the server's *BudgetID and
		// completions.TagBudgetID): the alert names the account, never its owner's key id.
		for _, a := range []struct {
			prefix string
			kind   alerting.AccountKind
		}{{"enduser/", alerting.EndUserAccount}, {"tag/", alerting.TagAccount}, {"team/", alerting.TeamAccount},
			{"org/", alerting.OrganizationAccount}, {"user/", alerting.UserAccount},
			{"member/", alerting.TeamMemberAccount}, {"orgmember/", alerting.OrganizationMemberAccount}} {
			if rest, ok := strings.CutPrefix(b.Budget, a.prefix); ok {
				_, name, _ := strings.Cut(rest, "/")
				_ = al.Send(alerting.AccountBudgetEvent(a.kind, name, b.Threshold, b.SpentUSD, b.SoftUSD, b.MaxUSD, b.PeriodStart, b.Time))
				return
			}
		}
		if b.Budget == server.ProxyBudgetID {
			_ = al.Send(alerting.AccountBudgetEvent(alerting.ProxyAccount, b.Budget, b.Threshold, b.SpentUSD, b.SoftUSD, b.MaxUSD, b.PeriodStart, b.Time))
			return
		}
		key := strings.TrimPrefix(b.Budget, "key/")
		if key == "" {
			key = b.Tag
		}
		_ = al.Send(alerting.BudgetEvent(key, b.Threshold, b.SpentUSD, b.SoftUSD, b.MaxUSD, b.PeriodStart, b.Time))
	}
}

// outageAlerts turns circuit-breaker changes into alerts to al: a breaker that opens from
// closed is a deployment down, one that closes a recovery (a failed probe, open again, and
// the half-open state say nothing new).
func outageAlerts(al *alerting.Alerter) func(completions.BreakerChange) {
	return func(c completions.BreakerChange) {
		switch {
		case c.To == completions.BreakerOpen && c.From == completions.BreakerClosed:
			_ = al.Send(alerting.OutageEvent(c.Model, true, c.Failures, c.Cause, c.Time))
		case c.To == completions.BreakerClosed:
			_ = al.Send(alerting.OutageEvent(c.Model, false, 0, "", c.Time))
		}
	}
}

// healthChanges turns the background health checks' changes into outage alerts (nil: no
// alerts, or outage events off): one when a model's check starts failing, one when it passes
// again, never one per check.
func (a *alerts) healthChanges() func(completions.HealthChange) {
	if a == nil || !a.outage {
		return nil
	}
	return healthAlerts(a.alerter)
}

// healthAlerts sends each health change to al as an alerting.HealthCheckEvent, but for
// the changes the model's circuit breaker reports itself (--model-health-breaker: a check
// failing as an outage opens the breaker, a passing one closes it; HealthChange.Breaker):
// the breaker's alert is the outage's one deployment_down, and its closing the one
// deployment_recovered. The breaker is the source kept because requests act on it and it
// hears of outages from real traffic too; the check still alerts on what the breaker does
// not count (a revoked key, a model the provider no longer serves).
func healthAlerts(al *alerting.Alerter) func(completions.HealthChange) {
	return func(c completions.HealthChange) {
		if c.Breaker {
			return
		}
		_ = al.Send(alerting.HealthCheckEvent(c.Model, c.ModelNames, !c.Healthy, providers.KindOf(c.Err).String(), c.Time))
	}
}
