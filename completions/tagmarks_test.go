package completions

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestTagMembersMarks: LiteLLM's "!tag" leaves out the members carrying tag and "&tag"
// keeps only those carrying it, before plain tags match; marks alone select among the
// members left (exclusions alone among the "default" members when the group has some).
func TestTagMembersMarks(t *testing.T) {
	grp := ModelGroup{
		Models:       []string{"eu-free", "us-free", "eu-paid", "dflt"},
		Tags:         [][]string{{"free", "eu"}, {"free", "us"}, {"paid", "eu"}, {"default", "us"}},
		TagFiltering: true,
	}
	for _, c := range []struct {
		tags []string
		want []string // nil: refused
	}{
		{[]string{"free", "!us"}, []string{"eu-free"}},
		{[]string{"free", "&eu"}, []string{"eu-free"}},
		{[]string{"&eu"}, []string{"eu-free", "eu-paid"}},
		{[]string{"&eu", "&paid"}, []string{"eu-paid"}},
		{[]string{"!eu"}, []string{"dflt"}},          // exclusions alone: among the defaults
		{[]string{"!us"}, nil},                       // the only default excluded
		{[]string{"paid", "!eu"}, nil},               // the tag asked for is known and left out
		{[]string{"other", "!us"}, nil},              // no default left
		{[]string{"other", "!eu"}, []string{"dflt"}}, // unknown tag: the defaults left
		{[]string{"&nobody"}, nil},
		{[]string{"free"}, []string{"eu-free", "us-free"}}, // unmarked: as before
	} {
		got, ok := grp.tagMembers(tagAsk{tags: c.tags})
		if c.want == nil {
			if ok {
				t.Errorf("tags %v: members %v, want refused", c.tags, got)
			}
			continue
		}
		if !ok || !slices.Equal(got, c.want) {
			t.Errorf("tags %v: members %v (%v), want %v", c.tags, got, ok, c.want)
		}
	}

	// Match all counts the plain tags only.
	grp.TagMatchAll = true
	if got, ok := grp.tagMembers(tagAsk{tags: []string{"free", "eu", "!paid"}}); !ok || !slices.Equal(got, []string{"eu-free"}) {
		t.Errorf("match all: %v %v, want [eu-free]", got, ok)
	}
	// Without a default member, exclusions alone keep every member left.
	nodefault := ModelGroup{Models: []string{"a", "b"}, Tags: [][]string{{"x"}, {"y"}}, TagFiltering: true}
	if got, ok := nodefault.tagMembers(tagAsk{tags: []string{"!x"}}); !ok || !slices.Equal(got, []string{"b"}) {
		t.Errorf("no default, !x: %v %v, want [b]", got, ok)
	}
}

