package fetch

import (
	"errors"
	"net/url"
	"strings"
)

// Redacted replaces secrets in URLs printed by Redact.
const Redacted = "REDACTED"

// Redact returns rawURL fit for logs and error messages: the scheme, host and path are
// kept; user info (user:password@) becomes REDACTED@, every query value becomes REDACTED
// (the names stay, e.g. X-Amz-Signature=REDACTED), and a fragment becomes #REDACTED. A URL
// that does not parse is cut at its first '?' or '#', and anything before an '@' in its
// authority is replaced too, so a secret never survives a parse failure.
func Redact(rawURL string) string {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return redactUnparsed(rawURL)
	}
	if u.User != nil {
		u.User = url.User(Redacted)
	}
	if u.RawQuery != "" || u.ForceQuery {
		u.RawQuery = redactQuery(u.RawQuery)
	}
	if u.Fragment != "" || u.RawFragment != "" {
		u.Fragment, u.RawFragment = Redacted, ""
	}
	if u.Opaque != "" {
		// mailto:secret or similar: nothing in it is known to be safe.
		u.Opaque = Redacted
	}
	return u.String()
}

// redactQuery keeps the parameter names and their order and replaces every value.
func redactQuery(q string) string {
	if q == "" {
		return ""
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		if hasValue {
			parts[i] = name + "=" + Redacted
		} else if p != "" {
			// A bare token (?secret) could itself be the credential.
			parts[i] = Redacted
		}
	}
	return strings.Join(parts, "&")
}

func redactUnparsed(s string) string {
	cut := len(s)
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		cut = i
	}
	out := s[:cut]
	start := 0
	if i := strings.Index(out, "://"); i >= 0 {
		start = i + 3
	}
	authorityEnd := len(out)
	if i := strings.Index(out[start:], "/"); i >= 0 {
		authorityEnd = start + i
	}
	if at := strings.LastIndex(out[start:authorityEnd], "@"); at >= 0 {
		out = out[:start] + Redacted + out[start+at:]
	}
	if cut < len(s) {
		out += string(s[cut]) + Redacted
	}
	return out
}

// redactMessage returns msg with rawURL, and the URL of any *url.Error in err's chain, replaced
// by their redacted forms.
func redactMessage(msg, rawURL string, err error) string {
	var ue *url.Error
	if errors.As(err, &ue) && ue.URL != "" {
		msg = strings.ReplaceAll(msg, ue.URL, Redact(ue.URL))
	}
	if rawURL != "" {
		msg = strings.ReplaceAll(msg, rawURL, Redact(rawURL))
		if t := strings.TrimSpace(rawURL); t != rawURL && t != "" {
			msg = strings.ReplaceAll(msg, t, Redact(t))
		}
	}
	return msg
}
