package litellmconfig

import (
	"strings"
	"testing"
)

// router_settings.cooldown_time: 0 is a valid LiteLLM setting (its router reads it as its
// default, `cooldown_time or DEFAULT_COOLDOWN_TIME_SECONDS`): the config still loads, the
// breaker cooldown is left as it is (unset), with a warning, and allowed_fails beside it
// still holds.
func TestReview26hCooldownTimeZero(t *testing.T) {
	cfg, err := Parse([]byte("model_list: [{model_name: m, litellm_params: {model: openai/gpt-4o}}]\nrouter_settings: {cooldown_time: 0, allowed_fails: 1}\n"), env(nil))
	if err != nil {
		t.Fatalf("cooldown_time 0 refused: %v", err)
	}
	if cfg.Breaker.Cooldown != 0 || cfg.Breaker.Failures != 2 {
		t.Errorf("breaker %+v, want no cooldown set and 2 failures", cfg.Breaker)
	}
	if !strings.Contains(strings.Join(cfg.Warnings, "\n"), "router_settings.cooldown_time 0") {
		t.Errorf("no warning for cooldown_time 0: %q", cfg.Warnings)
	}
}
