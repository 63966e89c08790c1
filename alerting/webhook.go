package alerting

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// Format is how a webhook's body is written.
type Format string

// Formats.
const (
	// FormatJSON posts the Event as JSON.
	FormatJSON Format = "json"
	// FormatSlack posts a Slack incoming-webhook body: {"text": "..."}.
	FormatSlack Format = "slack"
)

// Webhook is one destination of alerts.
type Webhook struct {
	// URL is where the alerts are posted (http or https).
	URL string
	// Format is the body's format; "" is FormatJSON.
	Format Format
}

// ParseWebhook reads a webhook as --alert-webhook gives it: a URL, optionally prefixed
// "slack:" or "json:" to choose its format; without a prefix the format is def ("" for
// FormatJSON).
func ParseWebhook(s string, def Format) (Webhook, error) {
	s = strings.TrimSpace(s)
	w := Webhook{URL: s, Format: def}
	for _, f := range []Format{FormatSlack, FormatJSON} {
		if rest, ok := strings.CutPrefix(s, string(f)+":"); ok && !strings.HasPrefix(rest, "//") {
			w = Webhook{URL: rest, Format: f}
		}
	}
	if w.Format == "" {
		w.Format = FormatJSON
	}
	if w.Format != FormatJSON && w.Format != FormatSlack {
		return w, fmt.Errorf("%w: format must be json or slack, got %q", ErrInvalidWebhook, w.Format)
	}
	// The URL is never quoted in the error (nor url.Parse's error, which quotes it): it may
	// hold the webhook's secret (RedactURL).
	u, err := url.Parse(w.URL)
	switch {
	case err != nil:
		return w, fmt.Errorf("%w: the URL does not parse (check its scheme, host, port and escapes)", ErrInvalidWebhook)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return w, fmt.Errorf("%w: %s is not an http or https URL with a host", ErrInvalidWebhook, RedactURL(w.URL))
	}
	return w, nil
}

// body is e written in f.
func (f Format) body(e Event) ([]byte, error) {
	if f == FormatSlack {
		return json.Marshal(struct {
			Text string `json:"text"`
		}{slackText(e)})
	}
	return json.Marshal(e)
}

// slackEscaper escapes the three characters Slack's mrkdwn gives a meaning to
// (https://api.slack.com/reference/surfaces/formatting#escaping): a key's or team's name in
// an alert cannot then make a link (<https://…|text>) or a mention (<!channel>, <@U…>).
var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// slackText is e's message for Slack: a bold title line, then the message, escaped.
func slackText(e Event) string {
	title := map[string]string{
		EventSoftBudget:          ":warning: Soft budget crossed",
		EventBudgetNear:          ":warning: Budget 85% used",
		EventBudgetReached:       ":no_entry: Budget reached",
		EventDeploymentDown:      ":rotating_light: Deployment down",
		EventDeploymentRecovered: ":white_check_mark: Deployment recovered",
	}[e.Type]
	if title == "" {
		title = slackEscaper.Replace(e.Type)
	}
	return "*" + title + "*: " + slackEscaper.Replace(e.Subject) + "\n" + slackEscaper.Replace(e.Message)
}
