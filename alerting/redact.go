package alerting

import (
	"log/slog"
	"net/url"
	"strings"
)

// RedactURL is raw as it may be shown in messages and logs: its scheme and host only. A
// webhook's credentials are often in its URL (user:password, a token in the query string,
// a Slack incoming webhook's /services/T…/B…/<secret> path), so the userinfo, query and
// fragment are dropped and any path beyond "/" becomes "/…". A URL that does not parse, or
// has no host, is not shown at all.
func RedactURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "(URL not shown)"
	}
	out := u.Scheme + "://" + u.Host
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
		out += "/…"
	}
	return out
}

// String is w with its URL redacted (RedactURL): printing a Webhook never shows its secret.
func (w Webhook) String() string {
	f := w.Format
	if f == "" {
		f = FormatJSON
	}
	return string(f) + ":" + RedactURL(w.URL)
}

// LogValue is w's String, so that a Webhook logged with log/slog never shows its secret.
func (w Webhook) LogValue() slog.Value { return slog.StringValue(w.String()) }
