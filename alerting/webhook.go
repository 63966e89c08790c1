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
	u, err := url.Parse(w.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return w, fmt.Errorf("%w: %q is not an http or https URL", ErrInvalidWebhook, w.URL)
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

// slackText is e's message for Slack: a bold title line, then the message.
func slackText(e Event) string {
	title := map[string]string{
		EventSoftBudget:          ":warning: Soft budget crossed",
		EventBudgetNear:          ":warning: Budget 85% used",
		EventBudgetReached:       ":no_entry: Budget reached",
		EventDeploymentDown:      ":rotating_light: Deployment down",
		EventDeploymentRecovered: ":white_check_mark: Deployment recovered",
	}[e.Type]
	if title == "" {
		title = e.Type
	}
	return "*" + title + "*: " + e.Subject + "\n" + e.Message
}
