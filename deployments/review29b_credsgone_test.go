package deployments

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// writeServiceAccount writes a Google service account file (a fresh RSA key) at path.
func writeServiceAccount(t *testing.T, path string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "p", "private_key_id": "k",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "client_email": "a@p.iam.gserviceaccount.com",
		"token_uri": "https://oauth2.googleapis.com/token"})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestReview29bCredentialsGoneLeftOut: a stored Vertex AI deployment whose
// vertex_credentials file is gone since it was stored no longer stops Sync (the server's
// start after a restart, and every /model/new after it on a running one): that deployment
// is left out of routing, listed by Unserved with why, the others served, another added;
// an update giving a credentials file that exists mends it.
func TestReview29bCredentialsGoneLeftOut(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	creds := filepath.Join(t.TempDir(), "creds.json")
	writeServiceAccount(t, creds)
	svc, _ := review27cService(t, st, providers.FromEnv(func(string) string { return "" }, providers.Options{}), nil)
	gem, err := svc.Add(ctx, Input{ModelName: "gem", LiteLLMParams: map[string]any{"model": "vertex_ai/gemini-2.0-flash", "vertex_project": "p",
		"vertex_location": "us-central1", "vertex_credentials": creds}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Add(ctx, Input{ModelName: "team", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "sk-x"}}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(creds); err != nil {
		t.Fatal(err)
	}

	// A restart on the same store: review27cService fails the test if Sync does.
	restarted, g := review27cService(t, st, providers.FromEnv(func(string) string { return "" }, providers.Options{}), nil)
	if !g.IsModelGroup("team") || g.IsModelGroup("gem") {
		t.Errorf("groups served after the restart: %v, want team and not gem", g.ModelGroups())
	}
	un := restarted.Unserved()
	if len(un) != 1 || un[0].ID != gem.ID || !strings.Contains(un[0].Error, "creds.json") {
		t.Errorf("Unserved: %+v, want gem naming its credentials file", un)
	}
	if _, err := restarted.Add(ctx, Input{ModelName: "more", LiteLLMParams: map[string]any{"model": "openai/gpt-4o", "api_key": "sk-y"}}); err != nil {
		t.Fatalf("another deployment beside the one left out: %v", err)
	}
	if !g.IsModelGroup("more") {
		t.Errorf("the deployment added is not served: %v", g.ModelGroups())
	}
	writeServiceAccount(t, creds)
	if _, err := restarted.Update(ctx, gem.ID, Input{LiteLLMParams: map[string]any{"vertex_credentials": creds}}); err != nil {
		t.Fatalf("mending it with a credentials file that exists: %v", err)
	}
	if !g.IsModelGroup("gem") || len(restarted.Unserved()) != 0 {
		t.Errorf("after the update: groups %v, unserved %+v", g.ModelGroups(), restarted.Unserved())
	}
}
