package litellmconfig

import (
	"strings"
	"testing"
)

// TestPrometheusCallback: "prometheus" in litellm_settings.callbacks, success_callback or
// failure_callback turns on the metrics under LiteLLM's names with no warning of its own;
// the other callbacks named beside it are still warned about; without it they stay off.
func TestPrometheusCallback(t *testing.T) {
	const models = "model_list:\n  - model_name: m\n    litellm_params: {model: openai/gpt-4o}\n"
	for _, tc := range []struct {
		name, settings string
		on             bool
		warn           string
	}{
		{"callbacks", "litellm_settings:\n  callbacks: [\"prometheus\"]\n", true, ""},
		{"success", "litellm_settings:\n  success_callback: [Prometheus]\n  failure_callback: [\"prometheus\"]\n", true, ""},
		{"string", "litellm_settings:\n  callbacks: prometheus\n", true, ""},
		{"beside langfuse", "litellm_settings:\n  callbacks: [\"prometheus\", \"langfuse\"]\n", true, "litellm_settings.callbacks: logging callbacks are not run"},
		{"langfuse only", "litellm_settings:\n  success_callback: [\"langfuse\"]\n", false, "litellm_settings.success_callback: logging callbacks are not run"},
		{"none", "", false, ""},
	} {
		c, err := Parse([]byte(models+tc.settings), env(nil))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.Prometheus != tc.on {
			t.Errorf("%s: Prometheus %v, want %v", tc.name, c.Prometheus, tc.on)
		}
		warn := strings.Join(c.Warnings, "\n")
		if tc.warn == "" && strings.Contains(warn, "callback") || tc.warn != "" && !strings.Contains(warn, tc.warn) {
			t.Errorf("%s: warnings %q, want %q", tc.name, c.Warnings, tc.warn)
		}
	}
}

// TestPrometheusEndUser: litellm_settings.enable_end_user_cost_tracking_prometheus_only sets
// PrometheusEndUser (off without it); not a boolean is an error naming it.
func TestPrometheusEndUser(t *testing.T) {
	const models = "model_list:\n  - model_name: m\n    litellm_params: {model: openai/gpt-4o}\n"
	for settings, want := range map[string]bool{"": false, "litellm_settings:\n  enable_end_user_cost_tracking_prometheus_only: true\n": true,
		"litellm_settings:\n  enable_end_user_cost_tracking_prometheus_only: false\n": false} {
		c, err := Parse([]byte(models+settings), env(nil))
		if err != nil || c.PrometheusEndUser != want {
			t.Errorf("%q: PrometheusEndUser %v %v, want %v", settings, c != nil && c.PrometheusEndUser, err, want)
		}
		if c != nil && strings.Contains(strings.Join(c.Warnings, "\n"), "enable_end_user") {
			t.Errorf("%q: warned about as ignored: %v", settings, c.Warnings)
		}
	}
	if _, err := Parse([]byte(models+"litellm_settings:\n  enable_end_user_cost_tracking_prometheus_only: \"yes\"\n"), env(nil)); err == nil || !strings.Contains(err.Error(), "enable_end_user_cost_tracking_prometheus_only") {
		t.Errorf("a string: %v, want an error naming the key", err)
	}
}
