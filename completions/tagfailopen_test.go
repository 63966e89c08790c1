package completions

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestTagFailOpen: with TagFailOpen a request whose marks leave no member goes to the
// "default" members instead of failing (LiteLLM's allow_fail_open), keeping the marks its
// key or team gave it, and not when an invented "&tag" is what emptied its members.
func TestTagFailOpen(t *testing.T) {
	grp := ModelGroup{
		Models:       []string{"eu-free", "us-free", "eu-paid", "dflt"},
		Tags:         [][]string{{"free", "eu"}, {"free", "us"}, {"paid", "eu"}, {"default", "us"}},
		TagFiltering: true,
		TagFailOpen:  true,
	}
	for _, c := range []struct {
		tags, inherited []string
		want            []string // nil: refused
	}{
		{[]string{"!us"}, nil, []string{"dflt"}},                                  // refused without TagFailOpen
		{[]string{"paid", "!eu"}, nil, []string{"dflt"}},                          // plain tag known, left out
		{[]string{"&nobody"}, nil, []string{"dflt"}},                              // every & invented: nothing hidden
		{[]string{"&eu", "&nobody"}, nil, nil},                                    // the invented one hides eu-*
		{[]string{"!us"}, []string{"!us"}, []string{"eu-free", "eu-paid"}},        // the key's ban holds
		{[]string{"&paid", "&us"}, []string{"&us"}, []string{"dflt"}},             // the key's &us holds, the caller's &paid dropped
		{[]string{"&eu", "!eu"}, []string{"&eu", "!eu"}, nil},                     // the key's own marks select none
		{[]string{"free", "!us"}, nil, []string{"eu-free"}},                       // selected as before: no fail-open
		{[]string{"&eu"}, nil, []string{"eu-free", "eu-paid"}},                    // as before
		{[]string{"other", "!eu"}, []string{"other"}, []string{"dflt"}},           // as before: unknown tag, the defaults
		{[]string{"&paid", "!eu"}, []string{"paid"}, []string{"dflt"}},            // a plain inherited tag protects no mark
		{[]string{"&eu", "&paid", "!eu"}, []string{"&paid"}, []string{"eu-paid"}}, // only &paid kept: eu-paid, no default
	} {
		got, ok := grp.tagMembers(tagAsk{tags: c.tags, inherited: c.inherited})
		if c.want == nil {
			if ok {
				t.Errorf("tags %v (key's %v): members %v, want refused", c.tags, c.inherited, got)
			}
			continue
		}
		if !ok || !slices.Equal(got, c.want) {
			t.Errorf("tags %v (key's %v): members %v (%v), want %v", c.tags, c.inherited, got, ok, c.want)
		}
	}
	grp.TagFailOpen = false
	if got, ok := grp.tagMembers(tagAsk{tags: []string{"!us"}}); ok {
		t.Errorf("without TagFailOpen, !us: %v, want refused", got)
	}
}

