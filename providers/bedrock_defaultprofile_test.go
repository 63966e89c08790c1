package providers_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestBedrockCredentialChainDefaultProfileVariable: AWS_DEFAULT_PROFILE names the profile
// as AWS_PROFILE does (the AWS SDK reads both, AWS_PROFILE first): a credentials file
// holding only that profile configures bedrock with its key, in its config profile's region;
// AWS_PROFILE wins when both are set.
func TestBedrockCredentialChainDefaultProfileVariable(t *testing.T) {
	srv, got := captureOnce(t, 200, converseHello)
	dir := awsBareEnv(t, srv.URL)
	creds, conf := filepath.Join(dir, "credentials"), filepath.Join(dir, "config")
	writeFile(t, creds, "[dev]\naws_access_key_id = AKIDPROFILEDEV\naws_secret_access_key = dev-secret\n\n"+
		"[ops]\naws_access_key_id = AKIDPROFILEOPS\naws_secret_access_key = ops-secret\n")
	writeFile(t, conf, "[profile dev]\nregion = ap-south-1\n\n[profile ops]\nregion = eu-north-1\n")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
	t.Setenv("AWS_CONFIG_FILE", conf)
	t.Setenv("AWS_DEFAULT_PROFILE", "dev")

	p := bedrockPreset(t)
	if !providers.IsConfigured(p) {
		t.Fatal("bedrock with AWS_DEFAULT_PROFILE reports unconfigured")
	}
	if _, err := p.Complete(context.Background(), hello("amazon.nova-pro-v1:0")); err != nil {
		t.Fatal(err)
	}
	if a := got.header.Get("Authorization"); !strings.Contains(a, "Credential=AKIDPROFILEDEV/") || !strings.Contains(a, "/ap-south-1/bedrock/") {
		t.Errorf("AWS_DEFAULT_PROFILE dev: Authorization = %q, want the dev profile's key in its region", a)
	}

	t.Setenv("AWS_PROFILE", "ops")
	if _, err := bedrockPreset(t).Complete(context.Background(), hello("amazon.nova-pro-v1:0")); err != nil {
		t.Fatal(err)
	}
	if a := got.header.Get("Authorization"); !strings.Contains(a, "Credential=AKIDPROFILEOPS/") || !strings.Contains(a, "/eu-north-1/bedrock/") {
		t.Errorf("AWS_PROFILE ops beside AWS_DEFAULT_PROFILE dev: Authorization = %q, want ops's key in its region", a)
	}
}
