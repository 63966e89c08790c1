package completions

import (
	"strings"
	"testing"
)

// TestPublicURLNeverShowsCredentials: api_base keeps scheme, host and path and drops user
// info, query and fragment; a base URL without a scheme or host (where a password cannot be
// told apart from the rest) is not shown at all.
func TestPublicURLNeverShowsCredentials(t *testing.T) {
	for raw, want := range map[string]string{
		"https://api.openai.com/v1":                      "https://api.openai.com/v1",
		"https://user:SECRET@host.example/v1?key=SECRET": "https://host.example/v1",
		"http://SECRET@10.0.0.1:8080/v1#SECRET":          "http://10.0.0.1:8080/v1",
		"user:SECRET@host.example/v1":                    "",
		"SECRET@host.example/v1":                         "",
		"host.example/v1":                                "",
		"":                                               "",
		"://bad":                                         "",
	} {
		got := PublicURL(raw)
		if got != want || strings.Contains(got, "SECRET") {
			t.Errorf("PublicURL(%q) = %q, want %q", raw, got, want)
		}
	}
}
