package main

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// An Azure deployment with prices of its own and a model_info.base_model is still the
// base model's family: a reasoning model's (o3-mini) deployment gets a request without the
// sampling settings OpenAI's reasoning models refuse (temperature), as it does without
// prices; and it is priced at its own rates.
func TestReview26hAzureBaseModelKeptWithOwnPrice(t *testing.T) {
	up := &usageUpstream{}
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	const master = "sk-litellm-master-key-for-the-base-test-1"
	base := serveLiteLLMConfig(t, fmt.Sprintf(`
model_list:
  - model_name: reasoner
    litellm_params: {model: azure/prod-o3, api_base: %[1]q, api_key: sk-azure-literal, api_version: "2024-10-21", input_cost_per_token: 0.000003, output_cost_per_token: 0.000006}
    model_info: {base_model: azure/o3-mini}
router_settings: {num_retries: 0}
general_settings: {master_key: sk-litellm-master-key-for-the-base-test-1}
`, srv.URL))
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(`{"model":"reasoner","temperature":0.5,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+master)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	up.mu.Lock()
	bodies := up.bodies
	up.mu.Unlock()
	if len(bodies) != 1 {
		t.Fatalf("upstream called %d times", len(bodies))
	}
	if _, ok := bodies[0]["temperature"]; ok {
		t.Errorf("the o3-mini deployment got temperature (it is not treated as its base model's family): %v", bodies[0])
	}
	if spend, n := spendOf(t, base, master, "reasoner"); n != 1 || math.Abs(spend-(1000*3e-6+500*6e-6)) > 1e-12 {
		t.Errorf("spend %g over %d requests, want its own price", spend, n)
	}
}
