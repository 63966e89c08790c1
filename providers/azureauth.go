package providers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// DefaultAzureAuthorityHost is the Microsoft Entra ID authority tokens are asked of when
// none is configured (AZURE_AUTHORITY_HOST, AzureConfig.AuthorityHost): the public cloud's.
const DefaultAzureAuthorityHost = "https://login.microsoftonline.com/"

// AzureTokenScope is the OAuth 2.0 scope of the Entra ID tokens Azure OpenAI takes.
const AzureTokenScope = "https://cognitiveservices.azure.com/.default"

// azureAssertionType is the client_assertion_type of a federated credential (a JWT).
const azureAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// EntraTokenError is why Microsoft Entra ID gave no token: the Err of the call's *Error
// (KindAuth when Entra refused the credentials). It never holds the client secret or the
// client assertion.
type EntraTokenError struct {
	// Tenant is the directory (tenant) asked; Endpoint the token endpoint's URL.
	Tenant, Endpoint string
	// StatusCode is the token endpoint's HTTP status (0 when it did not answer).
	StatusCode int
	// Code is the OAuth 2.0 error code ("invalid_client"), AADSTS Entra's own
	// ("AADSTS7000215"), Description the first line of its error_description; each ""
	// when not given.
	Code, AADSTS, Description string
	// Err is the cause when the endpoint was not reached, or the federated token file
	// could not be read; nil when Entra answered.
	Err error
}

// Error says the tenant, the endpoint and Entra's codes.
func (e *EntraTokenError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Microsoft Entra ID token for tenant %s (%s)", e.Tenant, e.Endpoint)
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.StatusCode)
	}
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Description != "" {
		b.WriteString(": " + e.Description)
	} else if e.AADSTS != "" {
		b.WriteString(": " + e.AADSTS)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause (nil when Entra answered).
func (e *EntraTokenError) Unwrap() error { return e.Err }

// aadstsRE finds Entra's error code in an error_description.
var aadstsRE = regexp.MustCompile(`AADSTS\d+`)

// entraCredentials is an app registration's client credentials: a secret, or a client
// assertion (a federated token) read anew for every fetch.
type entraCredentials struct {
	tenant, clientID, endpoint string
	secret                     string
	// scope is the Cognitive Services scope of the authority's cloud (azureTokenScope).
	scope string
	// assertion returns the client assertion; nil with a secret.
	assertion func() (string, error)
}

// azureTokenEndpoint is the v2.0 token endpoint of tenant at an authority host (the
// default's when empty).
func azureTokenEndpoint(authority, tenant string) string {
	if authority == "" {
		authority = DefaultAzureAuthorityHost
	}
	return strings.TrimRight(authority, "/") + "/" + url.PathEscape(tenant) + "/oauth2/v2.0/token"
}

// azureTokenScope is the scope of Azure OpenAI's tokens in the cloud of an authority host:
// Azure Government's and Azure China's resources take their own audience, not the public
// cloud's AzureTokenScope.
func azureTokenScope(authority string) string {
	u, err := url.Parse(strings.TrimSpace(authority))
	if err != nil {
		return AzureTokenScope
	}
	switch h := strings.ToLower(u.Hostname()); {
	case h == "login.microsoftonline.us" || strings.HasSuffix(h, ".microsoftonline.us"):
		return "https://cognitiveservices.azure.us/.default"
	case h == "login.chinacloudapi.cn" || h == "login.partner.microsoftonline.cn":
		return "https://cognitiveservices.azure.cn/.default"
	}
	return AzureTokenScope
}

// checkAuthorityHost says what is wrong with an authority host ("" when nothing): an
// https URL, or http to this machine only (tests, a local proxy), lest the secret travel
// in clear.
func checkAuthorityHost(h string) string {
	u, err := url.Parse(h)
	switch {
	case err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "":
		return "must be an https URL such as " + DefaultAzureAuthorityHost
	case u.Scheme == "https":
		return ""
	case u.Scheme == "http":
		if ip := net.ParseIP(u.Hostname()); u.Hostname() == "localhost" || ip != nil && ip.IsLoopback() {
			return ""
		}
		return "must be https (http only to this machine), lest the credentials travel in clear"
	}
	return "must be an https URL such as " + DefaultAzureAuthorityHost
}

// source is the token source of one fetch, through the HTTP client ctx carries.
func (c *entraCredentials) source(ctx context.Context) (oauth2.TokenSource, error) {
	return entraSource{ctx: ctx, c: c}, nil
}

// entraSource fetches one token: the assertion is read when Token is called, so that a
// rotated federated token file (AKS projects a new one hourly) is what is sent.
type entraSource struct {
	ctx context.Context
	c   *entraCredentials
}

// Token fetches a token with the client credentials grant.
func (s entraSource) Token() (*oauth2.Token, error) {
	c := s.c
	cfg := clientcredentials.Config{ClientID: c.clientID, ClientSecret: c.secret, TokenURL: c.endpoint,
		Scopes: []string{cmp.Or(c.scope, AzureTokenScope)}, AuthStyle: oauth2.AuthStyleInParams}
	if c.assertion != nil {
		a, err := c.assertion()
		if err != nil {
			return nil, err
		}
		cfg.EndpointParams = url.Values{"client_assertion_type": {azureAssertionType}, "client_assertion": {a}}
	}
	tok, err := cfg.Token(s.ctx)
	if err == nil {
		slog.Debug("azure: fetched a Microsoft Entra ID token", "tenant", c.tenant, "expiry", tok.Expiry)
	}
	return tok, err
}

// errAssertion is matched by the failure to read a client assertion: the credentials'
// fault (KindAuth), though an os error may look like a network one.
var errAssertion = errors.New("no client assertion")

// fileAssertion returns the assertion in the file at path, read at each call.
func fileAssertion(path string) func() (string, error) {
	return func() (string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("%w: reading the federated token file: %w", errAssertion, err)
		}
		a := strings.TrimSpace(string(b))
		if a == "" {
			return "", fmt.Errorf("%w: the federated token file %s is empty", errAssertion, path)
		}
		return a, nil
	}
}

