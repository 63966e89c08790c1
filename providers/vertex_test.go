package providers_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// tokenServer is Google's OAuth 2.0 token endpoint for a service account: it checks the
// JWT bearer grant (RS256 signed with the account's key, its claims) and hands out
// numbered access tokens that last expiresIn seconds.
type tokenServer struct {
	srv       *httptest.Server
	key       *rsa.PrivateKey
	email     string
	expiresIn atomic.Int64
	fetches   atomic.Int32
	hold      chan struct{} // when set, each fetch waits for it (or its request's end)
	cancelled atomic.Int32  // fetches whose request ended while held
	// held and gaveUp, when set, get a value (buffered, never blocking) when a fetch
	// starts waiting for hold and when one stops waiting because its request ended.
	held, gaveUp chan struct{}
	quiet        bool // a refused grant is expected
	t            *testing.T
}

func newTokenServer(t *testing.T) *tokenServer {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ts := &tokenServer{key: key, email: "switchyard@test-project.iam.gserviceaccount.com", t: t}
	ts.expiresIn.Store(3600)
	ts.srv = httptest.NewServer(http.HandlerFunc(ts.serve))
	t.Cleanup(ts.srv.Close)
	return ts
}

func (ts *tokenServer) serve(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.URL.Path != "/token" {
		http.Error(w, "bad request", 400)
		return
	}
	if g := r.PostForm.Get("grant_type"); g != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		ts.t.Errorf("grant_type = %q", g)
	}
	if err := ts.verify(r.PostForm.Get("assertion")); err != nil {
		if !ts.quiet {
			ts.t.Errorf("JWT assertion: %v", err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		io.WriteString(w, `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`)
		return
	}
	if ts.hold != nil {
		signal(ts.held)
		select {
		case <-ts.hold:
		case <-r.Context().Done():
			ts.cancelled.Add(1)
			signal(ts.gaveUp)
			return
		}
	}
	n := ts.fetches.Add(1)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"access_token":"ya29.token-%d","expires_in":%d,"token_type":"Bearer"}`, n, ts.expiresIn.Load())
}

// signal sends on c if it has room; a nil c is ignored.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// verify checks an RS256 JWT against the account's public key and Vertex AI's claims.
func (ts *tokenServer) verify(jwt string) error {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return fmt.Errorf("%d parts", len(parts))
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&ts.key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		return fmt.Errorf("signature: %w", err)
	}
	var header struct{ Alg, Kid string }
	var claims struct {
		Iss, Scope, Aud string
		Iat, Exp        int64
	}
	for i, v := range []any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, v); err != nil {
			return err
		}
	}
	switch {
	case header.Alg != "RS256" || header.Kid != "key-1":
		return fmt.Errorf("header %+v", header)
	case claims.Iss != ts.email || claims.Aud != ts.srv.URL+"/token":
		return fmt.Errorf("iss %q, aud %q", claims.Iss, claims.Aud)
	case claims.Scope != "https://www.googleapis.com/auth/cloud-platform":
		return fmt.Errorf("scope %q", claims.Scope)
	case claims.Exp-claims.Iat != 3600:
		return fmt.Errorf("lifetime %d s", claims.Exp-claims.Iat)
	}
	return nil
}

// credentials is the account's key file, as the Cloud console writes it.
func (ts *tokenServer) credentials() []byte {
	der, err := x509.MarshalPKCS8PrivateKey(ts.key)
	if err != nil {
		ts.t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "sa-project", "private_key_id": "key-1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": ts.email, "client_id": "1234567890", "token_uri": ts.srv.URL + "/token",
	})
	return b
}

// vertexUpstream answers generateContent and records the bearer of each call.
type vertexUpstream struct {
	srv *httptest.Server
	mu  sync.Mutex
	log []string // "path bearer"
}

func newVertexUpstream(t *testing.T) *vertexUpstream {
	u := &vertexUpstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.log = append(u.log, r.URL.RequestURI()+" "+r.Header.Get("Authorization"))
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, ":predict") {
			var req struct{ Instances []struct{ Content string } }
			_ = json.Unmarshal(b, &req)
			preds := make([]string, len(req.Instances))
			for i := range preds {
				preds[i] = `{"embeddings":{"values":[0.5,0.25],"statistics":{"token_count":3,"truncated":false}}}`
			}
			io.WriteString(w, `{"predictions":[`+strings.Join(preds, ",")+`],"metadata":{"billableCharacterCount":9}}`)
			return
		}
		io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":2,"candidatesTokenCount":1},"modelVersion":"gemini-2.0-flash"}`)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *vertexUpstream) calls() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.log...)
}

