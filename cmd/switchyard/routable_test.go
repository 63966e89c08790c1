package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestRoutableNeedsAConfiguredProvider: optimization jobs are refused at submit for a
// target model whose provider is unknown or has no API key here (ollama needs none).
func TestRoutableNeedsAConfiguredProvider(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-test"}
	w := &wiring{registry: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{})}
	for model, want := range map[string]string{
		"openai/gpt-4o-mini":         "",
		"ollama/llama3.2":            "",
		"anthropic/claude-3-5-haiku": "no API key",
		"nosuch/model":               "nosuch",
		"gpt-4o":                     "provider/model",
	} {
		err := w.routable(model)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v, want routable", model, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: err %v, want one naming %q", model, err, want)
		}
	}
}

// serve says at start which providers can answer, and warns when none has a key and about
// a --providers-config provider whose key is missing (the first sign was a failed request).
func TestServeReportsProviders(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		file string
		want []string
	}{
		{map[string]string{}, "", []string{"no LLM provider has an API key"}},
		{map[string]string{"OPENAI_API_KEY": "sk"}, "", []string{"LLM providers with a key", "openai"}},
		{map[string]string{"OPENAI_API_KEY": "sk"}, `{"providers":[{"name":"mylab","format":"openai","base_url":"http://127.0.0.1:1/v1","api_key_env":"NOPE_KEY"}]}`,
			[]string{"provider named in --providers-config has no API key", "mylab", "NOPE_KEY"}},
	} {
		var logs bytes.Buffer
		w := &wiring{cfg: &serveConfig{}, log: slog.New(slog.NewTextHandler(&logs, nil)), registry: providers.FromEnv(func(k string) string { return c.env[k] }, providers.Options{})}
		var fc *providers.FileConfig
		if c.file != "" {
			path := filepath.Join(t.TempDir(), "providers.json")
			if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
				t.Fatal(err)
			}
			var err error
			if fc, err = providers.LoadConfig(path); err != nil {
				t.Fatal(err)
			}
			if err := w.registry.Configure(fc, func(k string) string { return c.env[k] }, providers.Options{}); err != nil {
				t.Fatal(err)
			}
		}
		w.reportProviders(fc)
		for _, want := range c.want {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("env %v file %q: log lacks %q:\n%s", c.env, c.file, want, logs.String())
			}
		}
	}
}

// serve refuses a --model-groups file it cannot use, saying where, and serves the groups of
// a good one on /v1/models.
func TestServeModelGroupsFlag(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"smart": {"models": ["gpt-4o"]}}`), 0o600)
	var out bytes.Buffer
	code := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(dir, "d1"), "--model-groups", bad}, io.Discard, &out)
	if code == 0 || !strings.Contains(out.String(), "--model-groups") || !strings.Contains(out.String(), `"smart"`) {
		t.Fatalf("bad groups: exit %d, %s", code, out.String())
	}
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"smart": {"models": ["openai/gpt-4o", "openai/gpt-4o-mini"], "route": true, "tradeoff": "cost"}}`), 0o600)
	t.Setenv("SWITCHYARD_MODEL_GROUPS", good)
	t.Setenv("SWITCHYARD_API_KEYS", "sy-test-groups-key")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _, done := startServe(t, ctx, filepath.Join(dir, "d2"))
	code2, body := get(t, "http://"+addr+"/v1/models/smart", "sy-test-groups-key")
	if code2 != 200 || body["id"] != "smart" || body["owned_by"] != "switchyard" {
		t.Errorf("/v1/models/smart: %d %v", code2, body)
	}
	cancel()
	<-done
}
