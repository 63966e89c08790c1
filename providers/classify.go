package providers

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// maxErrorBody bounds how much of an upstream error body is read.
const maxErrorBody = 64 << 10

// maxMessageLen bounds the upstream message kept in an Error.
const maxMessageLen = 500

// errIdle is the cancellation cause used when a response stalls past its idle timeout.
var errIdle = errors.New("providers: upstream stalled past the idle timeout")

// errNoResponse is the cancellation cause used when response headers do not arrive in time.
var errNoResponse = errors.New("providers: no response within the response timeout")

// parseRetryAfter reads a Retry-After header given in seconds or as an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// isContextLengthMessage reports whether an upstream message says the prompt is too long.
func isContextLengthMessage(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{
		"context_length_exceeded", "context length", "context window", "maximum context",
		"prompt is too long", "too many tokens", "input is too long", "exceeds the maximum number of tokens",
		"input token count", "reduce the length", "string_above_max_length", "prompt too long",
		"exceed context limit", // Anthropic: "input length and `max_tokens` exceed context limit"
	} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// isContentFilterMessage reports whether an upstream message says a filter blocked the request.
func isContentFilterMessage(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "content_filter") || strings.Contains(m, "content management policy") ||
		strings.Contains(m, "content filter") || strings.Contains(m, "content_policy_violation")
}

// classifyStatus maps an HTTP status and the upstream's error code/message to a kind.
func classifyStatus(status int, code, msg string) ErrorKind {
	both := code + " " + msg
	switch {
	case isContentFilterMessage(both):
		return KindContentFilter
	case isContextLengthMessage(both):
		return KindContextLength
	}
	lc := strings.ToLower(code)
	switch {
	case lc == "insufficient_quota" || lc == "billing_hard_limit_reached" ||
		strings.Contains(strings.ToLower(msg), "credit balance is too low"): // Anthropic's 400
		// A 429 that waiting does not fix: the account has no credit left.
		return KindQuotaExceeded
	case status == http.StatusTooManyRequests || lc == "rate_limit_error" || lc == "resource_exhausted":
		return KindRateLimited
	case status == http.StatusUnauthorized || status == http.StatusForbidden ||
		lc == "authentication_error" || lc == "permission_error" || lc == "api_key_invalid" ||
		lc == "unauthenticated" || lc == "permission_denied":
		return KindAuth
	case status == 529 || status >= 500 || lc == "overloaded_error" || lc == "api_error" ||
		lc == "unavailable" || lc == "internal" || strings.Contains(strings.ToLower(msg), "overloaded"):
		return KindOverloaded
	case status == http.StatusRequestTimeout:
		return KindTimeout
	case status == http.StatusNotFound || lc == "model_not_found" || lc == "not_found_error" || lc == "not_found":
		// OpenAI's model_not_found, Anthropic's not_found_error, Gemini's NOT_FOUND.
		return KindModelNotFound
	case status >= 400:
		return KindBadRequest
	}
	return KindUnknown
}

// classifyTransport maps an error from sending a request or reading its body to a kind.
// cause is context.Cause of the request's context.
func classifyTransport(err error, cause error) ErrorKind {
	switch {
	case errors.Is(cause, errIdle), errors.Is(cause, errNoResponse):
		return KindTimeout
	case errors.Is(err, context.DeadlineExceeded), errors.Is(cause, context.DeadlineExceeded):
		return KindTimeout
	case errors.Is(err, context.Canceled):
		return KindUnknown
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return KindConnection
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return KindTimeout
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return KindConnection
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return KindConnection
	}
	s := err.Error()
	if strings.Contains(s, "connection reset") || strings.Contains(s, "connection refused") ||
		strings.Contains(s, "server closed") || strings.Contains(s, "broken pipe") {
		return KindConnection
	}
	return KindUnknown
}

// trimMessage removes the secrets (the API key, further credentials) if they were echoed,
// then shortens the message.
func trimMessage(msg string, secrets ...string) string {
	msg = strings.TrimSpace(redactSecrets(msg, secrets))
	if len(msg) > maxMessageLen {
		cut := maxMessageLen
		for cut > 0 && !isRuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}

// redactSecrets replaces every non-empty secret in msg with "[redacted]" (the same words
// whatever the secret's length), the longest first (so a secret containing another goes
// whole). It runs before a message is cut to maxMessageLen: cut first, a long secret (an STS
// session token) or one straddling the cut would keep the piece before the cut. A secret
// shorter than shortSecret goes where it stands alone (not inside a longer run of letters
// and digits): replaced inside words too, a key "1" would turn "HTTP 401" into
// "HTTP 40[redacted]", mangling every message and telling the key to whoever reads them.
func redactSecrets(msg string, secrets []string) string {
	var ss []string
	for _, s := range secrets {
		if s != "" {
			ss = append(ss, s)
		}
	}
	sort.SliceStable(ss, func(i, j int) bool { return len(ss[i]) > len(ss[j]) })
	for _, s := range ss {
		if len(s) >= shortSecret {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		} else {
			msg = replaceStandalone(msg, s, "[redacted]")
		}
	}
	return msg
}

// shortSecret is the length under which a secret is redacted only where it stands alone.
const shortSecret = 8

// replaceStandalone replaces each occurrence of old in s that neither follows nor precedes
// an ASCII letter or digit; an edge of old that is not a letter or digit itself needs no
// such neighbour.
func replaceStandalone(s, old, repl string) string {
	var b strings.Builder
	for i := 0; ; {
		j := strings.Index(s[i:], old)
		if j < 0 {
			if b.Len() == 0 {
				return s
			}
			b.WriteString(s[i:])
			return b.String()
		}
		j += i
		end := j + len(old)
		if (j > 0 && isAlnum(old[0]) && isAlnum(s[j-1])) || (end < len(s) && isAlnum(old[len(old)-1]) && isAlnum(s[end])) {
			b.WriteString(s[i : j+1]) // inside a word: step past its first byte
			i = j + 1
			continue
		}
		b.WriteString(s[i:j])
		b.WriteString(repl)
		i = end
	}
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// readErrorBody reads at most maxErrorBody bytes of an error response.
func readErrorBody(r io.Reader) []byte {
	b, _ := io.ReadAll(io.LimitReader(r, maxErrorBody))
	return b
}
