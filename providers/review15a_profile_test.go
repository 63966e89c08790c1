package providers_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview15aProfileWithoutCredentials: AWS_PROFILE naming a profile that holds only a
// region (no keys, SSO, role or credential_process) is no evidence of credentials: the
// SDK's chain would fall through to the EC2 instance role (instance metadata), which needs
// aws_instance_role. Bedrock stays unconfigured and instance metadata is never asked.
func TestReview15aProfileWithoutCredentials(t *testing.T) {
	srv, got := captureOnce(t, 200, converseHello)
	dir := awsBareEnv(t, srv.URL)
	var asked atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:21451")
	if err != nil {
		t.Fatal(err)
	}
	imds := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	imds.Listener.Close()
	imds.Listener = ln
	imds.Start()
	defer imds.Close()
	t.Setenv("AWS_EC2_METADATA_DISABLED", "")
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.URL)
	conf := filepath.Join(dir, "config")
	writeFile(t, conf, "[profile dev]\nregion = eu-west-3\n")
	t.Setenv("AWS_CONFIG_FILE", conf)
	t.Setenv("AWS_PROFILE", "dev")

	p := bedrockPreset(t)
	_, err = p.Complete(context.Background(), hello("amazon.nova-pro-v1:0"))
	if providers.IsConfigured(p) || !errors.Is(err, providers.ErrNotConfigured) || got.method != "" || asked.Load() != 0 {
		t.Errorf("region-only AWS_PROFILE: configured %v, err %v, sent %q, instance metadata asked %d times",
			providers.IsConfigured(p), err, got.method, asked.Load())
	}
}