func vertexHello(model string) *providers.Request {
	return &providers.Request{Model: model, Messages: []providers.Message{{Role: "user", Content: "hi"}}}
}

// A service account's key: the JWT grant at its token_uri gets the token, sent as the
// Bearer; the token is cached (one fetch for many calls, however concurrent), and fetched
// again once it has less than five minutes left.
func TestVertexServiceAccount(t *testing.T) {
	ts := newTokenServer(t)
	up := newVertexUpstream(t)
	v, err := providers.NewVertex(providers.VertexConfig{Config: providers.Config{BaseURL: up.srv.URL, HTTPClient: &http.Client{}},
		Location: "europe-west4", CredentialsJSON: ts.credentials()})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Configured() || v.Name() != "vertex_ai" {
		t.Fatalf("configured %v, name %q", v.Configured(), v.Name())
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := v.Complete(context.Background(), vertexHello("gemini-2.0-flash")); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := ts.fetches.Load(); n != 1 {
		t.Errorf("%d token fetches for 8 calls, want 1", n)
	}
	// The project comes from the key file when none is configured.
	want := "/v1/projects/sa-project/locations/europe-west4/publishers/google/models/gemini-2.0-flash:generateContent Bearer ya29.token-1"
	for _, c := range up.calls() {
		if c != want {
			t.Fatalf("call %q, want %q", c, want)
		}
	}

	// A token with less than googleTokenEarly (5 min) left is not used: the next call
	// fetches a new one.
	ts.expiresIn.Store(240)
	v2, _ := providers.NewVertex(providers.VertexConfig{Config: providers.Config{BaseURL: up.srv.URL}, Project: "p", CredentialsJSON: ts.credentials()})
	for range 2 {
		if _, err := v2.Complete(context.Background(), vertexHello("gemini-2.0-flash")); err != nil {
			t.Fatal(err)
		}
	}
	calls := up.calls()
	if n := ts.fetches.Load(); n != 3 || !strings.HasSuffix(calls[len(calls)-2], "token-2") || !strings.HasSuffix(calls[len(calls)-1], "token-3") {
		t.Errorf("%d fetches, last calls %q", n, calls[len(calls)-2:])
	}
}

// A token is fetched with the context of the request that needs it: a request that ends
// while the token endpoint is slow ends at once (its fetch is cancelled), and the next
// request fetches with its own.
func TestVertexTokenFetchTakesRequestContext(t *testing.T) {
	ts := newTokenServer(t)
	ts.hold = make(chan struct{})
	up := newVertexUpstream(t)
	v, err := providers.NewVertex(providers.VertexConfig{Config: providers.Config{BaseURL: up.srv.URL}, Project: "p", CredentialsJSON: ts.credentials()})
	if err != nil {
		t.Fatal(err)
	}
	ts.held, ts.gaveUp = make(chan struct{}, 1), make(chan struct{}, 1)
	// The request's deadline passes while the token endpoint holds its fetch: the test
	// ends the context (cause DeadlineExceeded) once the fetch is held, whatever the load.
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		<-ts.held
		cancel(context.DeadlineExceeded)
	}()
	ended := make(chan error, 1)
	go func() {
		_, err := v.Complete(ctx, vertexHello("gemini-2.0-flash"))
		ended <- err
	}()
	// The token endpoint holds every fetch until the end of the test: the call can only
	// end through its context. The minute is a hang guard.
	select {
	case err = <-ended:
	case <-time.After(time.Minute):
		t.Fatal("the call did not end with its request's context (the token fetch kept it)")
	}
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.KindTimeout {
		t.Fatalf("err = %v, want a timeout", err)
	}
	select {
	case <-ts.gaveUp:
	case <-time.After(time.Minute):
		t.Fatal("the token request outlived its request's context")
	}
	if n := ts.cancelled.Load(); n != 1 {
		t.Errorf("%d token requests ended with their request's context, want 1", n)
	}
	close(ts.hold)
	if _, err := v.Complete(context.Background(), vertexHello("gemini-2.0-flash")); err != nil {
		t.Fatal(err)
	}
	if len(up.calls()) != 1 {
		t.Errorf("upstream calls %q", up.calls())
	}
}

