package litellmconfig

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// A deployment named with '/' calling the upstream of a group's member shares that
// member's one count: its limits add to the member's, and without limits it leaves the
// member unbounded. The warnings say which, instead of that its limits are not applied.
func TestSlashNamedDeploymentLimitsWarning(t *testing.T) {
	cfg, err := Parse([]byte(`
model_list:
  - {model_name: fast, litellm_params: {model: openai/gpt-4o, rpm: 30}}
  - {model_name: openai/gpt-4o, litellm_params: {model: openai/gpt-4o, rpm: 20}}
  - {model_name: mini, litellm_params: {model: openai/gpt-4o-mini, rpm: 10}}
  - {model_name: openai/gpt-4o-mini, litellm_params: {model: openai/gpt-4o-mini}}
  - {model_name: openai/o1, litellm_params: {model: openai/o1, rpm: 5}}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.ModelGroups["fast"].Limits, []completions.MemberLimits{{RPM: 50}}; !slices.Equal(got, want) {
		t.Errorf("fast's limits %+v, want %+v (added up with the '/'-named deployment's)", got, want)
	}
	if got := cfg.ModelGroups["mini"].Limits; got != nil {
		t.Errorf("mini's limits %+v, want none (a deployment of its upstream sets none)", got)
	}
	w := strings.Join(cfg.Warnings, "\n")
	for _, s := range []string{
		"model_list[1].litellm_params: rpm, tpm and max_parallel_requests of a model_name with '/' are not its own: they add up with those of openai/gpt-4o in model group fast",
		"model_list[3].litellm_params: sets no rpm, tpm or max_parallel_requests, so openai/gpt-4o-mini in model group mini is not held to the limits",
		"model_list[4].litellm_params: rpm, tpm and max_parallel_requests are not limits of a model_name with '/'",
	} {
		if !strings.Contains(w, s) {
			t.Errorf("warnings %q lack %q", w, s)
		}
	}
	for _, s := range []string{"model_list[1].litellm_params: rpm, tpm and max_parallel_requests are not limits", "model_list[3].litellm_params: rpm"} {
		if strings.Contains(w, s) {
			t.Errorf("warnings %q say %q", w, s)
		}
	}
}
