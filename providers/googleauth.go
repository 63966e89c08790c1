package providers

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// googleCloudScope is the OAuth 2.0 scope of Vertex AI calls.
const googleCloudScope = "https://www.googleapis.com/auth/cloud-platform"

// googleTokenEarly is how long before it expires a cached access token is fetched again
// (Google's last an hour), so that no request goes out with one about to lapse.
const googleTokenEarly = 5 * time.Minute

// googleTokenTimeout bounds one token fetch that its request's context does not bound.
const googleTokenTimeout = 30 * time.Second

// googleTokens yields the OAuth 2.0 access tokens of Vertex AI calls: a fixed one, or
// one from Google credentials, cached and fetched again googleTokenEarly before it
// expires. A fetch is made with the context of the request that needs it, one at a time:
// requests arriving meanwhile wait for it (or for their own context to end).
type googleTokens struct {
	// static is a fixed token (VertexConfig.AccessToken); the rest is then unused.
	static string
	// source returns a token source that fetches through the HTTP client ctx carries
	// (oauth2.HTTPClient), each Token call a fetch.
	source func(ctx context.Context) (oauth2.TokenSource, error)
	// transport is what fetches go through (the adapter's HTTP client's).
	transport http.RoundTripper
	now       func() time.Time

	mu      sync.Mutex
	tok     *oauth2.Token
	pending *tokenFetch
}

// tokenFetch is a fetch under way; done is closed when tok or err is set.
type tokenFetch struct {
	done chan struct{}
	tok  *oauth2.Token
	err  error
	// callerGone says the fetch failed because the request that made it ended (not by its
	// own bound): its waiters then fetch with their own contexts.
	callerGone bool
}

// token returns a valid access token. A cached token that a failed fetch meant to replace
// early is used while it has not (nearly) expired.
func (t *googleTokens) token(ctx context.Context) (string, error) {
	if t.static != "" {
		return t.static, nil
	}
	for {
		t.mu.Lock()
		if tok := t.tok; tok != nil && (tok.Expiry.IsZero() || t.now().Add(googleTokenEarly).Before(tok.Expiry)) {
			t.mu.Unlock()
			return tok.AccessToken, nil
		}
		f, lead := t.pending, t.pending == nil
		if lead {
			f = &tokenFetch{done: make(chan struct{})}
			t.pending = f
		}
		t.mu.Unlock()
		if lead {
			f.tok, f.err = t.fetch(ctx)
			f.callerGone = f.err != nil && ctx.Err() != nil
			t.mu.Lock()
			if f.err == nil {
				t.tok = f.tok
			}
			t.pending = nil
			t.mu.Unlock()
			close(f.done)
			if f.err != nil {
				if tok, ok := t.stillValid(); ok {
					return tok, nil
				}
				return "", f.err
			}
			return f.tok.AccessToken, nil
		}
		select {
		case <-f.done:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		switch {
		case f.err == nil:
			return f.tok.AccessToken, nil
		case ctx.Err() != nil:
			return "", ctx.Err()
		case !f.callerGone:
			// The fetch failed on its own (its own bound included): its waiters share that.
			if tok, ok := t.stillValid(); ok {
				return tok, nil
			}
			return "", f.err
		}
		// The request that fetched was cancelled: this one fetches with its own context.
	}
}

// googleTokenMargin is how long before its expiry a cached token is no longer used even
// when a new one cannot be had (x/oauth2's margin).
const googleTokenMargin = 10 * time.Second

// stillValid returns the cached token while it has more than googleTokenMargin left.
func (t *googleTokens) stillValid() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tok := t.tok; tok != nil && tok.AccessToken != "" && (tok.Expiry.IsZero() || t.now().Add(googleTokenMargin).Before(tok.Expiry)) {
		return tok.AccessToken, true
	}
	return "", false
}

// fetch gets a new token with ctx: the token endpoint's request carries it (so it ends
// with the request that needs the token), and it is bounded by googleTokenTimeout.
func (t *googleTokens) fetch(ctx context.Context) (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(ctx, googleTokenTimeout)
	defer cancel()
	base := t.transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc := &http.Client{Transport: contextTransport{ctx: ctx, base: base}}
	src, err := t.source(context.WithValue(ctx, oauth2.HTTPClient, hc))
	if err != nil {
		return nil, fmt.Errorf("google credentials: %w", err)
	}
	// The call is waited for only as long as ctx lasts: a source that does not take its
	// context (the metadata server's) cannot hold the request past its end.
	type result struct {
		tok *oauth2.Token
		err error
	}
	got := make(chan result, 1)
	go func() {
		tok, err := src.Token()
		got <- result{tok, err}
	}()
	var tok *oauth2.Token
	select {
	case r := <-got:
		tok, err = r.tok, r.err
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("fetching an access token: %w", ctx.Err())
		}
		return nil, fmt.Errorf("fetching an access token: %w", err)
	}
	if tok.AccessToken == "" {
		return nil, errors.New("fetching an access token: the answer has none")
	}
	return tok, nil
}

