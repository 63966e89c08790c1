package litellmconfig

import (
	"slices"
	"strings"
	"testing"
)

// LiteLLM's proxy resolves os.environ/ in every litellm_params value and its pydantic types
// take numbers written as strings: rpm: "600", weight: os.environ/EU_WEIGHT and
// model: os.environ/DEPLOYMENT are accepted there, so they must be here.
func TestReview25aNumericParamsAsStringsAndFromEnv(t *testing.T) {
	c, err := Parse([]byte(`
model_list:
  - model_name: m
    litellm_params: {model: openai/gpt-4o, rpm: "600"}
  - model_name: m
    litellm_params: {model: os.environ/SECOND_MODEL, rpm: os.environ/SECOND_RPM}
  - model_name: w
    litellm_params: {model: openai/gpt-4o, weight: " 2.5 "}
  - model_name: w
    litellm_params: {model: anthropic/claude-sonnet-4-5, weight: 1}
`), env(map[string]string{"SECOND_MODEL": "gemini/gemini-2.0-flash", "SECOND_RPM": "200"}))
	if err != nil {
		t.Fatal(err)
	}
	if g := c.ModelGroups["m"]; !slices.Equal(g.Models, []string{"openai/gpt-4o", "gemini/gemini-2.0-flash"}) || !slices.Equal(g.Weights, []float64{600, 200}) {
		t.Errorf("group m %+v: want rpm 600 and 200 as shares", g)
	}
	if g := c.ModelGroups["w"]; !slices.Equal(g.Weights, []float64{2.5, 1}) {
		t.Errorf("group w %+v", g)
	}
	// Still refused: text that is no number, an unset variable, a negative share (named
	// at the deployment, not as a group's weights[i]).
	for doc, want := range map[string]string{
		`model_list: [{model_name: a, litellm_params: {model: openai/x, rpm: lots}}]`:                                                      `model_list[0].litellm_params.rpm: must be a number, got the string "lots"`,
		`model_list: [{model_name: a, litellm_params: {model: openai/x, rpm: os.environ/NO_RPM}}]`:                                         `model_list[0].litellm_params.rpm: the environment variable "NO_RPM"`,
		`model_list: [{model_name: a, litellm_params: {model: openai/x, tpm: "1e999"}}]`:                                                   `model_list[0].litellm_params.tpm: must be a number`,
		`model_list: [{model_name: a, litellm_params: {model: openai/x}}, {model_name: a, litellm_params: {model: openai/y, weight: -1}}]`: `model_list[1].litellm_params.weight: must be 0 or more, got -1`,
	} {
		_, err := Parse([]byte(doc), env(nil))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n  got %v\n  want an error containing %q", doc, err, want)
		}
	}
}