// A key the token endpoint refuses fails the call with KindAuth, before Vertex is called.
func TestVertexTokenRefused(t *testing.T) {
	ts := newTokenServer(t)
	up := newVertexUpstream(t)
	other := newTokenServer(t) // signs with another key
	creds := strings.Replace(string(other.credentials()), other.srv.URL, ts.srv.URL, 1)
	creds = strings.Replace(creds, other.email, ts.email, 1)
	v, err := providers.NewVertex(providers.VertexConfig{Config: providers.Config{BaseURL: up.srv.URL}, Project: "p", CredentialsJSON: []byte(creds)})
	if err != nil {
		t.Fatal(err)
	}
	ts.quiet = true
	_, err = v.Complete(context.Background(), vertexHello("gemini-2.0-flash"))
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.KindAuth || pe.StatusCode != 400 || len(up.calls()) != 0 {
		t.Errorf("err = %v, upstream calls %d", err, len(up.calls()))
	}
}

// The environment: LiteLLM's variables win over the google-genai SDK's; the global
// location has no region in its host; without a project or credentials the provider is
// not configured and its calls say what to set.
func TestVertexFromEnv(t *testing.T) {
	dir := t.TempDir()
	ts := newTokenServer(t)
	keyFile := filepath.Join(dir, "sa.json")
	if err := os.WriteFile(keyFile, ts.credentials(), 0o600); err != nil {
		t.Fatal(err)
	}
	lookup := func(env map[string]string) *providers.Vertex {
		t.Helper()
		env["HOME"] = dir // no gcloud credentials there
		p, err := providers.FromEnv(envOf(env), providers.Options{}).Lookup("vertex_ai")
		if err != nil {
			t.Fatal(err)
		}
		return p.(*providers.Vertex)
	}
	v := lookup(map[string]string{"VERTEXAI_PROJECT": "litellm-p", "GOOGLE_CLOUD_PROJECT": "sdk-p", "VERTEXAI_LOCATION": "asia-northeast1",
		"GOOGLE_CLOUD_LOCATION": "us-east4", "GOOGLE_APPLICATION_CREDENTIALS": keyFile})
	if want := "https://asia-northeast1-aiplatform.googleapis.com/v1/projects/litellm-p/locations/asia-northeast1/publishers/google"; v.BaseURL() != want || !v.Configured() {
		t.Errorf("BaseURL = %s (configured %v), want %s", v.BaseURL(), v.Configured(), want)
	}
	v = lookup(map[string]string{"GOOGLE_CLOUD_PROJECT": "sdk-p", "GOOGLE_CLOUD_LOCATION": "global", "VERTEXAI_ACCESS_TOKEN": "ya29.fixed"})
	if want := "https://aiplatform.googleapis.com/v1/projects/sdk-p/locations/global/publishers/google"; v.BaseURL() != want || !v.Configured() {
		t.Errorf("BaseURL = %s (configured %v), want %s", v.BaseURL(), v.Configured(), want)
	}
	v = lookup(map[string]string{"VERTEXAI_CREDENTIALS": string(ts.credentials())}) // the project is the key's
	if !strings.Contains(v.BaseURL(), "/projects/sa-project/locations/us-central1/") || !v.Configured() {
		t.Errorf("BaseURL = %s (configured %v)", v.BaseURL(), v.Configured())
	}
	for _, c := range []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{}, []string{"VERTEXAI_PROJECT", "credentials"}},
		{map[string]string{"VERTEXAI_PROJECT": "p"}, []string{"GOOGLE_APPLICATION_CREDENTIALS"}},
		{map[string]string{"VERTEXAI_ACCESS_TOKEN": "ya29.x"}, []string{"VERTEXAI_PROJECT"}},
		{map[string]string{"VERTEXAI_PROJECT": "p", "GOOGLE_APPLICATION_CREDENTIALS": filepath.Join(dir, "missing.json")}, []string{"missing.json"}},
	} {
		v := lookup(c.env)
		_, err := v.Complete(context.Background(), vertexHello("gemini-2.0-flash"))
		if v.Configured() || !errors.Is(err, providers.ErrNotConfigured) {
			t.Errorf("%v: configured %v, err %v", c.env, v.Configured(), err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v does not name %s", c.env, err, w)
			}
		}
	}
}

