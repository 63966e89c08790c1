package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestServeLiteLLMSpendCalculate: under --litellm-config, /spend/calculate prices a model
// group as the gateway bills it — the group's deployment with a price of its own
// (input_cost_per_token, output_cost_per_token) although another deployment comes first, an
// Azure deployment at its base_model's rates — and holds a pasted answer's model to the
// key's models as the gateway's requests are held: a dated gpt-4o-2024-08-06 is what a
// request for the key's gpt-4o is answered as, gpt-4o-mini-2024-07-18 is not; a model
// given with the answer is checked as a request naming it.
func TestServeLiteLLMSpendCalculate(t *testing.T) {
	_, aURL := newScripted(t, "a", false)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o}
  - model_name: mixed
    litellm_params: {model: openai/gpt-4o-mini}
  - model_name: mixed
    litellm_params: {model: openai/gpt-4o-mini, api_base: %[1]q, api_key: key-a, input_cost_per_token: 0.001, output_cost_per_token: 0.002}
  - model_name: az
    litellm_params: {model: azure/my-deploy, api_base: https://res.openai.azure.com, api_key: key-az, api_version: 2024-10-21}
    model_info: {base_model: azure/gpt-4o}
general_settings:
  master_key: sk-served-master-0123456789
`, aURL)), 0o600)
	t.Setenv("OPENAI_API_KEY", "sk-env")
	t.Setenv("SWITCHYARD_API_KEYS", "")
	t.Setenv("SWITCHYARD_LITELLM_CONFIG", cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _, _, done := startServeWith(t, ctx, filepath.Join(dir, "data"))
	base := "http://" + addr
	const master = "sk-served-master-0123456789"
	calc := func(key, body string) (int, float64) {
		t.Helper()
		var out struct {
			Cost float64 `json:"cost"`
		}
		code := postJSON(t, base+"/spend/calculate", key, body, &out)
		return code, out.Cost
	}
	usage := `"usage":{"prompt_tokens":1000,"completion_tokens":200}`
	near := func(what string, got, want float64) {
		t.Helper()
		if want <= 0 || math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: cost %v, want %v", what, got, want)
		}
	}
	cat := providers.DefaultCatalog()
	azure, ok := cat.Lookup("azure/gpt-4o")
	dated, ok2 := cat.Lookup("gpt-4o-2024-08-06")
	if !ok || !ok2 || azure.InputPerToken == 0 || dated.InputPerToken == 0 {
		t.Fatalf("catalogue: azure/gpt-4o %+v, gpt-4o-2024-08-06 %+v", azure, dated)
	}
	code, cost := calc(master, `{"model":"mixed","completion_response":{"model":"gpt-4o-mini-2024-07-18",`+usage+`}}`)
	if code != 200 {
		t.Fatalf("mixed: %d", code)
	}
	near("mixed (its deployment's own price)", cost, 1000*0.001+200*0.002)
	code, cost = calc(master, `{"model":"az","completion_response":{"model":"my-deploy",`+usage+`}}`)
	if code != 200 {
		t.Fatalf("az: %d", code)
	}
	near("az (its base model's rates)", cost, 1000*azure.InputPerToken+200*azure.OutputPerToken)
	// A prompt's cost: its tokens at the rate the group is billed at.
	for group, rate := range map[string]float64{"mixed": 0.001, "az": azure.InputPerToken} {
		code, cost = calc(master, `{"model":"`+group+`","messages":[{"role":"user","content":"hi"}]}`)
		if n := cost / rate; code != 200 || n < 1 || math.Abs(n-math.Round(n)) > 1e-6 {
			t.Errorf("%s messages: %d cost %v, want whole prompt tokens at %g", group, code, cost, rate)
		}
	}

	var key struct {
		Key string `json:"key"`
	}
	if code := postJSON(t, base+"/key/generate", master, `{"models":["gpt-4o"]}`, &key); code != 200 || key.Key == "" {
		t.Fatalf("/key/generate: %d", code)
	}
	code, cost = calc(key.Key, `{"completion_response":{"model":"gpt-4o-2024-08-06",`+usage+`}}`)
	if code != 200 {
		t.Fatalf("the key's gpt-4o-2024-08-06 answer: %d, want 200 (its gpt-4o is answered so)", code)
	}
	near("gpt-4o-2024-08-06", cost, 1000*dated.InputPerToken+200*dated.OutputPerToken)
	for _, body := range []string{
		`{"completion_response":{"model":"gpt-4o-mini-2024-07-18",` + usage + `}}`,
		`{"model":"mixed","completion_response":{"model":"gpt-4o-2024-08-06",` + usage + `}}`,
	} {
		var e json.RawMessage
		// LiteLLM's 401 key_model_access_denied, as its routes answer a model outside the key's.
		if code := postJSON(t, base+"/spend/calculate", key.Key, body, &e); code != 401 || !strings.Contains(string(e), "key_model_access_denied") {
			t.Errorf("the key's %s: %d %s, want 401 key_model_access_denied", body, code, e)
		}
	}
	cancel()
	<-done
}