// contextTransport sends every request with ctx, for the token sources of
// golang.org/x/oauth2 that build theirs without one.
type contextTransport struct {
	ctx  context.Context
	base http.RoundTripper
}

// RoundTrip sends r with the transport's context.
func (c contextTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return c.base.RoundTrip(r.WithContext(c.ctx))
}

// googleCredentialTypes are the credential files Vertex AI takes: Application Default
// Credentials as Google's tools write them (a service account's key, gcloud's user
// credentials, workload identity federation, an impersonated service account).
var googleCredentialTypes = []google.CredentialsType{google.ServiceAccount, google.AuthorizedUser, google.ExternalAccount, google.ImpersonatedServiceAccount}

// googleCredentialsFile is the part of a credentials file read before it is used.
type googleCredentialsFile struct {
	Type           string `json:"type"`
	PrivateKey     string `json:"private_key"`
	ClientEmail    string `json:"client_email"`
	ProjectID      string `json:"project_id"`
	QuotaProjectID string `json:"quota_project_id"`
}

// parseGoogleCredentials checks a credentials file's JSON and returns the token source
// factory for it and the project it names ("" when none).
func parseGoogleCredentials(data []byte) (func(context.Context) (oauth2.TokenSource, error), string, error) {
	var f googleCredentialsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, "", fmt.Errorf("not a credentials JSON file: %w", err)
	}
	typ := google.CredentialsType(f.Type)
	known := false
	for _, t := range googleCredentialTypes {
		known = known || t == typ
	}
	if !known {
		return nil, "", fmt.Errorf("credentials of type %q: want service_account, authorized_user, external_account or impersonated_service_account", f.Type)
	}
	source := func(ctx context.Context) (oauth2.TokenSource, error) {
		c, err := google.CredentialsFromJSONWithTypeAndParams(ctx, data, typ, google.CredentialsParams{Scopes: []string{googleCloudScope}})
		if err != nil {
			return nil, err
		}
		return c.TokenSource, nil
	}
	if typ == google.ServiceAccount {
		// x/oauth2 parses the key only when it fetches: a key that does not parse would fail
		// every call, so it is parsed now.
		if f.ClientEmail == "" {
			return nil, "", errors.New("the service account's key has no client_email")
		}
		if err := checkPrivateKey(f.PrivateKey); err != nil {
			return nil, "", err
		}
	}
	// The source is built once now, so that a malformed file is told at start. Its error is
	// not passed on as it is, lest it quote the file.
	if _, err := source(context.Background()); err != nil {
		return nil, "", fmt.Errorf("credentials of type %s are not usable (%s)", f.Type, redactCredentialsError(err, data))
	}
	project := f.ProjectID
	if project == "" {
		project = f.QuotaProjectID
	}
	return source, project, nil
}

// checkPrivateKey parses a service account's private_key as x/oauth2 will (PEM, PKCS#8 or
// PKCS#1 RSA); what is wrong is said without quoting the key.
func checkPrivateKey(key string) error {
	if strings.TrimSpace(key) == "" {
		return errors.New("the service account's key has no private_key")
	}
	der := []byte(key)
	if block, _ := pem.Decode(der); block != nil {
		der = block.Bytes
	}
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		if _, ok := k.(*rsa.PrivateKey); ok {
			return nil
		}
		return errors.New("the service account's private_key is not an RSA key")
	}
	if _, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return nil
	}
	return errors.New("the service account's private_key does not parse as a PEM, PKCS#8 or PKCS#1 RSA key")
}

// redactCredentialsError is err's text, or a generic one when it would quote a line of the
// credentials file.
func redactCredentialsError(err error, data []byte) string {
	msg := err.Error()
	for _, line := range strings.FieldsFunc(string(data), func(r rune) bool { return r == '\n' || r == '"' }) {
		if line = strings.TrimSpace(line); len(line) >= 8 && strings.Contains(msg, line) {
			return "the token source could not be built from them"
		}
	}
	return msg
}

// gcloudADCFile is the Application Default Credentials file `gcloud auth
// application-default login` writes, "" when there is none.
func gcloudADCFile(getenv func(string) string) string {
	dir := getenv("CLOUDSDK_CONFIG")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config", "gcloud")
	}
	p := filepath.Join(dir, "application_default_credentials.json")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}