// Embeddings: text-embedding models through :predict in batches (the token counts
// Vertex reports); gemini-embedding models one text a call.
func TestVertexEmbeddings(t *testing.T) {
	up := newVertexUpstream(t)
	v, err := providers.NewVertex(providers.VertexConfig{Config: providers.Config{BaseURL: up.srv.URL}, Project: "p", AccessToken: "ya29.fixed"})
	if err != nil {
		t.Fatal(err)
	}
	inputs := make([]string, 300)
	for i := range inputs {
		inputs[i] = fmt.Sprintf("text %d", i)
	}
	resp, err := v.Embed(context.Background(), &providers.EmbeddingRequest{Model: "text-embedding-005", Input: inputs, Dimensions: 2})
	if err != nil {
		t.Fatal(err)
	}
	calls := up.calls()
	if len(calls) != 2 || len(resp.Vectors) != 300 || resp.Usage.PromptTokens != 900 || resp.UsageEstimated {
		t.Errorf("%d calls, %d vectors, usage %+v (estimated %v)", len(calls), len(resp.Vectors), resp.Usage, resp.UsageEstimated)
	}
	if want := "/v1/projects/p/locations/us-central1/publishers/google/models/text-embedding-005:predict Bearer ya29.fixed"; calls[0] != want {
		t.Errorf("call %q, want %q", calls[0], want)
	}
	if _, err := v.Embed(context.Background(), &providers.EmbeddingRequest{Model: "gemini-embedding-001", Input: inputs[:3]}); err != nil {
		t.Fatal(err)
	}
	if n := len(up.calls()) - len(calls); n != 3 {
		t.Errorf("gemini-embedding-001: %d calls for 3 texts", n)
	}
}

// Vertex AI's partner models other than Claude (Llama, Mistral, …) have APIs of their own:
// refused before any call, naming the model. Claude is served (see vertex_claude_test.go).
func TestVertexRefusesPartnerModels(t *testing.T) {
	up := newVertexUpstream(t)
	v, _ := providers.NewVertex(providers.VertexConfig{Config: providers.Config{BaseURL: up.srv.URL}, Project: "p", AccessToken: "ya29.fixed"})
	for _, m := range []string{"meta/llama-3.1-405b-instruct-maas", "mistral-large@2411-001", "codestral@2405", "jamba-1.5-large@001", "deepseek-ai/deepseek-r1-0528-maas", "qwen/qwen3-coder-480b-a35b-instruct-maas"} {
		var ue *providers.UnsupportedError
		if err := providers.Check(v, m, vertexHello(m)); !errors.As(err, &ue) || ue.Field != "model" || !strings.Contains(err.Error(), m) {
			t.Errorf("Check(%s) = %v", m, err)
		}
	}
	if err := providers.Check(v, "claude-3-5-sonnet-v2@20241022", vertexHello("claude-3-5-sonnet-v2@20241022")); err != nil {
		t.Errorf("Check refuses Claude: %v", err)
	}
	if len(up.calls()) != 0 {
		t.Errorf("%d calls", len(up.calls()))
	}
}

