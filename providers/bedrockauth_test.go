package providers_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// awsBareEnv makes the process environment one without AWS credentials of any kind (no
// keys, profile, files, web identity or container variables; instance metadata disabled,
// so nothing reaches 169.254.169.254) whose Bedrock endpoint is base, and returns a
// directory for the test's files.
func awsBareEnv(t *testing.T, base string) string {
	dir := t.TempDir()
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "AWS_PROFILE",
		"AWS_DEFAULT_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CA_BUNDLE", "AWS_DEFAULT_REGION", "AWS_REGION", "AWS_ENDPOINT_URL"} {
		t.Setenv(v, "")
	}
	t.Setenv("HOME", dir)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "no-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "no-credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", base)
	return dir
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// bedrockPreset is serve's bedrock provider for the process environment.
func bedrockPreset(t *testing.T) providers.Provider {
	t.Helper()
	p, err := providers.FromEnv(os.Getenv, providers.Options{}).Lookup("bedrock")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBedrockCredentialChainProfile: a named profile of the shared credentials file
// (AWS_PROFILE) signs serve's requests, in the region its config profile names when
// AWS_REGION is unset; a config entry's aws_profile_name picks another profile; the default
// profile of a credentials file is used without AWS_PROFILE; a profile that does not exist
// leaves bedrock unconfigured, naming it.
func TestBedrockCredentialChainProfile(t *testing.T) {
	srv, got := captureOnce(t, 200, converseHello)
	dir := awsBareEnv(t, srv.URL)
	creds, conf := filepath.Join(dir, "credentials"), filepath.Join(dir, "config")
	writeFile(t, creds, "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = default-secret\n\n"+
		"[dev]\naws_access_key_id = AKIDPROFILEDEV\naws_secret_access_key = dev-secret\naws_session_token = dev-token\n\n"+
		"[ops]\naws_access_key_id = AKIDPROFILEOPS\naws_secret_access_key = ops-secret\n")
	writeFile(t, conf, "[profile dev]\nregion = ap-south-1\n")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
	t.Setenv("AWS_CONFIG_FILE", conf)
	t.Setenv("AWS_PROFILE", "dev")

	p := bedrockPreset(t)
	if !providers.IsConfigured(p) {
		t.Fatal("bedrock with AWS_PROFILE reports unconfigured")
	}
	if _, err := p.Complete(context.Background(), hello("amazon.nova-pro-v1:0")); err != nil {
		t.Fatal(err)
	}
	if a := got.header.Get("Authorization"); !strings.Contains(a, "Credential=AKIDPROFILEDEV/") || !strings.Contains(a, "/ap-south-1/bedrock/aws4_request") {
		t.Errorf("Authorization = %q, want the dev profile's key in its region", a)
	}
	if tok := got.header.Get("X-Amz-Security-Token"); tok != "dev-token" {
		t.Errorf("session token = %q", tok)
	}

	// aws_profile_name wins over AWS_PROFILE; AWS_REGION over the profile's region.
	t.Setenv("AWS_REGION", "us-west-2")
	fc, err := providers.ParseConfig([]byte(`{"providers":[{"name":"bedrock-ops","format":"bedrock","base_url":"` + srv.URL + `","aws_profile_name":"ops"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	reg := providers.FromEnv(os.Getenv, providers.Options{})
	if err := reg.Configure(fc, os.Getenv, providers.Options{}); err != nil {
		t.Fatal(err)
	}
	ops, _ := reg.Lookup("bedrock-ops")
	if _, err := ops.Complete(context.Background(), hello("amazon.nova-pro-v1:0")); err != nil {
		t.Fatal(err)
	}
	if a := got.header.Get("Authorization"); !strings.Contains(a, "Credential=AKIDPROFILEOPS/") || !strings.Contains(a, "/us-west-2/bedrock/") {
		t.Errorf("aws_profile_name ops: Authorization = %q", a)
	}

	// No AWS_PROFILE: the credentials file's default profile.
	t.Setenv("AWS_PROFILE", "")
	if _, err := bedrockPreset(t).Complete(context.Background(), hello("amazon.nova-pro-v1:0")); err != nil || !strings.Contains(got.header.Get("Authorization"), "Credential=AKIDDEFAULT/") {
		t.Errorf("default profile: %v, Authorization = %q", err, got.header.Get("Authorization"))
	}

	// A profile that is not there: not configured, saying which.
	t.Setenv("AWS_PROFILE", "nope")
	*got = captured{}
	p = bedrockPreset(t)
	_, err = p.Complete(context.Background(), hello("amazon.nova-pro-v1:0"))
	if providers.IsConfigured(p) || !errors.Is(err, providers.ErrNotConfigured) || !strings.Contains(err.Error(), `"nope"`) || got.method != "" {
		t.Errorf("missing profile: configured %v, err %v, sent %q", providers.IsConfigured(p), err, got.method)
	}
}

// TestBedrockCredentialChainContainer: ECS/EKS container credentials
// (AWS_CONTAINER_CREDENTIALS_FULL_URI, here a fake endpoint on loopback) sign serve's
// requests with their key and session token, retrieved once and cached across calls; a
// failing endpoint is an auth error naming the source, without its authorization token,
// and nothing is sent to Bedrock.
func TestBedrockCredentialChainContainer(t *testing.T) {
	srv, got := captureOnce(t, 200, converseHello)
	awsBareEnv(t, srv.URL)
	t.Setenv("AWS_REGION", "eu-west-1")
	var fetched atomic.Int32
	var authz atomic.Value
	fail := false
	ecs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		authz.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		if fail {
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"code":"AccessDenied","message":"token ecs-authz-SECRET refused"}`)
			return
		}
		io.WriteString(w, `{"AccessKeyId":"AKIDCONTAINER","SecretAccessKey":"container-secret","Token":"container-token","Expiration":"`+
			time.Now().Add(time.Hour).UTC().Format(time.RFC3339)+`"}`)
	}))
	defer ecs.Close()
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", ecs.URL+"/v2/credentials/abc")
	t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "ecs-authz-SECRET")

	p := bedrockPreset(t)
	if !providers.IsConfigured(p) {
		t.Fatal("bedrock with container credentials reports unconfigured")
	}
	for range 2 {
		if _, err := p.Complete(context.Background(), hello("amazon.nova-pro-v1:0")); err != nil {
			t.Fatal(err)
		}
	}
	if a := got.header.Get("Authorization"); !strings.Contains(a, "Credential=AKIDCONTAINER/") || !strings.Contains(a, "/eu-west-1/bedrock/") {
		t.Errorf("Authorization = %q", a)
	}
	if tok := got.header.Get("X-Amz-Security-Token"); tok != "container-token" {
		t.Errorf("session token = %q", tok)
	}
	if n := fetched.Load(); n != 1 {
		t.Errorf("container endpoint asked %d times for two calls, want 1 (cached)", n)
	}
	if a, _ := authz.Load().(string); a != "ecs-authz-SECRET" {
		t.Errorf("container endpoint's Authorization = %q", a)
	}

	fail = true
	*got = captured{}
	_, err := bedrockPreset(t).Complete(context.Background(), hello("amazon.nova-pro-v1:0"))
	if providers.KindOf(err) != providers.KindAuth || !strings.Contains(err.Error(), "AWS_CONTAINER_CREDENTIALS_FULL_URI") ||
		strings.Contains(err.Error(), "ecs-authz-SECRET") || got.method != "" {
		t.Errorf("failing container endpoint: err = %v, sent %q", err, got.method)
	}
}

