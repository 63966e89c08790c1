package providers

import (
	"net/http"
	"slices"
	"testing"
)

// TestRedactShortSecrets: a secret under 8 bytes is redacted where it stands alone (at an
// edge, beside punctuation or space), not inside a longer word or number; a long one
// everywhere; every one as the same "[redacted]".
func TestRedactShortSecrets(t *testing.T) {
	for _, c := range []struct {
		msg     string
		secrets []string
		want    string
	}{
		{"abc", []string{"abc"}, "[redacted]"},
		{"key abc, 'abc' abcd xabc abc.", []string{"abc"}, "key [redacted], '[redacted]' abcd xabc [redacted]."},
		{"HTTP 401: token 1", []string{"1"}, "HTTP 401: token [redacted]"},
		{"k-1x k-1 xk-1", []string{"k-1"}, "k-1x [redacted] xk-1"},
		{"Bearer -_- is -_-x", []string{"-_-"}, "Bearer [redacted] is [redacted]x"}, // edges not letters: anywhere
		{"long-secret-value inside xlong-secret-valuex", []string{"long-secret-value"}, "[redacted] inside x[redacted]x"},
		{"a ab abc", []string{"a", "ab", "abc"}, "[redacted] [redacted] [redacted]"},
	} {
		if got := redactSecrets(c.msg, c.secrets); got != c.want {
			t.Errorf("redactSecrets(%q, %q) = %q, want %q", c.msg, c.secrets, got, c.want)
		}
	}
	h := http.Header{}
	h.Set("Authorization", "Bearer k1")
	h.Set("X-Goog-Api-Key", "g")
	h.Set("Proxy-Authorization", "Basic dQ==")
	h.Set("X-Title", "app")
	got := sentCredentials(h)
	slices.Sort(got)
	if want := []string{"Basic dQ==", "Bearer k1", "dQ==", "g", "k1"}; !slices.Equal(got, want) {
		t.Errorf("sentCredentials = %q, want %q", got, want)
	}
}
