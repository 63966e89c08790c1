package fetch

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	cases := map[string]string{
		"https://user:pass@bucket.example.com/data/train.csv?X-Amz-Signature=secret&X-Amz-Expires=60": "https://REDACTED@bucket.example.com/data/train.csv?X-Amz-Signature=REDACTED&X-Amz-Expires=REDACTED",
		"https://example.com/a.json":            "https://example.com/a.json",
		"https://example.com/a.json?token":      "https://example.com/a.json?REDACTED",
		"https://example.com/a.json#access=tok": "https://example.com/a.json#REDACTED",
		"file:///tmp/x.csv":                     "file:///tmp/x.csv",
		// Does not parse (bad escape in the host); the secrets still go.
		"https://user:pass@ex%zz.com/p?sig=secret": "https://REDACTED@ex%zz.com/p?REDACTED",
	}
	for in, want := range cases {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestErrorRedactsURL fails fetches of URLs holding credentials in several ways (a status,
// a refused address, a redirect to a refused scheme, an unparsable URL) and checks the
// error names the host and path but neither the password nor the signature.
func TestErrorRedactsURL(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "ftp://user:pass@elsewhere/x?sig=secret", http.StatusFound)
			return
		}
		http.Error(w, "gone", http.StatusNotFound)
	})
	withCreds := strings.Replace(srv.URL, "http://", "http://user:pass@", 1)
	guarded := &Fetcher{}
	open := &Fetcher{AllowLocal: true}
	cases := []struct {
		f   *Fetcher
		url string
	}{
		{open, withCreds + "/data.csv?X-Amz-Signature=secret"},
		{open, withCreds + "/redirect?X-Amz-Signature=secret"},
		{guarded, withCreds + "/data.csv?X-Amz-Signature=secret"},
		{open, "http://user:pass@[::1/x?X-Amz-Signature=secret"},
		{open, "gopher://user:pass@example.com/x?X-Amz-Signature=secret"},
	}
	for _, c := range cases {
		_, err := c.f.Get(context.Background(), c.url)
		if err == nil {
			t.Fatalf("Get(%s) succeeded", Redact(c.url))
		}
		msg := err.Error()
		if strings.Contains(msg, "pass") || strings.Contains(msg, "secret") {
			t.Errorf("error leaks a credential: %s", msg)
		}
		if !strings.Contains(msg, "REDACTED") {
			t.Errorf("error %q does not name the redacted URL", msg)
		}
	}
}
