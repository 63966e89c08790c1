package server

import (
	"testing"
	"time"
)

// TestReview23fHealthModelByUpstreamModel: ?model= names deployments as LiteLLM's does — by
// model name, else by the provider/model they call (litellm_params.model) — so a model
// group's member the catalogue does not list under its own name is checked, not answered
// with empty lists as if it did not exist.
func TestReview23fHealthModelByUpstreamModel(t *testing.T) {
	s, _ := modelInfoServer(t, &hangingUpstream{}, func(c *Config) { c.ModelHealthTimeout = 5 * time.Second })
	h := healthOf(t, do(t, s, "GET", "/health?model=up/down", testKey, ""))
	if h.UnhealthyCount != 1 || h.HealthyCount != 0 || h.Unhealthy[0]["model"] != "up/down" || h.Unhealthy[0]["model_name"] != "grp" {
		t.Errorf("model=up/down: %+v, want grp's member up/down checked (and unhealthy)", h)
	}
	// A model name still wins: grp is not matched by its members' names.
	h = healthOf(t, do(t, s, "GET", "/health?model=grp", testKey, ""))
	if h.HealthyCount+h.UnhealthyCount != 2 {
		t.Errorf("model=grp: %+v", h)
	}
	h = healthOf(t, do(t, s, "GET", "/health?model=nosuch/model", testKey, ""))
	if h.HealthyCount+h.UnhealthyCount != 0 {
		t.Errorf("model=nosuch/model: %+v", h)
	}
}