// The configuration file: vertex_ai entries for other projects and regions, with a
// credentials file or a token variable; fields of another format, an API key, or two
// credentials are refused by name.
func TestVertexConfigFile(t *testing.T) {
	ts := newTokenServer(t)
	up := newVertexUpstream(t)
	keyFile := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(keyFile, ts.credentials(), 0o600); err != nil {
		t.Fatal(err)
	}
	fc, err := providers.ParseConfig([]byte(`{"providers": [
		{"name": "vertex-eu", "format": "vertex_ai", "base_url": "` + up.srv.URL + `", "project": "eu-p", "location": "europe-west4", "credentials_file": "` + keyFile + `"},
		{"name": "vertex_ai", "base_url": "` + up.srv.URL + `", "project": "main-p", "access_token_env": "MY_TOKEN"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	env := envOf(map[string]string{"MY_TOKEN": "ya29.mine", "HOME": t.TempDir()})
	reg := providers.FromEnv(env, providers.Options{})
	if err := reg.Configure(fc, env, providers.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"vertex-eu", "vertex_ai"} {
		p, _ := reg.Lookup(name)
		if _, err := p.Complete(context.Background(), vertexHello("gemini-2.0-flash")); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	calls := up.calls()
	if !strings.HasPrefix(calls[0], "/v1/projects/eu-p/locations/europe-west4/") || !strings.HasSuffix(calls[0], "Bearer ya29.token-1") ||
		!strings.HasPrefix(calls[1], "/v1/projects/main-p/locations/us-central1/") || !strings.HasSuffix(calls[1], "Bearer ya29.mine") {
		t.Errorf("calls %q", calls)
	}

	for _, c := range []struct{ doc, field string }{
		{`{"name": "vertex_ai", "api_key_env": "K"}`, "providers[0].api_key"},
		{`{"name": "vertex_ai", "api_version": "v1"}`, "providers[0].api_version"},
		{`{"name": "gemini", "project": "p"}`, "providers[0].project"},
		{`{"name": "v", "format": "vertex_ai", "location": "Europe West"}`, "providers[0].location"},
		{`{"name": "v", "format": "vertex_ai", "credentials_file": "/x", "access_token_env": "T"}`, "providers[0].credentials_file"},
	} {
		_, err := providers.ParseConfig([]byte(`{"providers": [` + c.doc + `]}`))
		var ce *providers.ConfigError
		if !errors.As(err, &ce) || ce.Field != c.field {
			t.Errorf("%s: err = %v, want one naming %s", c.doc, err, c.field)
		}
	}
	fc, _ = providers.ParseConfig([]byte(`{"providers": [{"name": "v", "format": "vertex_ai", "project": "p", "credentials_file": "` + filepath.Join(t.TempDir(), "none.json") + `"}]}`))
	var ce *providers.ConfigError
	if err := reg.Configure(fc, env, providers.Options{}); !errors.As(err, &ce) || ce.Field != "providers[0].credentials_file" {
		t.Errorf("missing credentials file: %v", err)
	}
}

// Vertex AI's Gemini models are priced at the catalogue's Vertex AI rates.
func TestVertexPricing(t *testing.T) {
	for _, m := range []string{"vertex_ai/gemini-2.0-flash", "vertex_ai/gemini-2.5-pro"} {
		p, ok := providers.DefaultCatalog().Lookup(m)
		if !ok || !p.Known || !strings.HasPrefix(p.Provider, "vertex_ai") {
			t.Errorf("%s: price %+v (found %v)", m, p, ok)
		}
	}
}
