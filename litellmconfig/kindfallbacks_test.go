package litellmconfig

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// context_window_fallbacks and content_policy_fallbacks, in router_settings or
// litellm_settings (LiteLLM reads both), become the groups' ContextWindowFallbacks and
// ContentPolicyFallbacks, with "*" for every group without its own and aliases keeping
// their group's; they are no longer reported as ignored.
func TestKindFallbacks(t *testing.T) {
	const model = `
model_list:
  - model_name: gpt-3.5-turbo
    litellm_params: {model: openai/gpt-3.5-turbo}
  - model_name: gpt-3.5-turbo-16k
    litellm_params: {model: openai/gpt-3.5-turbo-16k}
  - model_name: claude
    litellm_params: {model: anthropic/claude-sonnet-4-5}
  - model_name: gemini
    litellm_params: {model: gemini/gemini-2.0-flash}
`
	for _, c := range []struct {
		name, settings string
		want           map[string][2][]string // group: context window, content policy
	}{
		{name: "router_settings",
			settings: `
router_settings:
  fallbacks: [{"gpt-3.5-turbo": ["gemini"]}]
  context_window_fallbacks: [{"gpt-3.5-turbo": ["gpt-3.5-turbo-16k"]}]
  content_policy_fallbacks: [{"gpt-3.5-turbo": ["claude"]}, {"gemini": ["claude", "gpt-3.5-turbo"]}]
`,
			want: map[string][2][]string{"gpt-3.5-turbo": {{"gpt-3.5-turbo-16k"}, {"claude"}}, "gemini": {nil, {"claude", "gpt-3.5-turbo"}}}},
		{name: "litellm_settings",
			settings: `
litellm_settings:
  context_window_fallbacks: [{"gpt-3.5-turbo": ["gpt-3.5-turbo-16k", "claude"]}]
  content_policy_fallbacks: [{"claude": ["gpt-3.5-turbo"]}]
`,
			want: map[string][2][]string{"gpt-3.5-turbo": {{"gpt-3.5-turbo-16k", "claude"}, nil}, "claude": {nil, {"gpt-3.5-turbo"}}}},
		{name: "both sections add up, a star for the rest, an alias keeps its group's",
			settings: `
router_settings:
  model_group_alias: {"turbo": "gpt-3.5-turbo"}
  context_window_fallbacks: [{"gpt-3.5-turbo": ["gpt-3.5-turbo-16k"]}]
litellm_settings:
  context_window_fallbacks: [{"gpt-3.5-turbo": ["claude"]}, {"*": ["gemini"]}]
`,
			want: map[string][2][]string{"gpt-3.5-turbo": {{"gpt-3.5-turbo-16k", "claude"}, nil}, "turbo": {{"gpt-3.5-turbo-16k", "claude"}, nil},
				"gpt-3.5-turbo-16k": {{"gemini"}, nil}, "claude": {{"gemini"}, nil}, "gemini": {nil, nil}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte(model+c.settings), env(nil))
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range c.want {
				g := cfg.ModelGroups[name]
				if !slices.Equal(g.ContextWindowFallbacks, want[0]) || !slices.Equal(g.ContentPolicyFallbacks, want[1]) {
					t.Errorf("group %s: context window %v, content policy %v; want %v, %v", name, g.ContextWindowFallbacks, g.ContentPolicyFallbacks, want[0], want[1])
				}
			}
			if w := strings.Join(cfg.Warnings, "\n"); strings.Contains(w, "context_window_fallbacks") || strings.Contains(w, "content_policy_fallbacks") {
				t.Errorf("warnings %q still name them", w)
			}
		})
	}
	// The plain fallbacks are kept beside them.
	cfg, err := Parse([]byte(model+`
router_settings:
  fallbacks: [{"gpt-3.5-turbo": ["gemini"]}]
  context_window_fallbacks: [{"gpt-3.5-turbo": ["gpt-3.5-turbo-16k"]}]
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if g := cfg.ModelGroups["gpt-3.5-turbo"]; !slices.Equal(g.Fallbacks, []string{"gemini"}) {
		t.Errorf("plain fallbacks %v", g.Fallbacks)
	}
	for doc, want := range map[string]string{
		`context_window_fallbacks: {"gpt-3.5-turbo": ["claude"]}`:          `router_settings.context_window_fallbacks: must be a list of maps`,
		`content_policy_fallbacks: [{"gpt-3.5-turbo": ["nowhere"]}]`:       `router_settings.content_policy_fallbacks[0].gpt-3.5-turbo[0]: "nowhere" is not a model_name`,
		`content_policy_fallbacks: [{"gpt-3.5-turbo": "claude"}]`:          `router_settings.content_policy_fallbacks[0].gpt-3.5-turbo: must be a list of model_names`,
		`context_window_fallbacks: [{"gpt-3.5-turbo": ["gpt-3.5-turbo"]}]`: `context_window_fallbacks[0]: names the group itself`,
	} {
		_, err := Parse([]byte(model+"router_settings:\n  "+doc+"\n"), env(nil))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n  got %v\n  want an error containing %q", doc, err, want)
		}
	}
}

// A deployment's timeout and stream_timeout (seconds: a number, text, os.environ/NAME)
// become its member's MemberTimeouts, parallel to the group's Models, and are no longer
// reported as ignored.
func TestDeploymentTimeouts(t *testing.T) {
	cfg, err := Parse([]byte(`
model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, timeout: 300, stream_timeout: 30}
  - model_name: gpt-4o
    litellm_params: {model: anthropic/claude-sonnet-4-5, timeout: "12.5"}
  - model_name: gpt-4o
    litellm_params: {model: gemini/gemini-2.0-flash}
  - model_name: slow
    litellm_params: {model: openai/o3, stream_timeout: os.environ/O3_FIRST_CHUNK}
  - model_name: none
    litellm_params: {model: openai/gpt-4o-mini}
`), env(map[string]string{"O3_FIRST_CHUNK": "7.5"}))
	if err != nil {
		t.Fatal(err)
	}
	if g := cfg.ModelGroups["gpt-4o"]; !slices.Equal(g.Timeouts, []completions.MemberTimeouts{{Timeout: 300, StreamTimeout: 30}, {Timeout: 12.5}, {}}) {
		t.Errorf("gpt-4o timeouts %+v", g.Timeouts)
	}
	if g := cfg.ModelGroups["slow"]; !slices.Equal(g.Timeouts, []completions.MemberTimeouts{{StreamTimeout: 7.5}}) {
		t.Errorf("slow timeouts %+v", g.Timeouts)
	}
	if g := cfg.ModelGroups["none"]; g.Timeouts != nil {
		t.Errorf("none: timeouts %+v, want none", g.Timeouts)
	}
	if w := strings.Join(cfg.Warnings, "\n"); strings.Contains(w, "timeout") {
		t.Errorf("warnings %q still name the timeouts", w)
	}
	// The same upstream in two model_names: the longest of the timeouts set, none where a
	// deployment sets none, with a warning; the groups then agree.
	cfg, err = Parse([]byte(`
model_list:
  - model_name: a
    litellm_params: {model: openai/gpt-4o, timeout: 10, stream_timeout: 5}
  - model_name: b
    litellm_params: {model: openai/gpt-4o, timeout: 20}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := []completions.MemberTimeouts{{Timeout: 20}}
	if !slices.Equal(cfg.ModelGroups["a"].Timeouts, want) || !slices.Equal(cfg.ModelGroups["b"].Timeouts, want) {
		t.Errorf("timeouts %+v, %+v; want %+v for both", cfg.ModelGroups["a"].Timeouts, cfg.ModelGroups["b"].Timeouts, want)
	}
	if w := strings.Join(cfg.Warnings, "\n"); !strings.Contains(w, "deployments of openai/gpt-4o (one upstream) set different timeout or stream_timeout") {
		t.Errorf("warnings %q", w)
	}
	for doc, want := range map[string]string{
		`{model: openai/x, timeout: soon}`:              `model_list[0].litellm_params.timeout: must be a number, got the string "soon"`,
		`{model: openai/x, stream_timeout: 0}`:          `model_list[0].litellm_params.stream_timeout: must be seconds, more than 0`,
		`{model: openai/x, timeout: 100000}`:            `model_list[0].litellm_params.timeout: must be seconds, more than 0 and at most a day`,
		`{model: openai/x, timeout: os.environ/NO_SET}`: `model_list[0].litellm_params.timeout: the environment variable "NO_SET"`,
	} {
		_, err := Parse([]byte(`model_list: [{model_name: a, litellm_params: `+doc+`}]`), env(nil))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n  got %v\n  want an error containing %q", doc, err, want)
		}
	}
}

