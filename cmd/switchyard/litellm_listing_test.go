package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestServeLiteLLMModelListing: with --litellm-config, GET /v1/models lists what the
// config names — its model groups, a model_name with '/', a wildcard deployment's
// provider's catalogued models — not every catalogued model of every keyed provider nor
// the keyless ollama preset's, as LiteLLM lists its model_list; /model/info and
// /v1beta/models agree.
func TestServeLiteLLMModelListing(t *testing.T) {
	_, aURL := newScripted(t, "a", false)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_base: %[1]q, api_key: key-a}
  - model_name: openai/gpt-4o-mini
    litellm_params: {model: openai/gpt-4o-mini}
  - model_name: "anthropic/*"
    litellm_params: {model: "anthropic/*"}
general_settings:
  master_key: sk-listing-master-0123456789
`, aURL)), 0o600)
	t.Setenv("OPENAI_API_KEY", "sk-openai-test")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
	t.Setenv("SWITCHYARD_API_KEYS", "")
	t.Setenv("SWITCHYARD_LITELLM_CONFIG", cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _, _, done := startServeWith(t, ctx, filepath.Join(dir, "data"))
	base := "http://" + addr
	getJSON := func(path string, out any) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer sk-listing-master-0123456789")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		json.NewDecoder(resp.Body).Decode(out)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	getJSON("/v1/models", &list)
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	for _, want := range []string{"gpt-4o", "openai/gpt-4o-mini"} {
		if !slices.Contains(ids, want) {
			t.Errorf("/v1/models %v lacks %s", ids, want)
		}
	}
	anthropic := 0
	for _, id := range ids {
		switch {
		case strings.HasPrefix(id, "ollama/"):
			t.Errorf("/v1/models lists %s: the config names no ollama model", id)
		case strings.HasPrefix(id, "openai/") && id != "openai/gpt-4o-mini":
			t.Errorf("/v1/models lists %s: the config names only openai/gpt-4o-mini of openai's", id)
		case strings.HasPrefix(id, "anthropic/"):
			anthropic++
		}
	}
	if anthropic == 0 {
		t.Errorf("/v1/models %v: want the catalogued anthropic models of the anthropic/* deployment", ids)
	}
	var info struct {
		Data []struct {
			ModelName string `json:"model_name"`
		} `json:"data"`
	}
	getJSON("/model/info", &info)
	for _, d := range info.Data {
		if strings.HasPrefix(d.ModelName, "ollama/") || strings.HasPrefix(d.ModelName, "openai/") && d.ModelName != "openai/gpt-4o-mini" {
			t.Errorf("/model/info lists %s", d.ModelName)
		}
	}
	var gem struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	getJSON("/v1beta/models?pageSize=1000", &gem)
	for _, m := range gem.Models {
		if strings.Contains(m.Name, "ollama/") {
			t.Errorf("/v1beta/models lists %s", m.Name)
		}
	}
	cancel()
	<-done
}
