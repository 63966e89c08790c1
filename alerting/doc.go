// Package alerting delivers operator alerts (LiteLLM's budget_alerts and outage_alerts) to
// webhooks.
//
// An [Alerter] holds a bounded queue and a few workers: [Alerter.Send] never blocks (a full
// queue drops the delivery and counts it), each delivery is one HTTP POST per webhook with
// a timeout, retried with exponential backoff on a network error, a 429 or a 5xx, and
// [Alerter.Close] drains what is queued. Each webhook has its format: [FormatJSON] posts the
// [Event] as JSON, [FormatSlack] posts a Slack incoming-webhook body {"text": ...}.
//
// With a secret, every POST carries
//
//	X-Switchyard-Timestamp: <Unix seconds>
//	X-Switchyard-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>" keyed by the secret>
//
// so a receiver can check that the alert came from this server and is recent ([Verify]).
//
// The package knows nothing of the gateway: events are built by the caller ([BudgetEvent],
// [OutageEvent]) from the gateway's hooks.
package alerting
