package providers_test

// Review 14b: a bedrock entry's own credentials in --providers-config.

import (
	"context"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview14bEntryCredentialsWinOverTheGlobalAPIKey: a bedrock entry that names its own
// SigV4 credential variables (another account, another region) signs with them even when
// the environment also holds AWS_BEARER_TOKEN_BEDROCK for the default bedrock provider: the
// entry said which credentials it uses. Today any bedrock entry without api_key_env picks
// up the global Bedrock API key, which "wins over" the credentials the entry names.
func TestReview14bEntryCredentialsWinOverTheGlobalAPIKey(t *testing.T) {
	srv, got := captureOnce(t, 200, converseHello)
	env := envOf(map[string]string{"AWS_BEARER_TOKEN_BEDROCK": "ABSKglobal-key-for-the-default-account", "AWS_REGION": "us-east-1",
		"EU_KEY_ID": "AKIDEU", "EU_SECRET": "eu-secret"})
	fc, err := providers.ParseConfig([]byte(`{"providers":[{"name":"bedrock-eu","format":"bedrock","region":"eu-west-1","base_url":"` + srv.URL +
		`","aws_access_key_id_env":"EU_KEY_ID","aws_secret_access_key_env":"EU_SECRET"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	reg := providers.FromEnv(env, providers.Options{})
	if err := reg.Configure(fc, env, providers.Options{}); err != nil {
		t.Fatal(err)
	}
	eu, _ := reg.Lookup("bedrock-eu")
	if _, err := eu.Complete(context.Background(), hello("amazon.nova-pro-v1:0")); err != nil {
		t.Fatal(err)
	}
	if a := got.header.Get("Authorization"); !strings.Contains(a, "Credential=AKIDEU/") {
		t.Errorf("bedrock-eu sent Authorization %q, want SigV4 with its own AKIDEU credentials", a)
	}
}