// TestFallbacksEmptyEntryOverStar: a model_name keyed with an empty list ({"claude": []})
// has no fallbacks of that kind, not the "*" ones (nor default_fallbacks), as LiteLLM's
// router finds the model's entry before "*" and has nothing to try; an alias keyed so
// likewise, not its group's.
func TestFallbacksEmptyEntryOverStar(t *testing.T) {
	cfg, err := Parse([]byte(`
model_list:
  - model_name: gpt-3.5-turbo
    litellm_params: {model: openai/gpt-3.5-turbo}
  - model_name: claude
    litellm_params: {model: anthropic/claude-sonnet-4-5}
  - model_name: gemini
    litellm_params: {model: gemini/gemini-2.0-flash}
router_settings:
  model_group_alias: {"turbo": "gpt-3.5-turbo"}
  fallbacks: [{"claude": []}, {"*": ["gemini"]}]
  context_window_fallbacks: [{"claude": []}, {"turbo": []}, {"gpt-3.5-turbo": ["claude"]}, {"*": ["gemini"]}]
litellm_settings:
  default_fallbacks: ["gpt-3.5-turbo"]
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][2][]string{ // plain, context window
		"claude":        {nil, nil},
		"gpt-3.5-turbo": {{"gemini"}, {"claude"}},
		"turbo":         {{"gemini"}, nil},
	} {
		g := cfg.ModelGroups[name]
		if !slices.Equal(g.Fallbacks, want[0]) || !slices.Equal(g.ContextWindowFallbacks, want[1]) {
			t.Errorf("group %s: fallbacks %v, context window %v; want %v, %v", name, g.Fallbacks, g.ContextWindowFallbacks, want[0], want[1])
		}
	}
}

// TestContextWindowFallbacksSetMarksEveryGroup: context_window_fallbacks with any entry
// (in router_settings or litellm_settings) mark every group, those without an entry and
// aliases too, ContextWindowFallbacksSet — LiteLLM's router then re-raises a prompt too
// long for a group without one — while a configuration without them (or with an empty
// list, which LiteLLM's router reads as unset) marks none.
func TestContextWindowFallbacksSetMarksEveryGroup(t *testing.T) {
	const model = `
model_list:
  - model_name: small
    litellm_params: {model: openai/gpt-4o-mini}
  - model_name: big
    litellm_params: {model: openai/gpt-4.1}
  - model_name: other
    litellm_params: {model: anthropic/claude-sonnet-4-5}
`
	for settings, want := range map[string]bool{
		"router_settings:\n  model_group_alias: {\"s\": \"small\"}\n  context_window_fallbacks: [{\"small\": [\"big\"]}]\n":           true,
		"litellm_settings:\n  context_window_fallbacks: [{\"other\": []}]\n":                                                          true,
		"router_settings:\n  model_group_alias: {\"s\": \"small\"}\n  fallbacks: [{\"small\": [\"big\"]}]\n":                          false,
		"router_settings:\n  context_window_fallbacks: []\nlitellm_settings:\n  content_policy_fallbacks: [{\"small\": [\"big\"]}]\n": false,
	} {
		cfg, err := Parse([]byte(model+settings), env(nil))
		if err != nil {
			t.Fatalf("%s: %v", settings, err)
		}
		if cfg.ContextWindowFallbacksSet != want {
			t.Errorf("%s\nConfig.ContextWindowFallbacksSet %v, want %v", settings, cfg.ContextWindowFallbacksSet, want)
		}
		for name, g := range cfg.ModelGroups {
			if g.ContextWindowFallbacksSet != want {
				t.Errorf("%s\ngroup %s: ContextWindowFallbacksSet %v, want %v", settings, name, g.ContextWindowFallbacksSet, want)
			}
		}
		if _, ok := cfg.ModelGroups["s"]; strings.Contains(settings, `"s"`) && !ok {
			t.Errorf("%s: the alias s is no group", settings)
		}
	}
}