// TestTagRoutePrefix: tags starting with TagRoutePrefix are matched without it (LiteLLM's
// tag_routing_prefix) and count as known: an unmatched plain one is refused rather than
// sent to the "default" members, and an "&" one does not stop TagFailOpen.
func TestTagRoutePrefix(t *testing.T) {
	grp := ModelGroup{
		Models:         []string{"eu-free", "us-free", "eu-paid", "dflt"},
		Tags:           [][]string{{"free", "eu"}, {"free", "us"}, {"paid", "eu"}, {"default", "us"}},
		TagFiltering:   true,
		TagRoutePrefix: "route:",
	}
	for _, c := range []struct {
		tags []string
		open bool
		want []string // nil: refused
	}{
		{[]string{"route:!us", "feature:demo"}, false, nil}, // !us leaves no default for the unknown plain tag
		{[]string{"route:&eu"}, false, []string{"eu-free", "eu-paid"}},
		{[]string{"route:paid", "feature:demo"}, false, []string{"eu-paid"}},
		{[]string{"route:other", "!eu"}, false, nil},               // a directive asked for members none carries
		{[]string{"other", "!eu"}, false, []string{"dflt"}},        // unprefixed: unknown, the defaults
		{[]string{"&eu", "&nobody"}, true, nil},                    // invented & hides eu-*
		{[]string{"&eu", "route:&nobody"}, true, []string{"dflt"}}, // declared: fail open
		{[]string{"route:!free", "route:!paid"}, false, []string{"dflt"}},
	} {
		grp.TagFailOpen = c.open
		got, ok := grp.tagMembers(tagAsk{tags: c.tags})
		if c.want == nil {
			if ok {
				t.Errorf("tags %v (fail open %v): members %v, want refused", c.tags, c.open, got)
			}
			continue
		}
		if !ok || !slices.Equal(got, c.want) {
			t.Errorf("tags %v (fail open %v): members %v (%v), want %v", c.tags, c.open, got, ok, c.want)
		}
	}
	// Without a prefix configured, "route:!us" is one plain tag no member carries.
	grp.TagRoutePrefix, grp.TagFailOpen = "", false
	if got, ok := grp.tagMembers(tagAsk{tags: []string{"route:!us"}}); !ok || !slices.Equal(got, []string{"dflt"}) {
		t.Errorf("no prefix, route:!us: %v %v, want [dflt]", got, ok)
	}

	for _, good := range []string{"route:!provider:openai", "route:&x", "a:b", "!a:&b"} {
		if err := CheckTags("tags", []string{good}); err != nil {
			t.Errorf("CheckTags(%q): %v", good, err)
		}
	}
	for _, bad := range []string{"route:!", "route:!!x", "a!b", "route:&!x"} {
		if CheckTags("tags", []string{bad}) == nil {
			t.Errorf("CheckTags(%q) = nil, want refused", bad)
		}
	}
	if err := CheckDeploymentTags("tags", []string{"a:!b"}); err == nil {
		t.Error("CheckDeploymentTags(a:!b) = nil, want refused")
	}
	for _, good := range []string{"", "route:", "r/1:"} {
		if err := CheckTagRoutePrefix(good); err != nil {
			t.Errorf("CheckTagRoutePrefix(%q): %v", good, err)
		}
	}
	for _, bad := range []string{":", "route", "ro ute:", "r!:", "r:x:extra-long-prefix-of-more-than-32:"} {
		if CheckTagRoutePrefix(bad) == nil {
			t.Errorf("CheckTagRoutePrefix(%q) = nil, want refused", bad)
		}
	}
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "a", BaseURL: "http://127.0.0.1:1", KeyOptional: true}))
	for name, g := range map[string]ModelGroup{
		"fail open without filtering": {Models: []string{"a/m"}, TagFailOpen: true},
		"prefix without filtering":    {Models: []string{"a/m"}, TagRoutePrefix: "route:"},
		"bad prefix":                  {Models: []string{"a/m"}, TagFiltering: true, TagRoutePrefix: "route"},
	} {
		if _, err := New(Options{Providers: reg, ModelGroups: map[string]ModelGroup{"g": g}}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

// TestTagFailOpenThroughGateway: Scope.InheritedTags reaches the group's fail-open: the
// caller's own ban is dropped, the key's is kept.
func TestTagFailOpenThroughGateway(t *testing.T) {
	g, ups := tagGateway(t, ModelGroup{
		Models:       []string{"free/m", "paid/m"},
		Tags:         [][]string{{"tier:free", "default"}, {"tier:paid"}},
		TagFiltering: true,
		TagFailOpen:  true,
	}, "free", "paid")
	ask := `{"model":"gpt","tags":["!tier:free","!tier:paid"],"messages":[{"role":"user","content":"hi"}]}`
	resp, err := g.Complete(context.Background(), Scope{}, chatRequest(t, ask))
	if err != nil || resp.Text() != "free" {
		t.Fatalf("caller's bans, fail open: %v %v, want the default member (free)", resp, err)
	}
	resp, err = g.Complete(context.Background(), Scope{InheritedTags: []string{"!tier:free"}}, chatRequest(t, ask))
	if err != nil || resp.Text() != "paid" {
		t.Fatalf("the key's ban of the default member kept, the caller's of paid dropped: %v %v, want paid", resp, err)
	}
	_, err = g.Complete(context.Background(), Scope{InheritedTags: []string{"!tier:free", "!tier:paid"}}, chatRequest(t, ask))
	var te *TagRoutingError
	if !errors.As(err, &te) {
		t.Fatalf("the key's bans of every member: %v, want a TagRoutingError", err)
	}
	if n := ups["free"].calls.Load(); n != 1 {
		t.Errorf("free called %d times, want 1", n)
	}
}
