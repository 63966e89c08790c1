package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeLiteLLMServesDeploymentModelNames: with --litellm-config, a request may name a
// model_name whose deployment has an api_base of its own, or a model_group_alias, and is
// refused (400) for a model the config does not name.
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

// TestServeLiteLLMServesADeploymentByItsOwnModel: with --litellm-config, a request naming
// a deployment's own litellm_params.model — "openai/gpt-4o" of model_name my-gpt, whose
// api_base and api_key are its own (called internally under a provider entry of its
// own), a bare "gpt-4o-mini", or a model_name with '/' — is served by that deployment with
// its own api_base and key, as LiteLLM's router serves its deployment_names; never by the
// environment's provider of that name (OPENAI_BASE_URL here, which must see no call). The
// answer's deployment id is the deployment's model_info.id, a key may be issued for the
// name and call it, and a model the config does not name is still a 400.
func TestServeLiteLLMServesADeploymentByItsOwnModel(t *testing.T) {
	own, ownURL := newScripted(t, "own", false)
	env, envURL := newScripted(t, "env", false)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`
model_list:
  - model_name: my-gpt
    litellm_params: {model: openai/gpt-4o, api_base: %[1]q, api_key: key-own}
    model_info: {id: my-gpt-1}
  - model_name: small
    litellm_params: {model: gpt-4o-mini, api_base: %[1]q, api_key: key-small}
  - model_name: team/reasoner
    litellm_params: {model: openai/o3-mini, api_base: %[1]q, api_key: key-own}
general_settings:
  master_key: sk-served-master-0123456789
`, ownURL)), 0o600)
	t.Setenv("OPENAI_API_KEY", "sk-env")
	t.Setenv("OPENAI_BASE_URL", envURL)
	t.Setenv("SWITCHYARD_API_KEYS", "")
	t.Setenv("SWITCHYARD_LITELLM_CONFIG", cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _, _, done := startServeWith(t, ctx, filepath.Join(dir, "data"))
	base := "http://" + addr
	const master = "sk-served-master-0123456789"
	for _, c := range []struct{ asked, upstream, key string }{
		{"openai/gpt-4o", "gpt-4o", "Bearer key-own"},
		{"gpt-4o-mini", "gpt-4o-mini", "Bearer key-small"},
		{"team/reasoner", "o3-mini", "Bearer key-own"},
		{"openai/o3-mini", "o3-mini", "Bearer key-own"},
	} {
		before, keyBefore := own.count(c.upstream), own.keyCount(c.key)
		if code, body := chatAs(t, base, master, c.asked); code != 200 || body != "from own" {
			t.Errorf("chat %s: %d %q, want 200 from the deployment's own api_base", c.asked, code, body)
			continue
		}
		if own.count(c.upstream) != before+1 || own.keyCount(c.key) != keyBefore+1 {
			t.Errorf("chat %s: the deployment's api_base saw %d calls of %s with %s, want 1", c.asked, own.count(c.upstream)-before, c.upstream, c.key)
		}
	}
	if n := env.total(); n != 0 {
		t.Errorf("the environment's openai (OPENAI_BASE_URL) got %d calls, want none", n)
	}
	// The answer names the deployment that answered by its model_info.id.
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(`{"model":"openai/gpt-4o","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+master)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if id := resp.Header.Get("x-litellm-model-id"); id != "my-gpt-1" {
		t.Errorf("x-litellm-model-id %q, want my-gpt-1", id)
	}
	// A key may name it, and call it.
	var key struct {
		Key string `json:"key"`
	}
	if code := postJSON(t, base+"/key/generate", master, `{"models":["openai/gpt-4o"]}`, &key); code != 200 || key.Key == "" {
		t.Fatalf("/key/generate models [openai/gpt-4o]: %d", code)
	}
	if code, body := chatAs(t, base, key.Key, "openai/gpt-4o"); code != 200 || body != "from own" {
		t.Errorf("the key's chat openai/gpt-4o: %d %q", code, body)
	}
	if code, _ := chatAs(t, base, master, "openai/gpt-4.1"); code != 400 {
		t.Errorf("chat openai/gpt-4.1: %d, want 400 (the config does not name it)", code)
	}
	if n := env.total(); n != 0 {
		t.Errorf("the environment's openai (OPENAI_BASE_URL) got %d calls, want none", n)
	}
	cancel()
	<-done
}