// TestTagMarksThroughGateway: a request's "!tag" reaches the gateway (the request's tags
// accept the marks) and steers it away from the member carrying tag; a deployment's own
// tags may not carry a mark.
func TestTagMarksThroughGateway(t *testing.T) {
	g, ups := tagGateway(t, ModelGroup{
		Models:       []string{"free/m", "paid/m"},
		Tags:         [][]string{{"tier", "free"}, {"tier", "paid"}},
		TagFiltering: true,
	}, "free", "paid")
	for range 10 {
		resp, err := g.Complete(context.Background(), Scope{}, chatRequest(t, `{"model":"gpt","tags":["tier","!free"],"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text() != "paid" {
			t.Fatalf("answered by %q, want paid", resp.Text())
		}
	}
	if n := ups["free"].calls.Load(); n != 0 {
		t.Errorf("the excluded member was called %d times", n)
	}
	_, err := g.Complete(context.Background(), Scope{}, chatRequest(t, `{"model":"gpt","tags":["&gold"],"messages":[{"role":"user","content":"hi"}]}`))
	var te *TagRoutingError
	if !errors.As(err, &te) || !slices.Equal(te.Tags, []string{"&gold"}) {
		t.Errorf("&gold: %v, want a TagRoutingError naming the tag", err)
	}

	for _, bad := range []string{"!", "&", "!!x", "a!b", "!x y"} {
		if CheckTags("tags", []string{bad}) == nil {
			t.Errorf("CheckTags(%q) = nil, want refused", bad)
		}
	}
	if err := CheckDeploymentTags("tags", []string{"ok", "!x"}); err == nil {
		t.Error("CheckDeploymentTags(!x) = nil, want refused: a deployment's tags carry no mark")
	}
	if _, err := New(Options{Providers: providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "a", BaseURL: "http://127.0.0.1:1", KeyOptional: true})), ModelGroups: map[string]ModelGroup{"g": {Models: []string{"a/m"}, Tags: [][]string{{"&x"}}, TagFiltering: true}}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a group member tagged &x: %v, want ErrInvalid", err)
	}
}

// TestTagMembersUserAgent: a member's TagRegex patterns select it for callers whose
// User-Agent matches, as a carried tag does; other callers get the default members, or
// none; a "&tag" turns the patterns off; with TagMatchAll a member with tags of its own is
// not selected by a pattern.
func TestTagMembersUserAgent(t *testing.T) {
	groups := compileTagRegex(map[string]ModelGroup{"g": {
		Models:       []string{"claude", "tagged", "dflt"},
		Tags:         [][]string{nil, {"x"}, {"default"}},
		TagRegex:     [][]string{{`^User-Agent: claude-cli/`}, {`^User-Agent: codex`}, nil},
		TagFiltering: true,
	}})
	grp := groups["g"]
	const claude, codex, curl = "claude-cli/2.0 (external, cli)", "codex_cli_rs/0.5", "curl/8"
	for _, c := range []struct {
		tags  []string
		agent string
		want  []string
	}{
		{nil, claude, []string{"claude"}},
		{nil, codex, []string{"tagged"}},
		{nil, curl, []string{"dflt"}},
		{nil, "", []string{"dflt"}},
		{[]string{"x"}, claude, []string{"claude", "tagged"}},
		{[]string{"&x"}, claude, []string{"tagged"}},
		{[]string{"!x"}, codex, []string{"dflt"}},
		{[]string{"!default"}, curl, nil},
	} {
		got, ok := grp.tagMembers(tagAsk{tags: c.tags, userAgent: c.agent})
		if c.want == nil {
			if ok {
				t.Errorf("tags %v, %q: %v, want refused", c.tags, c.agent, got)
			}
			continue
		}
		if !ok || !slices.Equal(got, c.want) {
			t.Errorf("tags %v, %q: %v (%v), want %v", c.tags, c.agent, got, ok, c.want)
		}
	}
	grp.TagMatchAll = true
	if got, ok := grp.tagMembers(tagAsk{tags: nil, userAgent: codex}); !ok || !slices.Equal(got, []string{"dflt"}) {
		t.Errorf("match all, codex: %v %v, want [dflt] (the tagged member's pattern does not select it)", got, ok)
	}
	if err := CheckTagPatterns("tag_regex", []string{"(unclosed"}); err == nil || !strings.Contains(err.Error(), "tag_regex") {
		t.Errorf("CheckTagPatterns((unclosed) = %v, want an error naming the field", err)
	}
	// The caller's map is not written.
	in := map[string]ModelGroup{"g": {Models: []string{"a"}, TagRegex: [][]string{{"x"}}}}
	compileTagRegex(in)
	if in["g"].tagRegexps != nil {
		t.Error("compileTagRegex wrote the caller's map")
	}
}

// BenchmarkTagMembers: a tag-filtered group of four members choosing by a plain tag, by
// marks, and by the caller's User-Agent against the members' patterns.
func BenchmarkTagMembers(b *testing.B) {
	grp := compileTagRegex(map[string]ModelGroup{"g": {
		Models:       []string{"a", "b", "c", "d"},
		Tags:         [][]string{{"free", "eu"}, {"free", "us"}, {"paid"}, {"default"}},
		TagRegex:     [][]string{nil, nil, {`^User-Agent: claude-cli/`}, nil},
		TagFiltering: true,
	}})["g"]
	for _, c := range []struct {
		name  string
		tags  []string
		agent string
	}{
		{"plain", []string{"free"}, ""},
		{"marks", []string{"free", "!us"}, ""},
		{"user_agent", nil, "claude-cli/2.0.14 (external, cli)"},
		{"user_agent_miss", nil, "OpenAI/Python 1.99.0"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := grp.tagMembers(tagAsk{tags: c.tags, userAgent: c.agent}); !ok {
					b.Fatal("refused")
				}
			}
		})
	}
}
