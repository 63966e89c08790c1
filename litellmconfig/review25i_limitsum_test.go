package litellmconfig

import (
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// Deployments of one member add up their limits only when each sets them: a deployment
// without a limit (or with 0, which is no bound here) sends the member unbounded traffic
// in LiteLLM, so the member is not bounded by its siblings' limits (else a config that
// served every request would now answer 429s).
func TestReview25iUnboundedDeploymentUnboundsItsMember(t *testing.T) {
	c, err := Parse([]byte(`
model_list:
  - {model_name: gpt, litellm_params: {model: openai/gpt-4o, rpm: 10, tpm: 1000, max_parallel_requests: 2}}
  - {model_name: gpt-fast, litellm_params: {model: openai/gpt-4o, tpm: 500}}
  - {model_name: gpt-fast, litellm_params: {model: openai/gpt-4o-mini, rpm: 5}}
  - {model_name: both, litellm_params: {model: groq/llama, rpm: 3}}
  - {model_name: both, litellm_params: {model: groq/llama, rpm: 4}}
  - {model_name: zero, litellm_params: {model: groq/mixtral, rpm: 0}}
  - {model_name: zero2, litellm_params: {model: groq/mixtral, rpm: 7}}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]completions.MemberLimits{
		// openai/gpt-4o: gpt-fast's deployment sets no rpm nor max_parallel_requests; both set tpm.
		"gpt":      {{TPM: 1500}},
		"gpt-fast": {{TPM: 1500}, {RPM: 5}},
		"both":     {{RPM: 7}},
		"zero":     nil, // rpm 0 is no bound here (warned): mixtral is unbounded
		"zero2":    nil,
	} {
		if got := c.ModelGroups[name].Limits; !slices.Equal(got, want) {
			t.Errorf("%s limits %+v, want %+v", name, got, want)
		}
	}
	if _, err := completions.ParseModelGroups(mustJSON(t, c.ModelGroups)); err != nil {
		t.Fatalf("the groups do not validate: %v", err)
	}
}
