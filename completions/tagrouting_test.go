package completions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// tagUpstream is a scripted OpenAI-format upstream that counts its calls and answers its
// own name, or 503 when failing is set.
type tagUpstream struct {
	srv     *httptest.Server
	calls   atomic.Int64
	failing atomic.Bool
}

func newTagUpstream(t *testing.T, name string) *tagUpstream {
	t.Helper()
	u := &tagUpstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.calls.Add(1)
		if u.failing.Load() {
			http.Error(w, `{"error":{"message":"overloaded","type":"server_error"}}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`, name)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// tagGateway serves the model group "gpt" over one scripted upstream per name, each the
// member name+"/m" with the tags given.
func tagGateway(t *testing.T, group ModelGroup, names ...string) (*Gateway, map[string]*tagUpstream) {
	t.Helper()
	ups := map[string]*tagUpstream{}
	var ps []providers.Provider
	for _, n := range names {
		ups[n] = newTagUpstream(t, n)
		ps = append(ps, providers.NewOpenAI(providers.Config{Name: n, BaseURL: ups[n].srv.URL, KeyOptional: true}))
	}
	g, err := New(Options{Providers: providers.NewRegistry(ps...), ModelGroups: map[string]ModelGroup{"gpt": group}, DefaultMaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return g, ups
}

func tagCalls(ups map[string]*tagUpstream) map[string]int64 {
	out := map[string]int64{}
	for n, u := range ups {
		out[n] = u.calls.Load()
	}
	return out
}

// TestTagRoutingThroughGroup: with tag filtering, a tagged request reaches only the member
// carrying its tag, an untagged one (or one whose tags no member knows) the members tagged
// "default", whatever the shuffle draws; retries and fallbacks stay among the selected.
func TestTagRoutingThroughGroup(t *testing.T) {
	g, ups := tagGateway(t, ModelGroup{
		Models:       []string{"free/m", "paid/m", "dflt/m"},
		Shuffle:      true,
		Tags:         [][]string{{"free"}, {"paid", "teamA"}, {"default"}},
		TagFiltering: true,
	}, "free", "paid", "dflt")
	ask := func(body string) (*Response, error) {
		return g.Complete(context.Background(), Scope{}, chatRequest(t, body))
	}
	const n = 20
	for _, c := range []struct {
		body string
		want string
	}{
		{`{"model":"gpt","metadata":{"tags":["free"]},"messages":[{"role":"user","content":"hi"}]}`, "free"},
		{`{"model":"gpt","tags":["teamA"],"messages":[{"role":"user","content":"hi"}]}`, "paid"},
		{`{"model":"gpt","tags":"nobody-has-it,other","messages":[{"role":"user","content":"hi"}]}`, "dflt"},
		{`{"model":"gpt","messages":[{"role":"user","content":"hi"}]}`, "dflt"},
	} {
		before := tagCalls(ups)
		for range n {
			resp, err := ask(c.body)
			if err != nil {
				t.Fatalf("%s: %v", c.body, err)
			}
			if resp.Text() != c.want {
				t.Fatalf("%s: answered by %q, want %q", c.body, resp.Text(), c.want)
			}
		}
		after := tagCalls(ups)
		for name := range ups {
			want := int64(0)
			if name == c.want {
				want = n
			}
			if got := after[name] - before[name]; got != want {
				t.Errorf("%s: upstream %s called %d times, want %d", c.body, name, got, want)
			}
		}
	}

	// The selected member failing does not hand the request to the others: the filter
	// comes before fallbacks among members.
	ups["free"].failing.Store(true)
	before := tagCalls(ups)
	_, err := ask(`{"model":"gpt","tags":["free"],"messages":[{"role":"user","content":"hi"}]}`)
	if !errors.Is(err, ErrAllFailed) {
		t.Fatalf("err = %v, want all failed", err)
	}
	if d := tagCalls(ups); d["paid"] != before["paid"] || d["dflt"] != before["dflt"] || d["free"] == before["free"] {
		t.Errorf("calls %v after %v: only free should have been called", d, before)
	}
}

// TestTagRoutingNoMatch: a request whose tag a member carries but that member cannot take
// (match all), or a group without "default" members that no tag selects, is refused with
// LiteLLM's message naming the model and the tags, and no upstream is called.
func TestTagRoutingNoMatch(t *testing.T) {
	g, ups := tagGateway(t, ModelGroup{
		Models:       []string{"free/m", "paid/m"},
		Tags:         [][]string{{"free"}, {"paid", "teamA"}},
		TagFiltering: true,
		TagMatchAll:  true,
	}, "free", "paid")
	for _, c := range []struct{ body, msg string }{
		{`{"model":"gpt","tags":["free","teamA"],"messages":[{"role":"user","content":"hi"}]}`, "Passed model=gpt and tags=['free', 'teamA']"},
		{`{"model":"gpt","tags":["other"],"messages":[{"role":"user","content":"hi"}]}`, "Passed model=gpt and tags=['other']"},
	} {
		_, err := g.Complete(context.Background(), Scope{}, chatRequest(t, c.body))
		var te *TagRoutingError
		if !errors.Is(err, ErrTagRouting) || !errors.As(err, &te) || te.Model != "gpt" {
			t.Fatalf("%s: err = %v, want a *TagRoutingError for gpt", c.body, err)
		}
		if !strings.HasPrefix(err.Error(), "Not allowed to access model due to tags configuration. ") || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: message %q, want it to name %s", c.body, err, c.msg)
		}
	}
	// Both tags on one member: match all selects it.
	resp, err := g.Complete(context.Background(), Scope{}, chatRequest(t, `{"model":"gpt","tags":["teamA","paid"],"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || resp.Text() != "paid" {
		t.Fatalf("match all: %v, %v", resp, err)
	}
	// Untagged with no "default" member: every member.
	if _, err := g.Complete(context.Background(), Scope{}, chatRequest(t, `{"model":"gpt","messages":[{"role":"user","content":"hi"}]}`)); err != nil {
		t.Fatal(err)
	}
	if c := tagCalls(ups); c["free"]+c["paid"] != 2 {
		t.Errorf("calls %v, want 2 in all (the refused requests call nothing)", c)
	}
}

// TestTagRoutingOffIgnoresTags: without TagFiltering, members' tags select nothing: a
// tagged request may reach any member.
func TestTagRoutingOffIgnoresTags(t *testing.T) {
	g, ups := tagGateway(t, ModelGroup{Models: []string{"free/m", "paid/m"}, Tags: [][]string{{"free"}, {"paid"}}}, "free", "paid")
	ups["free"].failing.Store(true)
	resp, err := g.Complete(context.Background(), Scope{}, chatRequest(t, `{"model":"gpt","tags":["free"],"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || resp.Text() != "paid" {
		t.Fatalf("got %v, %v: want paid/m's answer after free/m failed", resp, err)
	}
}

// TestTagMembersAllocatesNothingOff: the filter costs no allocation when the group does
// not filter, nor for a request without tags to a filtering group without defaults, nor
// for a batch line's own tag alone; and a group that does not filter expands as before.
func TestTagMembersAllocatesNothingOff(t *testing.T) {
	off := ModelGroup{Models: []string{"a/m", "b/m"}, Tags: [][]string{{"x"}, {"y"}}}
	on := ModelGroup{Models: []string{"a/m", "b/m"}, Tags: [][]string{{"x"}, {"y"}}, TagFiltering: true}
	tags := []string{"x", "batch:b1"}
	for name, f := range map[string]func(){
		"off":              func() { off.tagMembers(tagAsk{tags: tags}) },
		"on, untagged":     func() { on.tagMembers(tagAsk{tags: nil}) },
		"on, batch tag":    func() { on.tagMembers(tagAsk{tags: []string{"batch:b1"}}) },
		"routingTags none": func() { routingTags([]string{"x", "y"}) },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocations, want 0", name, n)
		}
	}
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"plain": {Models: []string{"a/m", "b/m"}}, "tagged": off}
	})
	models := []string{"plain"}
	plain := testing.AllocsPerRun(100, func() { h.g.expandGroups(models, true, tagAsk{tags: tags}) })
	models2 := []string{"tagged"}
	tagged := testing.AllocsPerRun(100, func() { h.g.expandGroups(models2, true, tagAsk{tags: tags}) })
	if tagged != plain {
		t.Errorf("expanding a group with tags but no filtering: %v allocations, %v without tags", tagged, plain)
	}
}

// TestCheckTagRouting: bad member tags are refused naming the group and the field.
func TestCheckTagRouting(t *testing.T) {
	for _, c := range []struct {
		g    ModelGroup
		want string
	}{
		{ModelGroup{Models: []string{"a/m"}, Tags: [][]string{{"x"}, {"y"}}}, "one list per model"},
		{ModelGroup{Models: []string{"a/m"}, Tags: [][]string{{"bad tag"}}}, "tags[0]"},
		{ModelGroup{Models: []string{"a/m"}, Tags: [][]string{{""}}}, "tags[0]"},
		{ModelGroup{Models: []string{"a/m"}, TagMatchAll: true}, "tag_match_all needs tag_filtering"},
	} {
		err := checkModelGroups(map[string]ModelGroup{"grp": c.g})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `"grp"`) {
			t.Errorf("%+v: err = %v, want ErrInvalid naming grp and %q", c.g, err, c.want)
		}
	}
	if err := checkModelGroups(map[string]ModelGroup{"grp": {Models: []string{"a/m"}, Tags: [][]string{{"default", "team:a/b-1.x"}}, TagFiltering: true, TagMatchAll: true}}); err != nil {
		t.Errorf("good tags: %v", err)
	}
}
