package litellmconfig

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// A deployment's rpm, tpm and max_parallel_requests become its member's limits (and rpm
// still its share); deployments of one member add theirs up; an alias keeps the limits;
// 0 and a name with '/' are warned about.
func TestDeploymentLimitsBecomeMemberLimits(t *testing.T) {
	c, err := Parse([]byte(`
model_list:
  - {model_name: gpt-4o, litellm_params: {model: openai/gpt-4o, rpm: 60, tpm: "100000", max_parallel_requests: 4}}
  - {model_name: gpt-4o, litellm_params: {model: openrouter/openai/gpt-4o, rpm: 30}}
  - {model_name: gpt-4o, litellm_params: {model: openrouter/openai/gpt-4o, rpm: 10.7}}
  - {model_name: mini, litellm_params: {model: openai/gpt-4o-mini}}
  - {model_name: zero, litellm_params: {model: groq/llama, rpm: 0}}
  - {model_name: openai/o1, litellm_params: {model: openai/o1, rpm: 5}}
router_settings: {model_group_alias: {smart: gpt-4o}}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	g := c.ModelGroups["gpt-4o"]
	want := []completions.MemberLimits{{RPM: 60, TPM: 100000, MaxParallel: 4}, {RPM: 40}}
	if !slices.Equal(g.Limits, want) || !slices.Equal(g.Weights, []float64{60, 40.7}) {
		t.Errorf("gpt-4o group %+v: want limits %+v and rpm shares", g, want)
	}
	if !slices.Equal(c.ModelGroups["smart"].Limits, want) {
		t.Errorf("alias smart %+v: want gpt-4o's limits", c.ModelGroups["smart"])
	}
	if l := c.ModelGroups["mini"].Limits; l != nil {
		t.Errorf("mini limits %+v: want none (unchanged)", l)
	}
	if l := c.ModelGroups["zero"].Limits; l != nil {
		t.Errorf("zero limits %+v: rpm 0 is no bound", l)
	}
	w := strings.Join(c.Warnings, "\n")
	for _, s := range []string{"model_list[4].litellm_params.rpm: 0 is no limit here", "model_list[5].litellm_params: rpm, tpm and max_parallel_requests are not limits of a model_name with '/'"} {
		if !strings.Contains(w, s) {
			t.Errorf("warnings %q lack %q", w, s)
		}
	}
	if strings.Contains(w, "max_parallel_requests (") || strings.Contains(w, "[*].litellm_params.max_parallel_requests") {
		t.Errorf("warnings %q: max_parallel_requests is taken, not ignored", w)
	}
	// What the importer makes, the gateway takes.
	if _, err := completions.ParseModelGroups(mustJSON(t, c.ModelGroups)); err != nil {
		t.Fatalf("the groups do not validate: %v", err)
	}
	if _, err := Parse([]byte(`model_list: [{model_name: a, litellm_params: {model: openai/x, max_parallel_requests: -1}}]`), env(nil)); err == nil ||
		!strings.Contains(err.Error(), "model_list[0].litellm_params.max_parallel_requests: must be 0 or more") {
		t.Errorf("negative max_parallel_requests: %v", err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
