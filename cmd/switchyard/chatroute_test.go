package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChatNameOfNoListedProvider: a -m name with '/' whose "provider" the server lists no
// models of (a LiteLLM wildcard model_name custom/* matches it) goes through
// /v1/chat/completions, which serves it, where the native route refused it (422 unknown
// provider); a LiteLLM model_name with '/' (team/smart) and provider/model names stay on
// the native route, which serves them.
func TestChatNameOfNoListedProvider(t *testing.T) {
	up := fakeOpenAIUpstream(t).URL + "/v1"
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	const master = "sk-litellm-master-key-for-the-chat-test-0123"
	os.WriteFile(cfg, []byte(fmt.Sprintf(`
model_list:
  - model_name: team/smart
    litellm_params: {model: openai/gpt-4o, api_base: %[1]q, api_key: sk-a}
  - model_name: openai/gpt-4o-mini
    litellm_params: {model: openai/gpt-4o-mini, api_base: %[1]q, api_key: sk-a}
  - model_name: custom/*
    litellm_params: {model: openai/*, api_base: %[1]q, api_key: sk-a}
general_settings:
  master_key: %[2]s
`, up, master)), 0o600)
	t.Setenv("SWITCHYARD_API_KEYS", "")
	t.Setenv("SWITCHYARD_LITELLM_CONFIG", cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel() }()
	addr, _, _, done := startServeWith(t, ctx, filepath.Join(dir, "data"))
	defer func() { cancel(); <-done }()
	chat := func(args ...string) (string, string) {
		t.Helper()
		code, out, errOut := cli(t, append([]string{"chat", "--url", "http://" + addr, "--key", master}, append(args, "Say", "hello")...)...)
		if code != 0 || out != "Hello from the fake upstream\n" {
			t.Fatalf("%v: code %d, stdout %q, stderr %q", args, code, out, errOut)
		}
		return out, errOut
	}

	// Through /v1/chat/completions: the summary names what was asked, then what answered.
	if _, errOut := chat("-m", "custom/gpt-4o"); !strings.HasPrefix(errOut, "[custom/gpt-4o → ") {
		t.Errorf("custom/gpt-4o: stderr %q, want the OpenAI-compatible route's summary", errOut)
	}
	_, errOut := chat("-m", "openai/gpt-4o-mini", "-m", "custom/gpt-4o")
	if !strings.Contains(errOut, "with custom/gpt-4o, which the server serves as another model: asked through /v1/chat/completions: openai/gpt-4o-mini first, then custom/gpt-4o") {
		t.Errorf("several with custom/gpt-4o: stderr %q", errOut)
	}

	// The native route's: its summary names the deployment that answered.
	for _, args := range [][]string{{"-m", "team/smart"}, {"-m", "openai/gpt-4o-mini", "-m", "team/smart"}} {
		if _, errOut := chat(args...); strings.Contains(errOut, "/v1/chat/completions") || !strings.HasPrefix(errOut, "[openai-") || strings.Contains(errOut, " → ") {
			t.Errorf("%v: stderr %q, want the native route's summary", args, errOut)
		}
	}
}
