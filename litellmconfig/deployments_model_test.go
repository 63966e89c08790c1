package litellmconfig

import "testing"

// TestDeploymentModelAsConfigured: Deployment.Model is the entry's litellm_params.model as
// configured — an os.environ/ reference read — while Member names the provider entry of its
// own that an api_base of its own makes.
func TestDeploymentModelAsConfigured(t *testing.T) {
	env := map[string]string{"CHAT_MODEL": "openai/gpt-4o-mini"}
	cfg, err := ParseWith([]byte("model_list:\n  - model_name: chat\n    litellm_params:\n      model: os.environ/CHAT_MODEL\n      api_base: https://llm.example/v1\n      api_key: sk-x\n"), nil,
		func(n string) (string, bool) { v, ok := env[n]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Deployments) != 1 {
		t.Fatalf("deployments %+v", cfg.Deployments)
	}
	d := cfg.Deployments[0]
	if d.Model != "openai/gpt-4o-mini" || d.Member == d.Model {
		t.Errorf("Model %q Member %q: want the model as configured (the variable read) and the provider entry of its own", d.Model, d.Member)
	}
}
