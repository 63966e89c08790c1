package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	entraTestTenant = "11111111-2222-3333-4444-555555555555"
	entraTestClient = "66666666-7777-8888-9999-000000000000"
	entraTestSecret = "s3cret~value-that-must-not-leak"
)

// fakeEntra is a Microsoft Entra ID token endpoint: it records the forms posted to it and
// answers with tok-1, tok-2, … (or with fail, when set).
type fakeEntra struct {
	srv   *httptest.Server
	mu    sync.Mutex
	paths []string
	forms []url.Values
	// fail, when set, is the status and body of every answer.
	failStatus int
	failBody   string
}

func newFakeEntra(t *testing.T) *fakeEntra {
	f := &fakeEntra{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		f.mu.Lock()
		f.paths = append(f.paths, r.URL.Path)
		f.forms = append(f.forms, r.PostForm)
		n, status, body := len(f.forms), f.failStatus, f.failBody
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if status != 0 {
			w.WriteHeader(status)
			io.WriteString(w, body)
			return
		}
		fmt.Fprintf(w, `{"token_type":"Bearer","expires_in":3600,"ext_expires_in":3600,"access_token":"tok-%d"}`, n)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeEntra) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.forms)
}

func (f *fakeEntra) lastForm(t *testing.T) (string, url.Values) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.forms) == 0 {
		t.Fatal("the token endpoint was asked nothing")
	}
	return f.paths[len(f.paths)-1], f.forms[len(f.forms)-1]
}

func (f *fakeEntra) fail(status int, body string) {
	f.mu.Lock()
	f.failStatus, f.failBody = status, body
	f.mu.Unlock()
}

// fakeDeployment is an Azure OpenAI resource that records the Authorization and api-key
// headers it was sent.
type fakeDeployment struct {
	srv  *httptest.Server
	mu   sync.Mutex
	auth []string
}

