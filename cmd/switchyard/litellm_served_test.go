package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestServeLiteLLMServesDeploymentModelNames: with --litellm-config, a request may name a
// model_name whose deployment has an api_base of its own, or a model_group_alias, and is
// refused (400) for a model the config does not name. (A deployment's own
// litellm_params.model name, which LiteLLM's router also serves, is not served here yet.)
func TestServeLiteLLMServesDeploymentModelNames(t *testing.T) {
	_, aURL := newScripted(t, "a", false)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: %[1]q, api_key: key-a}
router_settings:
  model_group_alias: {fast: gpt-4o}
general_settings:
  master_key: sk-served-master-0123456789
`, aURL)), 0o600)
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("SWITCHYARD_API_KEYS", "")
	t.Setenv("SWITCHYARD_LITELLM_CONFIG", cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _, _, done := startServeWith(t, ctx, filepath.Join(dir, "data"))
	base := "http://" + addr
	for _, m := range []string{"gpt-4o", "fast"} {
		if code, body := chatAs(t, base, "sk-served-master-0123456789", m); code != 200 {
			t.Errorf("chat %s: %d %s, want 200 (LiteLLM serves it)", m, code, body)
		}
	}
	if code, _ := chatAs(t, base, "sk-served-master-0123456789", "openai/gpt-4.1"); code != 400 {
		t.Errorf("chat openai/gpt-4.1: %d, want 400", code)
	}
	cancel()
	<-done
}
