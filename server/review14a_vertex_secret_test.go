package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview14aVertexCredentialsNotEchoedToCallers: VERTEXAI_CREDENTIALS holds "a path or
// the JSON" and is taken for JSON only when it starts with "{" (vertex.go vertexEnv).
// JSON that starts otherwise — the quotes docker --env-file keeps from
// VERTEXAI_CREDENTIALS='{…}', a byte-order mark — is opened as a path, and os.ReadFile's
// error, which quotes that "path", becomes the provider's not-configured reason
// (readCredentials, then endpoint.missing): every caller of a vertex_ai model, any API key,
// is answered the service account's private key (up to the 500-character message cut) in
// the 404's message, and it is logged wherever the error is.
func TestReview14aVertexCredentialsNotEchoedToCallers(t *testing.T) {
	const keyMaterial = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"
	creds := `'{"type":"service_account","project_id":"p","private_key_id":"0123abcd","private_key":"-----BEGIN PRIVATE KEY-----\n` +
		keyMaterial + `\n-----END PRIVATE KEY-----\n","client_email":"sa@p.iam.gserviceaccount.com"}'`
	env := map[string]string{"VERTEXAI_PROJECT": "p", "VERTEXAI_CREDENTIALS": creds, "HOME": t.TempDir()}
	reg := providers.FromEnv(func(k string) string { return env[k] }, providers.Options{})
	g, err := completions.New(completions.Options{Providers: reg})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	r := do(t, s, "POST", "/v1/chat/completions", testKey, `{"model":"vertex_ai/gemini-2.0-flash","messages":[{"role":"user","content":"hi"}]}`)
	if r.status == http.StatusOK {
		t.Fatalf("unexpected 200: %s", r.raw)
	}
	for _, secret := range []string{keyMaterial, "PRIVATE KEY", "0123abcd"} {
		if strings.Contains(r.raw, secret) {
			t.Errorf("the answer to an API caller quotes the credentials (%q): %s", secret, r.raw)
		}
	}
}

// TestReview14aAzureDeploymentNotFound (passes): Azure's 404 DeploymentNotFound reaches
// the caller as OpenAI's 404 model_not_found with Azure's own explanation, unretried.
func TestReview14aAzureDeploymentNotFound(t *testing.T) {
	calls := 0
	ups := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."}}`))
	}))
	defer ups.Close()
	env := map[string]string{"AZURE_API_KEY": "az-test-key-0123456789", "AZURE_API_BASE": ups.URL}
	reg := providers.FromEnv(func(k string) string { return env[k] }, providers.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	r := do(t, s, "POST", "/v1/chat/completions", testKey, `{"model":"azure/prod-4o","messages":[{"role":"user","content":"hi"}]}`)
	if r.status != http.StatusNotFound || !strings.Contains(r.raw, `"code":"model_not_found"`) || !strings.Contains(r.raw, "deployment for this resource does not exist") || calls != 1 {
		t.Errorf("%d after %d calls: %s", r.status, calls, r.raw)
	}
}