func newFakeDeployment(t *testing.T) *fakeDeployment {
	d := &fakeDeployment{}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.auth = append(d.auth, r.Header.Get("Authorization")+"|"+r.Header.Get("Api-Key"))
		d.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/embeddings") {
			io.WriteString(w, `{"data":[{"index":0,"embedding":[0.1]}],"model":"e","usage":{"prompt_tokens":1,"total_tokens":1}}`)
			return
		}
		io.WriteString(w, `{"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
	}))
	t.Cleanup(d.srv.Close)
	return d
}

func (d *fakeDeployment) last(t *testing.T) string {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.auth) == 0 {
		t.Fatal("the deployment was sent nothing")
	}
	return d.auth[len(d.auth)-1]
}

// testClock is a clock set ahead of the real one by a chosen offset (x/oauth2 stamps a
// token's expiry with the real clock).
type testClock struct{ ahead atomic.Int64 }

func (c *testClock) now() time.Time      { return time.Now().Add(time.Duration(c.ahead.Load())) }
func (c *testClock) set(d time.Duration) { c.ahead.Store(int64(d)) }

func entraEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// azureFromEnv is the azure preset of env with its token cache on clock.
func azureFromEnv(t *testing.T, env map[string]string, clock *testClock) *Azure {
	t.Helper()
	p, err := FromEnv(entraEnv(env), Options{}).Lookup("azure")
	if err != nil {
		t.Fatal(err)
	}
	a := p.(*Azure)
	if clock != nil && a.azure.tokens != nil && a.azure.tokens.cache != nil {
		a.azure.tokens.cache.now = clock.now
	}
	return a
}

func hello(model string) *Request {
	return &Request{Model: model, Messages: []Message{{Role: "user", Content: "hi"}}, MaxTokens: 5}
}

// The service principal's secret: nothing is fetched at start; the first call posts the
// client credentials grant to {authority}/{tenant}/oauth2/v2.0/token and sends the token
// as a Bearer; later calls (embeddings too) reuse it until it is five minutes from
// expiring, when a new one is fetched.
func TestAzureEntraClientSecret(t *testing.T) {
	entra, dep := newFakeEntra(t), newFakeDeployment(t)
	clock := &testClock{}
	a := azureFromEnv(t, map[string]string{
		"AZURE_API_BASE": dep.srv.URL, "AZURE_TENANT_ID": entraTestTenant, "AZURE_CLIENT_ID": entraTestClient,
		"AZURE_CLIENT_SECRET": entraTestSecret, "AZURE_AUTHORITY_HOST": entra.srv.URL + "/",
	}, clock)
	if !a.Configured() {
		t.Fatal("azure with client credentials is not configured")
	}
	if entra.count() != 0 {
		t.Fatal("a token was fetched at start")
	}
	ctx := context.Background()
	if _, err := a.Complete(ctx, hello("dep")); err != nil {
		t.Fatal(err)
	}
	path, form := entra.lastForm(t)
	if path != "/"+entraTestTenant+"/oauth2/v2.0/token" {
		t.Errorf("token endpoint path %q", path)
	}
	want := url.Values{"grant_type": {"client_credentials"}, "client_id": {entraTestClient}, "client_secret": {entraTestSecret}, "scope": {AzureTokenScope}}
	for k, v := range want {
		if form.Get(k) != v[0] {
			t.Errorf("form %s = %q, want %q", k, form.Get(k), v[0])
		}
	}
	if form.Has("client_assertion") {
		t.Error("a client assertion was sent with a secret")
	}
	if got := dep.last(t); got != "Bearer tok-1|" {
		t.Errorf("deployment was sent %q, want Bearer tok-1 and no api-key", got)
	}
	if _, err := a.Embed(ctx, &EmbeddingRequest{Model: "emb", Input: []string{"x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Complete(ctx, hello("dep")); err != nil {
		t.Fatal(err)
	}
	if n := entra.count(); n != 1 || dep.last(t) != "Bearer tok-1|" {
		t.Errorf("after three calls: %d fetches, last auth %q; want the token reused", n, dep.last(t))
	}
	clock.set(56 * time.Minute) // four minutes left of the hour
	if _, err := a.Complete(ctx, hello("dep")); err != nil {
		t.Fatal(err)
	}
	if n := entra.count(); n != 2 || dep.last(t) != "Bearer tok-2|" {
		t.Errorf("near expiry: %d fetches, last auth %q; want a new token", n, dep.last(t))
	}
}

// A refresh that fails keeps the still-valid token; once it has expired the call fails
// with KindAuth, naming the tenant, the endpoint and Entra's AADSTS code, and never the
// secret (which Entra's text here quotes).
func TestAzureEntraErrorIsAuthWithoutSecret(t *testing.T) {
	entra, dep := newFakeEntra(t), newFakeDeployment(t)
	clock := &testClock{}
	a := azureFromEnv(t, map[string]string{
		"AZURE_API_BASE": dep.srv.URL, "AZURE_TENANT_ID": entraTestTenant, "AZURE_CLIENT_ID": entraTestClient,
		"AZURE_CLIENT_SECRET": entraTestSecret, "AZURE_AUTHORITY_HOST": entra.srv.URL,
	}, clock)
	ctx := context.Background()
	if _, err := a.Complete(ctx, hello("dep")); err != nil {
		t.Fatal(err)
	}
	desc := "AADSTS7000215: Invalid client secret provided (" + entraTestSecret + ").\r\nTrace ID: abc\r\nCorrelation ID: def"
	body, _ := json.Marshal(map[string]any{"error": "invalid_client", "error_description": desc, "error_codes": []int{7000215}})
	entra.fail(http.StatusUnauthorized, string(body))
	clock.set(56 * time.Minute)
	if _, err := a.Complete(ctx, hello("dep")); err != nil {
		t.Fatalf("a failed refresh dropped a token still valid: %v", err)
	}
	if entra.count() != 2 || dep.last(t) != "Bearer tok-1|" {
		t.Errorf("%d fetches, last auth %q; want the refresh tried and tok-1 kept", entra.count(), dep.last(t))
	}
	clock.set(61 * time.Minute)
	_, err := a.Complete(ctx, hello("dep"))
	if KindOf(err) != KindAuth {
		t.Fatalf("err %v (kind %v), want KindAuth", err, KindOf(err))
	}
	var te *EntraTokenError
	var pe *Error
	if !errors.As(err, &te) || !errors.As(err, &pe) {
		t.Fatalf("err %v is not an *Error wrapping an *EntraTokenError", err)
	}
	if te.AADSTS != "AADSTS7000215" || te.Code != "invalid_client" || te.StatusCode != 401 || pe.Code != "AADSTS7000215" || te.Tenant != entraTestTenant {
		t.Errorf("EntraTokenError %+v, Error code %q", te, pe.Code)
	}
	msg := err.Error()
	for _, want := range []string{entraTestTenant, entra.srv.URL + "/" + entraTestTenant + "/oauth2/v2.0/token", "AADSTS7000215", "invalid_client"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not name %q", msg, want)
		}
	}
	if strings.Contains(msg, entraTestSecret) || strings.Contains(fmt.Sprintf("%+v", te), entraTestSecret) || strings.Contains(msg, "Trace ID") {
		t.Errorf("error %q quotes the secret or Entra's trace", msg)
	}
	// Entra overloaded is transient, not the credentials' fault.
	entra.fail(http.StatusServiceUnavailable, `{"error":"temporarily_unavailable","error_description":"AADSTS90033: busy"}`)
	if _, err := a.Complete(ctx, hello("dep")); KindOf(err) != KindOverloaded {
		t.Errorf("Entra 503: err %v, want KindOverloaded", err)
	}
}

// Workload identity: the federated token file's content is the client assertion (and no
// secret is sent); the file is read again at the next fetch, so a rotated token is used;
// the assertion never appears in an error.
func TestAzureEntraFederatedTokenFile(t *testing.T) {
	entra, dep := newFakeEntra(t), newFakeDeployment(t)
	clock := &testClock{}
	file := filepath.Join(t.TempDir(), "azure-identity-token")
	if err := os.WriteFile(file, []byte("eyJhbGciOi.first-assertion.sig\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := azureFromEnv(t, map[string]string{
		"AZURE_API_BASE": dep.srv.URL, "AZURE_TENANT_ID": entraTestTenant, "AZURE_CLIENT_ID": entraTestClient,
		"AZURE_FEDERATED_TOKEN_FILE": file, "AZURE_AUTHORITY_HOST": entra.srv.URL,
	}, clock)
	ctx := context.Background()
	if _, err := a.Complete(ctx, hello("dep")); err != nil {
		t.Fatal(err)
	}
	_, form := entra.lastForm(t)
	if form.Get("client_assertion") != "eyJhbGciOi.first-assertion.sig" || form.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" ||
		form.Get("grant_type") != "client_credentials" || form.Get("client_id") != entraTestClient || form.Get("scope") != AzureTokenScope || form.Has("client_secret") {
		t.Errorf("form %v", form)
	}
	if dep.last(t) != "Bearer tok-1|" {
		t.Errorf("deployment auth %q", dep.last(t))
	}
	if err := os.WriteFile(file, []byte("eyJhbGciOi.second-assertion.sig"), 0o600); err != nil {
		t.Fatal(err)
	}
	clock.set(56 * time.Minute)
	if _, err := a.Complete(ctx, hello("dep")); err != nil {
		t.Fatal(err)
	}
	if _, form := entra.lastForm(t); form.Get("client_assertion") != "eyJhbGciOi.second-assertion.sig" || dep.last(t) != "Bearer tok-2|" {
		t.Errorf("after rotation: assertion %q, auth %q", form.Get("client_assertion"), dep.last(t))
	}
	entra.fail(http.StatusBadRequest, `{"error":"invalid_client","error_description":"AADSTS700024: Client assertion eyJhbGciOi.second-assertion.sig is not within its valid time range."}`)
	clock.set(2 * time.Hour)
	_, err := a.Complete(ctx, hello("dep"))
	if KindOf(err) != KindAuth || !strings.Contains(err.Error(), "AADSTS700024") || strings.Contains(err.Error(), "second-assertion") {
		t.Errorf("err %v; want KindAuth naming AADSTS700024 without the assertion", err)
	}
	// A file that cannot be read: KindAuth naming its path.
	os.Remove(file)
	_, err = a.Complete(ctx, hello("dep"))
	if KindOf(err) != KindAuth || !strings.Contains(err.Error(), file) {
		t.Errorf("missing file: err %v", err)
	}
}

// LiteLLM's order: an api key wins over everything; client credentials (and the caller's
// token provider before them) win over a fixed AZURE_AD_TOKEN; "oidc/file/…" is a
// federated token for AZURE_TENANT_ID and AZURE_CLIENT_ID.
func TestAzureEntraPrecedence(t *testing.T) {
	entra, dep := newFakeEntra(t), newFakeDeployment(t)
	ctx := context.Background()
	creds := map[string]string{"AZURE_API_BASE": dep.srv.URL, "AZURE_TENANT_ID": entraTestTenant, "AZURE_CLIENT_ID": entraTestClient,
		"AZURE_CLIENT_SECRET": entraTestSecret, "AZURE_AUTHORITY_HOST": entra.srv.URL, "AZURE_AD_TOKEN": "static-token"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range creds {
			m[a] = b
		}
		m[k] = v
		return m
	}
	if _, err := azureFromEnv(t, with("AZURE_API_KEY", "the-key"), nil).Complete(ctx, hello("dep")); err != nil {
		t.Fatal(err)
	}
	if dep.last(t) != "|the-key" || entra.count() != 0 {
		t.Errorf("api key: auth %q, %d fetches", dep.last(t), entra.count())
	}
	if _, err := azureFromEnv(t, creds, nil).Complete(ctx, hello("dep")); err != nil {
		t.Fatal(err)
	}
	if dep.last(t) != "Bearer tok-1|" {
		t.Errorf("client credentials and AZURE_AD_TOKEN: auth %q, want the fetched token", dep.last(t))
	}
	if _, err := azureFromEnv(t, with("AZURE_CLIENT_SECRET", ""), nil).Complete(ctx, hello("dep")); err != nil {
		t.Fatal(err)
	}
	if dep.last(t) != "Bearer static-token|" {
		t.Errorf("AZURE_AD_TOKEN alone: auth %q", dep.last(t))
	}
	file := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(file, []byte("oidc-assertion"), 0o600)
	m := with("AZURE_CLIENT_SECRET", "")
	m["AZURE_AD_TOKEN"] = "oidc/file" + file
	if _, err := azureFromEnv(t, m, nil).Complete(ctx, hello("dep")); err != nil {
		t.Fatal(err)
	}
	if _, form := entra.lastForm(t); form.Get("client_assertion") != "oidc-assertion" {
		t.Errorf("oidc/file/: form %v", form)
	}
	m["AZURE_AD_TOKEN"] = "oidc/github/aud"
	if a := azureFromEnv(t, m, nil); a.Configured() {
		t.Error("an oidc provider not read here leaves azure configured")
	} else if _, err := a.Complete(ctx, hello("dep")); !errors.Is(err, ErrNotConfigured) || !strings.Contains(err.Error(), "oidc/github/") {
		t.Errorf("oidc/github/: err %v", err)
	}
	// Secret without a tenant: not configured, naming what is missing.
	a := azureFromEnv(t, map[string]string{"AZURE_API_BASE": dep.srv.URL, "AZURE_CLIENT_SECRET": entraTestSecret, "AZURE_CLIENT_ID": entraTestClient}, nil)
	if _, err := a.Complete(ctx, hello("dep")); !errors.Is(err, ErrNotConfigured) || !strings.Contains(err.Error(), "AZURE_TENANT_ID") || strings.Contains(err.Error(), entraTestSecret) {
		t.Errorf("no tenant: err %v", err)
	}
	// An authority over plain http to another machine is refused.
	a = azureFromEnv(t, with("AZURE_AUTHORITY_HOST", "http://login.example.com/"), nil)
	if a.Configured() {
		t.Error("an http authority host to another machine is used")
	}

	// The caller's provider wins over client credentials; its error is KindAuth.
	var calls atomic.Int32
	p := NewAzure(AzureConfig{Config: Config{BaseURL: dep.srv.URL}, TenantID: entraTestTenant, ClientID: entraTestClient, ClientSecret: entraTestSecret,
		AuthorityHost: entra.srv.URL, ADTokenProvider: func(ctx context.Context) (string, error) {
			if calls.Add(1) > 1 {
				return "", errors.New("no token today")
			}
			return "provided", nil
		}})
	before := entra.count()
	if _, err := p.Complete(ctx, hello("dep")); err != nil || dep.last(t) != "Bearer provided|" || entra.count() != before {
		t.Errorf("provider: err %v, auth %q, fetches %d→%d", err, dep.last(t), before, entra.count())
	}
	if _, err := p.Complete(ctx, hello("dep")); KindOf(err) != KindAuth || !strings.Contains(err.Error(), "no token today") {
		t.Errorf("provider failing: err %v", err)
	}
}

// A configuration file's azure entries: client credentials by variable and file, checked
// by field (an API key beside an Entra ID credential refused), the secret never echoed.
func TestAzureEntraConfigFile(t *testing.T) {
	entra, dep := newFakeEntra(t), newFakeDeployment(t)
	fc, err := ParseConfig([]byte(`{"providers": [{"name": "azure-sp", "format": "azure", "base_url": "` + dep.srv.URL + `",
		"tenant_id": "` + entraTestTenant + `", "client_id": "` + entraTestClient + `", "client_secret_env": "SP_SECRET",
		"authority_host": "` + entra.srv.URL + `"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	env := entraEnv(map[string]string{"SP_SECRET": entraTestSecret, "AZURE_AD_TOKEN": "env-static"})
	reg := FromEnv(env, Options{})
	if err := reg.Configure(fc, env, Options{}); err != nil {
		t.Fatal(err)
	}
	p, _ := reg.Lookup("azure-sp")
	if _, err := p.Complete(context.Background(), hello("dep")); err != nil {
		t.Fatal(err)
	}
	if _, form := entra.lastForm(t); form.Get("client_secret") != entraTestSecret || dep.last(t) != "Bearer tok-1|" {
		t.Errorf("form %v, auth %q", form, dep.last(t))
	}
	// The azure preset told to use a variable that is unset: not configured, naming it.
	fc, err = ParseConfig([]byte(`{"providers": [{"name": "azure", "client_secret_env": "NOPE_SECRET"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	env = entraEnv(map[string]string{"AZURE_API_BASE": dep.srv.URL, "AZURE_AD_TOKEN": "env-static", "AZURE_TENANT_ID": entraTestTenant, "AZURE_CLIENT_ID": entraTestClient})
	reg = FromEnv(env, Options{})
	if err := reg.Configure(fc, env, Options{}); err != nil {
		t.Fatal(err)
	}
	p, _ = reg.Lookup("azure")
	if _, err := p.Complete(context.Background(), hello("dep")); !errors.Is(err, ErrNotConfigured) || !strings.Contains(err.Error(), "NOPE_SECRET") {
		t.Errorf("unset client_secret_env: err %v", err)
	}

	for _, c := range []struct{ entry, field string }{
		{`"format": "azure", "base_url": "https://x.openai.azure.com", "tenant_id": "not a tenant"`, "providers[0].tenant_id"},
		{`"format": "azure", "base_url": "https://x.openai.azure.com", "client_id": "app-name"`, "providers[0].client_id"},
		{`"format": "azure", "base_url": "https://x.openai.azure.com", "client_secret_env": "` + entraTestSecret + `"`, "providers[0].client_secret_env"},
		{`"format": "azure", "base_url": "https://x.openai.azure.com", "tenant_id": "contoso.onmicrosoft.com", "client_id": "` + entraTestClient + `", "client_secret_env": "S", "federated_token_file": "/f"`, "providers[0].client_secret_env"},
		{`"format": "azure", "base_url": "https://x.openai.azure.com", "ad_token_env": "T", "client_secret_env": "S"`, "providers[0].client_secret_env"},
		{`"format": "azure", "base_url": "https://x.openai.azure.com", "client_id": "` + entraTestClient + `", "federated_token_file": "/f"`, "providers[0].tenant_id"},
		{`"format": "azure", "base_url": "https://x.openai.azure.com", "tenant_id": "` + entraTestTenant + `", "client_secret_env": "S"`, "providers[0].client_id"},
		{`"format": "azure", "base_url": "https://x.openai.azure.com", "authority_host": "http://login.example.com/"`, "providers[0].authority_host"},
		// An API key beside an Entra ID credential: one of them would be ignored.
		{`"format": "azure", "base_url": "https://x.openai.azure.com", "api_key_env": "K", "tenant_id": "` + entraTestTenant + `", "client_id": "` + entraTestClient + `", "client_secret_env": "S"`, "providers[0].api_key_env"},
		{`"format": "azure", "base_url": "https://x.openai.azure.com", "api_key_env": "K", "ad_token_env": "T"`, "providers[0].api_key_env"},
		{`"format": "azure", "base_url": "https://x.openai.azure.com", "api_key": "` + entraTestSecret + `", "tenant_id": "` + entraTestTenant + `", "client_id": "` + entraTestClient + `", "federated_token_file": "/f"`, "providers[0].api_key"},
		{`"format": "openai", "base_url": "https://x", "tenant_id": "` + entraTestTenant + `"`, "providers[0].tenant_id"},
	} {
		_, err := ParseConfig([]byte(`{"providers": [{"name": "az-x", ` + c.entry + `}]}`))
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != c.field {
			t.Errorf("%s: err %v, want a ConfigError on %s", c.entry, err, c.field)
			continue
		}
		if strings.Contains(err.Error(), entraTestSecret) {
			t.Errorf("%s: error %q echoes the secret", c.entry, err)
		}
	}
}
