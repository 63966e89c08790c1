package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeDeploymentPricesReachModelSelect: as serve wires it, model selection with
// tradeoff cost prices a deployment added by POST /model/new by its own prices at once, and
// no longer after POST /model/delete.
func TestServeDeploymentPricesReachModelSelect(t *testing.T) {
	t.Setenv("SWITCHYARD_API_KEYS", "k")
	ctx, cancel := context.WithCancel(context.Background())
	addr, _, _, done := startServeWith(t, ctx, filepath.Join(t.TempDir(), "data"))
	defer func() { cancel(); <-done }()
	base := "http://" + addr
	pick := func() string {
		t.Helper()
		var out map[string]any
		body := `{"messages":[{"role":"user","content":"Summarize the plot of Hamlet."}],` +
			`"llm_providers":[{"provider":"openai","model":"gpt-4o"},{"provider":"openai","model":"house-model-7x"}],"tradeoff":"cost","tradeoff_tolerance":1}`
		if code := doJSON(t, "POST", base+"/api/v1/model-select", "application/json", strings.NewReader(body), &out); code != 200 {
			t.Fatalf("model-select: %d", code)
		}
		label, _ := out["llm_label"].(string)
		return label
	}
	if got := pick(); got != "openai/gpt-4o" {
		t.Fatalf("before the deployment: picked %q, want openai/gpt-4o", got)
	}
	var out map[string]any
	if code := doJSON(t, "POST", base+"/model/new", "application/json", strings.NewReader(
		`{"model_name":"house","litellm_params":{"model":"openai/house-model-7x","input_cost_per_token":0.0000001,"output_cost_per_token":0.0000003},"model_info":{"id":"house-1"}}`), &out); code != 200 {
		t.Fatalf("/model/new: %d %v", code, out)
	}
	if got := pick(); got != "openai/house-model-7x" {
		t.Errorf("after /model/new at $0.1/$0.3 per 1M: picked %q, want openai/house-model-7x", got)
	}
	if code := doJSON(t, "POST", base+"/model/delete", "application/json", strings.NewReader(`{"id":"house-1"}`), &out); code != 200 {
		t.Fatalf("/model/delete: %d %v", code, out)
	}
	if got := pick(); got != "openai/gpt-4o" {
		t.Errorf("after /model/delete: picked %q, want openai/gpt-4o", got)
	}
}
