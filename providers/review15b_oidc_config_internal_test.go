package providers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An azure entry's ad_token_env naming a variable that holds LiteLLM's "oidc/…" form
// (here AZURE_AD_TOKEN itself, which works without the entry) must be exchanged as a
// federated token, as the environment's AZURE_AD_TOKEN is, not sent as a Bearer
// "oidc/file/…".
func TestReview15bADTokenEnvOIDC(t *testing.T) {
	entra, dep := newFakeEntra(t), newFakeDeployment(t)
	jwt := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(jwt, []byte("header.payload.sig"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := entraEnv(map[string]string{
		"AZURE_API_BASE": dep.srv.URL, "AZURE_TENANT_ID": entraTestTenant, "AZURE_CLIENT_ID": entraTestClient,
		"AZURE_AUTHORITY_HOST": entra.srv.URL + "/", "AZURE_AD_TOKEN": "oidc/file" + jwt,
	})
	fc, err := ParseConfig([]byte(`{"providers":[{"name":"azure","ad_token_env":"AZURE_AD_TOKEN"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	reg := FromEnv(env, Options{})
	if err := reg.Configure(fc, env, Options{}); err != nil {
		t.Fatal(err)
	}
	p, _ := reg.Lookup("azure")
	if _, err := p.Complete(context.Background(), hello("dep")); err != nil {
		t.Fatal(err)
	}
	if got := dep.last(t); strings.Contains(got, "oidc/") || got != "Bearer tok-1|" {
		t.Fatalf("deployment was sent %q, want the exchanged Bearer tok-1", got)
	}
	if _, form := entra.lastForm(t); form.Get("client_assertion") != "header.payload.sig" {
		t.Errorf("client_assertion %q", form.Get("client_assertion"))
	}
}
