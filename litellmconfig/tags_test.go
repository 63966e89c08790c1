package litellmconfig

import (
	"slices"
	"strings"
	"testing"
)

// TestTagRoutingConfig: litellm_params.tags become the members' tags and
// router_settings.enable_tag_filtering and tag_filtering_match_any the groups' filter, with
// no "not supported" warning for them; deployments of one member carry their tags together.
func TestTagRoutingConfig(t *testing.T) {
	c, err := Parse([]byte(`
model_list:
  - model_name: gpt-4
    litellm_params: {model: openai/fake, api_base: "https://free.example/v1", api_key: k, tags: ["free"]}
  - model_name: gpt-4
    litellm_params: {model: openai/gpt-4o, api_key: k, tags: ["paid", "teamA"]}
  - model_name: gpt-4
    litellm_params: {model: openai/gpt-4o, api_base: "https://dflt.example/v1", api_key: k, tags: ["default"]}
  - model_name: plain
    litellm_params: {model: openai/gpt-4o-mini}
router_settings:
  enable_tag_filtering: true
  tag_filtering_match_any: false
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	g := c.ModelGroups["gpt-4"]
	if len(g.Models) != 3 || len(g.Tags) != 3 || !g.TagFiltering || !g.TagMatchAll {
		t.Fatalf("group %+v: want three members with tags, filtering on, match all", g)
	}
	for i, want := range [][]string{{"free"}, {"paid", "teamA"}, {"default"}} {
		if !slices.Equal(g.Tags[i], want) {
			t.Errorf("member %d (%s) tags %v, want %v", i, g.Models[i], g.Tags[i], want)
		}
	}
	if p := c.ModelGroups["plain"]; !p.TagFiltering || p.Tags != nil {
		t.Errorf("group plain %+v: filtering on (LiteLLM's is router-wide), no tags", p)
	}
	for _, w := range c.Warnings {
		if strings.Contains(w, "tags") || strings.Contains(w, "tag_filtering") {
			t.Errorf("warning %q: tags and tag filtering are supported", w)
		}
	}

	// Filtering off by default (match any when on): tags kept, with a warning that they
	// route nothing.
	c, err = Parse([]byte(`
model_list:
  - model_name: m
    litellm_params: {model: openai/gpt-4o, tags: [free]}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if g := c.ModelGroups["m"]; g.TagFiltering || g.TagMatchAll || !slices.Equal(g.Tags[0], []string{"free"}) {
		t.Errorf("group %+v: tags kept, filtering off", g)
	}
	if !slices.ContainsFunc(c.Warnings, func(w string) bool { return strings.Contains(w, "enable_tag_filtering") }) {
		t.Errorf("warnings %q: want one saying tags route nothing without enable_tag_filtering", c.Warnings)
	}
}

// TestTagRoutingConfigBadTags: bad tags and settings are refused naming their path.
func TestTagRoutingConfigBadTags(t *testing.T) {
	for doc, want := range map[string]string{
		`model_list: [{model_name: a, litellm_params: {model: openai/x, tags: free}}]`:                                            `model_list[0].litellm_params.tags: must be a list of tags, got`,
		`model_list: [{model_name: a, litellm_params: {model: openai/x, tags: [free, 3]}}]`:                                       `model_list[0].litellm_params.tags[1]: must be text`,
		`model_list: [{model_name: a, litellm_params: {model: openai/x, tags: ["two words"]}}]`:                                   `model_list[0].litellm_params.tags: tag 0 "two words" must be 1-64 letters`,
		`model_list: [{model_name: a, litellm_params: {model: openai/x, tags: [""]}}]`:                                            `model_list[0].litellm_params.tags: tag 0 ""`,
		`model_list: [{model_name: a, litellm_params: {model: openai/x, tag_regex: "claude"}}]`:                                   `model_list[0].litellm_params.tag_regex: must be a list of regular expressions`,
		`model_list: [{model_name: a, litellm_params: {model: openai/x, tags: [free, "!paid"]}}]`:                                 `model_list[0].litellm_params.tags: tag 1 "!paid" must not hold '!'`,
		`model_list: [{model_name: a, litellm_params: {model: openai/x, tags: [a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q]}}]`:             `model_list[0].litellm_params.tags: at most 16 tags`,
		"model_list: [{model_name: a, litellm_params: {model: openai/x}}]\nrouter_settings: {enable_tag_filtering: yes please}":   `router_settings.enable_tag_filtering: must be true or false`,
		"model_list: [{model_name: a, litellm_params: {model: openai/x}}]\nrouter_settings: {tag_filtering_match_any: \"false\"}": `router_settings.tag_filtering_match_any: must be true or false`,
	} {
		_, err := Parse([]byte(doc), env(nil))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n  got %v\n  want an error containing %q", doc, err, want)
		}
	}
}

// TestTagRegexConfig: litellm_params.tag_regex becomes the member's TagRegex (the patterns
// of the deployments calling one member together).
func TestTagRegexConfig(t *testing.T) {
	cfg, err := Parse([]byte(`model_list:
  - model_name: gpt
    litellm_params: {model: openai/gpt-4o, tag_regex: ["^User-Agent: claude-cli\\/"]}
  - model_name: gpt
    litellm_params: {model: openai/gpt-4o-mini, tags: [default]}
router_settings: {enable_tag_filtering: true}
`), env(map[string]string{"OPENAI_API_KEY": "sk-x"}))
	if err != nil {
		t.Fatal(err)
	}
	g := cfg.ModelGroups["gpt"]
	if len(g.TagRegex) != 2 || len(g.TagRegex[0]) != 1 || g.TagRegex[0][0] != `^User-Agent: claude-cli\/` || len(g.TagRegex[1]) != 0 || !g.TagFiltering {
		t.Fatalf("group %+v, want the first member's pattern", g)
	}
}

// TestTagFilteringPerGroup: a deployment's model_info.enable_tag_filtering sets its model
// group's filtering over router_settings' (LiteLLM's per-group override), an alias
// following its group; not a boolean, refused naming the path.
func TestTagFilteringPerGroup(t *testing.T) {
	cfg, err := Parse([]byte(`model_list:
  - model_name: tiered
    litellm_params: {model: openai/gpt-4o, tags: [paid]}
    model_info: {enable_tag_filtering: true}
  - model_name: tiered
    litellm_params: {model: openai/gpt-4o-mini, tags: [default]}
  - model_name: open
    litellm_params: {model: openai/gpt-4.1, tags: [x]}
router_settings:
  model_group_alias: {tiers: tiered}
`), env(map[string]string{"OPENAI_API_KEY": "sk"}))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.ModelGroups["tiered"].TagFiltering || !cfg.ModelGroups["tiers"].TagFiltering || cfg.ModelGroups["open"].TagFiltering {
		t.Errorf("filtering: tiered %v, tiers %v, open %v; want true, true, false",
			cfg.ModelGroups["tiered"].TagFiltering, cfg.ModelGroups["tiers"].TagFiltering, cfg.ModelGroups["open"].TagFiltering)
	}
	cfg, err = Parse([]byte(`model_list:
  - model_name: a
    litellm_params: {model: openai/gpt-4o, tags: [paid]}
    model_info: {enable_tag_filtering: false}
  - model_name: b
    litellm_params: {model: openai/gpt-4o-mini, tags: [paid]}
router_settings: {enable_tag_filtering: true}
`), env(map[string]string{"OPENAI_API_KEY": "sk"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ModelGroups["a"].TagFiltering || !cfg.ModelGroups["b"].TagFiltering {
		t.Errorf("a group's false over the router's true: a %v, b %v", cfg.ModelGroups["a"].TagFiltering, cfg.ModelGroups["b"].TagFiltering)
	}
	if _, err := Parse([]byte(`model_list: [{model_name: a, litellm_params: {model: openai/x}, model_info: {enable_tag_filtering: "yes"}}]`), env(map[string]string{"OPENAI_API_KEY": "sk"})); err == nil || !strings.Contains(err.Error(), "model_list[0].model_info.enable_tag_filtering: must be true or false") {
		t.Errorf("a string: %v", err)
	}
}

// TestTagFailOpenConfig: a deployment's model_info.allow_fail_open makes its group fail
// open (LiteLLM checks any one member) and router_settings.tag_routing_prefix reaches every
// filtered group; both warn when tag filtering is off, and bad values name their path.
func TestTagFailOpenConfig(t *testing.T) {
	c, err := Parse([]byte(`
model_list:
  - model_name: chat
    litellm_params: {model: openai/gpt-4o, tags: ["provider:openai", "default"]}
    model_info: {allow_fail_open: true}
  - model_name: chat
    litellm_params: {model: anthropic/claude-3-5-sonnet-20240620, tags: ["provider:anthropic"]}
  - model_name: strict
    litellm_params: {model: openai/gpt-4o-mini, tags: ["provider:openai"]}
router_settings:
  enable_tag_filtering: true
  tag_routing_prefix: "route:"
`), env(map[string]string{"ANTHROPIC_API_KEY": "k"}))
	if err != nil {
		t.Fatal(err)
	}
	if g := c.ModelGroups["chat"]; !g.TagFailOpen || g.TagRoutePrefix != "route:" {
		t.Errorf("chat %+v: want fail open and the prefix", g)
	}
	if g := c.ModelGroups["strict"]; g.TagFailOpen || g.TagRoutePrefix != "route:" {
		t.Errorf("strict %+v: want no fail open, the prefix", g)
	}
	for _, w := range c.Warnings {
		if strings.Contains(w, "allow_fail_open") || strings.Contains(w, "tag_routing_prefix") {
			t.Errorf("warning %q: both are supported", w)
		}
	}

	c, err = Parse([]byte(`
model_list:
  - model_name: chat
    litellm_params: {model: openai/gpt-4o}
    model_info: {allow_fail_open: true}
router_settings: {tag_routing_prefix: "route:"}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if g := c.ModelGroups["chat"]; g.TagFailOpen || g.TagRoutePrefix != "" {
		t.Errorf("filtering off: %+v, want neither set", g)
	}
	warned := strings.Join(c.Warnings, "\n")
	if !strings.Contains(warned, "allow_fail_open") || !strings.Contains(warned, "tag_routing_prefix") {
		t.Errorf("warnings %q: want both named as doing nothing without filtering", warned)
	}

	for cfg, want := range map[string]string{
		"model_list: [{model_name: a, litellm_params: {model: openai/x}, model_info: {allow_fail_open: yes-please}}]":    `model_list[0].model_info.allow_fail_open: must be true or false`,
		"model_list: [{model_name: a, litellm_params: {model: openai/x}}]\nrouter_settings: {tag_routing_prefix: route}": `router_settings.tag_routing_prefix: "route" must be`,
		"model_list: [{model_name: a, litellm_params: {model: openai/x}}]\nrouter_settings: {tag_routing_prefix: 3}":     `router_settings.tag_routing_prefix: must be a string`,
	} {
		_, err := Parse([]byte(cfg), env(nil))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", cfg, err, want)
		}
	}
}