// azureTokens yields an Azure adapter's Entra ID tokens: from the caller's provider, or
// from client credentials cached and refreshed early (googleTokens, which Vertex AI's
// tokens share).
type azureTokens struct {
	provider func(context.Context) (string, error)
	creds    *entraCredentials
	cache    *googleTokens
}

// token returns a token for a request of model on provider name, or the call's *Error.
func (t *azureTokens) token(ctx context.Context, name, model string) (string, error) {
	if t.provider != nil {
		tok, err := t.provider(ctx)
		switch {
		case err != nil:
			pe := &Error{Provider: name, Model: model, Kind: KindAuth, Message: trimMessage("Microsoft Entra ID token provider: "+err.Error(), ""), Err: err}
			if ctx.Err() != nil {
				pe.Kind = classifyTransport(ctx.Err(), context.Cause(ctx))
			}
			return "", pe
		case tok == "":
			return "", &Error{Provider: name, Model: model, Kind: KindAuth, Message: "Microsoft Entra ID token provider returned no token"}
		}
		return tok, nil
	}
	tok, err := t.cache.token(ctx)
	if err != nil {
		return "", t.creds.failure(ctx, name, model, err)
	}
	return tok, nil
}

// failure is the *Error of a call whose token could not be had: KindAuth when Entra
// refused the credentials (or the federated token file cannot be read), the kind of a
// transient failure when the endpoint was overloaded, rate-limited or unreachable. Its
// text names the tenant, the endpoint and Entra's codes; the secret and the assertion are
// cut from anything Entra said.
func (c *entraCredentials) failure(ctx context.Context, name, model string, err error) *Error {
	te := &EntraTokenError{Tenant: c.tenant, Endpoint: c.endpoint}
	pe := &Error{Provider: name, Model: model, Kind: KindAuth, Err: te}
	var (
		re *oauth2.RetrieveError
		ue *url.Error
		ne net.Error
	)
	switch {
	case ctx.Err() != nil:
		te.Err = ctx.Err()
		pe.Kind = classifyTransport(ctx.Err(), context.Cause(ctx))
	case errors.Is(err, errAssertion):
		te.Err = err // its path, never its content
	case errors.As(err, &re):
		desc := re.ErrorDescription
		if i := strings.IndexAny(desc, "\r\n"); i >= 0 {
			desc = desc[:i] // the rest is Trace ID, Correlation ID and Timestamp
		}
		te.Code, te.Description, te.AADSTS = re.ErrorCode, c.redact(strings.TrimSpace(desc)), aadstsRE.FindString(desc)
		pe.Code = te.AADSTS
		if pe.Code == "" {
			pe.Code = te.Code
		}
		if re.Response != nil {
			te.StatusCode, pe.StatusCode = re.Response.StatusCode, re.Response.StatusCode
			switch code := re.Response.StatusCode; {
			case code == http.StatusTooManyRequests:
				pe.Kind = KindRateLimited
				if secs, err := strconv.Atoi(strings.TrimSpace(re.Response.Header.Get("Retry-After"))); err == nil && secs > 0 {
					pe.RetryAfter = time.Duration(secs) * time.Second
				}
			case code >= 500:
				pe.Kind = KindOverloaded
			}
		}
		if te.Code == "" && te.Description == "" {
			te.Description = "the token endpoint refused the credentials"
		}
	case errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded):
		te.Err = errors.New(c.redact(err.Error()))
		pe.Kind = KindConnection
	default: // the answer held no token
		te.Err = errors.New(c.redact(err.Error()))
	}
	pe.Message = trimMessage(te.Error(), "")
	return pe
}

// redact cuts the secret (and the assertion's current value) out of s.
func (c *entraCredentials) redact(s string) string {
	secrets := []string{c.secret}
	if c.assertion != nil {
		if a, err := c.assertion(); err == nil {
			secrets = append(secrets, a)
		}
	}
	return redactSecrets(s, secrets)
}
