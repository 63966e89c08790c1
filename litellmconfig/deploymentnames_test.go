package litellmconfig

import (
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestDeploymentNames: Config.DeploymentNames holds what LiteLLM's proxy serves by a
// deployment's name that the gateway calls by another: each litellm_params.model called
// under a provider entry of its own (every deployment giving it, one per member, whatever it is called by), a
// model_name with '/' (its own deployment only, ahead of another's litellm_params.model
// of that name); not a model_name or alias of a group, nor a model every deployment of which
// is called by that very name (a group's member already).
func TestDeploymentNames(t *testing.T) {
	cfg, err := Parse([]byte(`
model_list:
  - model_name: my-gpt
    litellm_params: {model: openai/gpt-4o, api_base: https://a.example/v1, api_key: sk-a}
  - model_name: other-gpt
    litellm_params: {model: openai/gpt-4o, api_base: https://b.example/v1, api_key: sk-b}
  - model_name: plain
    litellm_params: {model: openai/gpt-4o-mini}
  - model_name: plain-own
    litellm_params: {model: openai/gpt-4.1-mini, api_base: https://c.example/v1, api_key: sk-c}
  - model_name: plain-own
    litellm_params: {model: openai/gpt-4.1-mini}
  - model_name: team/x
    litellm_params: {model: openai/o3-mini, api_base: https://a.example/v1, api_key: sk-a}
  - model_name: team/y
    litellm_params: {model: openai/o3-mini, api_base: https://y.example/v1, api_key: sk-y}
  - model_name: reasoner
    litellm_params: {model: openai/o1, api_base: https://z.example/v1, api_key: sk-z}
  - model_name: openai/o1
    litellm_params: {model: openai/o1, api_base: https://a.example/v1, api_key: sk-a}
router_settings:
  model_group_alias: {fast: my-gpt}
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	member := map[string]string{}
	for _, d := range cfg.Deployments {
		if _, seen := member[d.ModelName]; !seen {
			member[d.ModelName] = d.Member
		}
	}
	want := map[string][]completions.NamedDeployment{
		"openai/gpt-4o":  {{ModelName: "my-gpt", Member: member["my-gpt"]}, {ModelName: "other-gpt", Member: member["other-gpt"]}},
		"openai/o3-mini": {{ModelName: "team/x", Member: member["team/x"]}, {ModelName: "team/y", Member: member["team/y"]}},
		"team/x":         {{ModelName: "team/x", Member: member["team/x"]}},
		"team/y":         {{ModelName: "team/y", Member: member["team/y"]}},
		// A model_name is served by its own deployment, not by another's model of that name.
		"openai/o1": {{ModelName: "openai/o1", Member: member["openai/o1"]}},
		// One of its deployments is called by another name: both serve it.
		"openai/gpt-4.1-mini": {{ModelName: "plain-own", Member: member["plain-own"]}, {ModelName: "plain-own", Member: "openai/gpt-4.1-mini"}},
	}
	if len(cfg.DeploymentNames) != len(want) {
		t.Errorf("DeploymentNames %+v, want %+v", cfg.DeploymentNames, want)
	}
	for name, ds := range want {
		got := cfg.DeploymentNames[name]
		if len(got) != len(ds) {
			t.Errorf("%s: %+v, want %+v", name, got, ds)
			continue
		}
		for i := range ds {
			if got[i] != ds[i] || ds[i].Member == "" {
				t.Errorf("%s[%d]: %+v, want %+v (called by another name)", name, i, got[i], ds[i])
			}
		}
	}
	for _, name := range []string{"plain", "fast", "my-gpt", "openai/gpt-4o-mini"} {
		if ds, ok := cfg.DeploymentNames[name]; ok {
			t.Errorf("%s: %+v, want none (a group, an alias, or called by its own name)", name, ds)
		}
	}
}
