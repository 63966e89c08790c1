package providers_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestProviderHeaders: a provider entry's headers go with every call (an OpenAI-format and
// an Anthropic-format entry), the call's own credentials winning; a malformed header, one a
// call sets itself or one on a vertex_ai entry is refused naming the field; a header's
// value never shows in an error message.
func TestProviderHeaders(t *testing.T) {
	srv, last := echoUpstream(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "providers.json")
	doc := `{"providers": [
	  {"name": "router", "format": "openai", "base_url": "` + srv.URL + `/v1", "api_key": "sk-router", "headers": {"HTTP-Referer": "https://app.example", "X-Title": "app", "Authorization": "Bearer not-this"}},
	  {"name": "claude-proxy", "format": "anthropic", "base_url": "` + srv.URL + `", "api_key": "sk-a", "headers": {"anthropic-beta": "context-1m-2025-08-07"}}
	]}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	reg, err := providers.FromConfigFile(path, envOf(nil), providers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ model, header, value string }{
		{"router/some-model", "HTTP-Referer", "https://app.example"},
		{"router/some-model", "X-Title", "app"},
		{"router/some-model", "Authorization", "Bearer sk-router"},
		{"claude-proxy/claude-x", "Anthropic-Beta", "context-1m-2025-08-07"},
	} {
		p, model, err := reg.Resolve(c.model)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Complete(context.Background(), hello(model)); err != nil {
			t.Fatalf("%s: %v", c.model, err)
		}
		if got := last.Header.Get(c.header); !strings.Contains(got, c.value) {
			t.Errorf("%s: %s = %q, want %q", c.model, c.header, got, c.value)
		}
	}

	for _, b := range []struct{ doc, field string }{
		{`{"providers":[{"name":"x","format":"openai","base_url":"http://h","headers":{"bad name":"v"}}]}`, "providers[0].headers"},
		{`{"providers":[{"name":"x","format":"openai","base_url":"http://h","headers":{"X-A":"line\nbreak"}}]}`, "providers[0].headers.X-A"},
		{`{"providers":[{"name":"x","format":"openai","base_url":"http://h","headers":{"content-type":"text/plain"}}]}`, "providers[0].headers.content-type"},
		{`{"providers":[{"name":"v","format":"vertex_ai","project":"p","location":"us-central1","headers":{"X-A":"b"}}]}`, "providers[0].headers"},
	} {
		_, err := providers.ParseConfig([]byte(b.doc))
		var ce *providers.ConfigError
		if !errors.As(err, &ce) || ce.Field != b.field {
			t.Errorf("ParseConfig(%s) = %v, want ConfigError on %s", b.doc, err, b.field)
		}
	}

	// A header's value (a proxy's own key) is redacted from the upstream's error message.
	const secret = "proxy-secret-0123456789"
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"bad key `+r.Header.Get("X-Proxy-Key")+`"}}`, http.StatusUnauthorized)
	}))
	t.Cleanup(echo.Close)
	p := providers.NewOpenAI(providers.Config{Name: "p", BaseURL: echo.URL, KeyOptional: true, Headers: map[string]string{"X-Proxy-Key": secret}})
	_, err = p.Complete(context.Background(), hello("m"))
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("error %v: want one without the header's value", err)
	}
}

// TestForwardKeepsCallerBetas: a pass-through request's own anthropic-beta flags (Claude
// Code's) go with the entry's configured ones, as a gateway call's do, rather than being
// replaced by them; another configured header still wins over the caller's.
func TestForwardKeepsCallerBetas(t *testing.T) {
	var got http.Header
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(up.Close)
	p := providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: up.URL, APIKey: "sk-a",
		Headers: map[string]string{"anthropic-beta": "context-1m-2025-08-07", "X-Team": "configured"}})
	h := http.Header{}
	h.Set("Anthropic-Beta", "interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14")
	h.Set("X-Team", "caller")
	resp, err := p.Forward(context.Background(), &providers.ForwardRequest{Method: "POST", Path: "v1/messages", Header: h, Body: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	betas := strings.Join(got.Values("Anthropic-Beta"), ",")
	for _, want := range []string{"interleaved-thinking-2025-05-14", "fine-grained-tool-streaming-2025-05-14", "context-1m-2025-08-07"} {
		if !strings.Contains(betas, want) {
			t.Errorf("anthropic-beta %q: want %s among them", betas, want)
		}
	}
	if got.Get("X-Team") != "configured" {
		t.Errorf("X-Team %q: want the configured value", got.Get("X-Team"))
	}
}

// TestShortSecretHeadersRedacted: a header named as a credential is redacted from errors
// whatever its length — a 4-byte proxy key, a 1-byte token — as "[redacted]", the same
// words as for a long one, so neither the value nor its length shows; where a short value
// stands inside a longer word or number ("HTTP 407" for a token "7") it is left, so the
// message is not mangled into telling it. A short header of another name (a title) stays.
func TestShortSecretHeadersRedacted(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		msg := "proxy said HTTP 407: key " + r.Header.Get("X-Proxy-Key") + " or token " + r.Header.Get("X-Auth-Token") +
			" refused for " + r.Header.Get("X-Title") + "; long " + r.Header.Get("X-Long-Secret")
		http.Error(w, `{"error":{"message":"`+msg+`"}}`, http.StatusUnauthorized)
	}))
	t.Cleanup(echo.Close)
	p := providers.NewOpenAI(providers.Config{Name: "p", BaseURL: echo.URL, KeyOptional: true, Headers: map[string]string{
		"X-Proxy-Key": "s3cr", "X-Auth-Token": "7", "X-Title": "app", "X-Long-Secret": "a-much-longer-proxy-secret"}})
	_, err := p.Complete(context.Background(), hello("m"))
	var pe *providers.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
	const want = "proxy said HTTP 407: key [redacted] or token [redacted] refused for app; long [redacted]"
	if pe.Message != want {
		t.Errorf("message %q, want %q", pe.Message, want)
	}
}