// TestBedrockCredentialChainWebIdentity: EKS IRSA's variables make bedrock configured; a
// refused AssumeRoleWithWebIdentity (a fake STS) is an auth error naming web identity, and
// nothing is sent to Bedrock.
func TestBedrockCredentialChainWebIdentity(t *testing.T) {
	srv, got := captureOnce(t, 200, converseHello)
	dir := awsBareEnv(t, srv.URL)
	t.Setenv("AWS_REGION", "us-east-1")
	var asked atomic.Int32
	sts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>Not authorized to perform sts:AssumeRoleWithWebIdentity</Message></Error><RequestId>r1</RequestId></ErrorResponse>`)
	}))
	defer sts.Close()
	token := filepath.Join(dir, "token")
	writeFile(t, token, "eyJhbGciOiJSUzI1NiJ9.e30.sig")
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", token)
	t.Setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/bedrock")
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
	p := bedrockPreset(t)
	if !providers.IsConfigured(p) {
		t.Fatal("bedrock with web identity reports unconfigured")
	}
	_, err := p.Complete(context.Background(), hello("amazon.nova-pro-v1:0"))
	if providers.KindOf(err) != providers.KindAuth || !strings.Contains(err.Error(), "web identity") || got.method != "" || asked.Load() == 0 {
		t.Errorf("refused web identity: err = %v, sent %q, STS asked %d times", err, got.method, asked.Load())
	}
}

// TestBedrockCredentialChainNothing: a machine without AWS (no keys, files, profile, web
// identity or container variables) leaves bedrock unconfigured as before, and the message
// says what to set.
func TestBedrockCredentialChainNothing(t *testing.T) {
	srv, got := captureOnce(t, 200, converseHello)
	awsBareEnv(t, srv.URL)
	t.Setenv("AWS_REGION", "us-east-1")
	p := bedrockPreset(t)
	_, err := p.Complete(context.Background(), hello("amazon.nova-pro-v1:0"))
	if providers.IsConfigured(p) || !errors.Is(err, providers.ErrNotConfigured) || got.method != "" {
		t.Fatalf("configured %v, err %v, sent %q", providers.IsConfigured(p), err, got.method)
	}
	for _, want := range []string{"AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "aws_instance_role"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("not-configured message %q does not name %s", err, want)
		}
	}
	// A config file with a region only holds no credentials: still unconfigured.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "config"), "[default]\nregion = eu-west-3\n")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	if providers.IsConfigured(bedrockPreset(t)) {
		t.Error("a config file without credentials made bedrock configured")
	}
	// The config file's opt-in for the EC2 instance role: configured without evidence.
	fc, err := providers.ParseConfig([]byte(`{"providers":[{"name":"bedrock","aws_instance_role":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	reg := providers.FromEnv(os.Getenv, providers.Options{})
	if err := reg.Configure(fc, os.Getenv, providers.Options{}); err != nil {
		t.Fatal(err)
	}
	if p, _ := reg.Lookup("bedrock"); !providers.IsConfigured(p) {
		t.Error("aws_instance_role: bedrock unconfigured")
	}
	for _, b := range []struct{ doc, field string }{
		{`{"providers":[{"name":"openai","aws_profile_name":"dev"}]}`, "providers[0].aws_profile_name"},
		{`{"providers":[{"name":"openai","aws_instance_role":true}]}`, "providers[0].aws_instance_role"},
		{`{"providers":[{"name":"b","format":"bedrock","aws_profile_name":"dev","aws_access_key_id_env":"K","aws_secret_access_key_env":"S"}]}`, "providers[0].aws_profile_name"},
		{`{"providers":[{"name":"b","format":"bedrock","aws_instance_role":true,"aws_access_key_id_env":"K","aws_secret_access_key_env":"S"}]}`, "providers[0].aws_instance_role"},
		{`{"providers":[{"name":"b","format":"bedrock","aws_profile_name":" dev"}]}`, "providers[0].aws_profile_name"},
	} {
		_, err := providers.ParseConfig([]byte(b.doc))
		var ce *providers.ConfigError
		if !errors.As(err, &ce) || ce.Field != b.field {
			t.Errorf("ParseConfig(%s) = %v, want a ConfigError on %s", b.doc, err, b.field)
		}
	}
}
