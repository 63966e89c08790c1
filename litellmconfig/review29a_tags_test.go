package litellmconfig

import (
	"slices"
	"testing"
)

// TestReview29aAliasOfTaggedDeployment: a model_group_alias naming a deployment that is no
// model group (its model_name has '/') becomes a group of that deployment, filtered by tags
// like every group once enable_tag_filtering is on: it carries the deployment's tags, so a
// request tagged free reaches the deployment tagged free through the alias (it had none,
// and such a request was refused as no member's tags fitting it).
func TestReview29aAliasOfTaggedDeployment(t *testing.T) {
	c, err := Parse([]byte(`
model_list:
  - model_name: gpt-4
    litellm_params: {model: openai/gpt-4o, api_key: k, tags: ["paid"]}
  - model_name: openai/gpt-4o-mini
    litellm_params: {model: openai/gpt-4o-mini, api_base: "https://mini.example/v1", api_key: k, tags: ["free", "default"]}
router_settings:
  enable_tag_filtering: true
  model_group_alias: {"mini": "openai/gpt-4o-mini", "g4": "gpt-4"}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	mini := c.ModelGroups["mini"]
	if !mini.TagFiltering || len(mini.Models) != 1 || len(mini.Tags) != 1 || !slices.Equal(mini.Tags[0], []string{"free", "default"}) {
		t.Errorf("alias mini %+v: want its deployment with the tags free and default, filtered", mini)
	}
	if g4 := c.ModelGroups["g4"]; !g4.TagFiltering || len(g4.Tags) != 1 || !slices.Equal(g4.Tags[0], []string{"paid"}) {
		t.Errorf("alias g4 %+v: want gpt-4's member with its tag paid, filtered", g4)
	}
}
