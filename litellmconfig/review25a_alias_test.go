package litellmconfig

import (
	"slices"
	"testing"
)

// An alias is another name for its model group: a request through it falls back as the
// group does (router_settings.fallbacks keyed on the group's name), not to
// default_fallbacks meant for groups without fallbacks of their own (BerriAI/litellm#10317
// is LiteLLM's bug report of the same surprise). Fallbacks keyed on the alias itself win.
func TestReview25aAliasKeepsItsGroupsFallbacks(t *testing.T) {
	c, err := Parse([]byte(`
model_list:
  - {model_name: gpt-4o, litellm_params: {model: openai/gpt-4o}}
  - {model_name: claude, litellm_params: {model: anthropic/claude-sonnet-4-5}}
  - {model_name: mini, litellm_params: {model: openai/gpt-4o-mini}}
  - {model_name: backup, litellm_params: {model: gemini/gemini-2.0-flash}}
router_settings:
  model_group_alias: {"gpt4": "gpt-4o", "fast": "mini", "own": "gpt-4o"}
  fallbacks: [{"gpt-4o": ["claude"]}, {"own": ["mini"]}]
litellm_settings:
  default_fallbacks: ["backup"]
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{
		"gpt-4o": {"claude"},
		"gpt4":   {"claude"},
		"own":    {"mini"},
		"mini":   {"backup"},
		"fast":   {"backup"},
		"claude": {"backup"},
		"backup": nil,
	} {
		if g := c.ModelGroups[name]; !slices.Equal(g.Fallbacks, want) {
			t.Errorf("%s: fallbacks %q, want %q", name, g.Fallbacks, want)
		}
	}
}
