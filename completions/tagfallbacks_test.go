package completions

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// tagGroupsGateway serves groups over one scripted upstream per name (member name+"/m").
func tagGroupsGateway(t *testing.T, groups map[string]ModelGroup, names ...string) (*Gateway, map[string]*tagUpstream) {
	t.Helper()
	ups := map[string]*tagUpstream{}
	var ps []providers.Provider
	for _, n := range names {
		ups[n] = newTagUpstream(t, n)
		ps = append(ps, providers.NewOpenAI(providers.Config{Name: n, BaseURL: ups[n].srv.URL, KeyOptional: true}))
	}
	g, err := New(Options{Providers: providers.NewRegistry(ps...), ModelGroups: groups, DefaultMaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return g, ups
}

// TestTagRoutingUnfitGroupTriesFallbacks: a group none of whose members the request's tags
// select goes on to its fallbacks (and the request's fallback_models), as LiteLLM's router
// passes its tag error to the group's fallbacks; a fallback group the tags do not fit is
// passed over, and the tag error (401) stands when no fallback fits.
func TestTagRoutingUnfitGroupTriesFallbacks(t *testing.T) {
	groups := map[string]ModelGroup{
		"gpt": {Models: []string{"free/m", "paid/m"}, Tags: [][]string{{"free"}, {"paid"}}, TagFiltering: true,
			Fallbacks: []string{"backup", "plain/m"}},
		"strict": {Models: []string{"free/m"}, Tags: [][]string{{"free"}}, TagFiltering: true,
			Fallbacks: []string{"backup"}},
		"backup": {Models: []string{"teamb/m"}, Tags: [][]string{{"teamB"}}, TagFiltering: true},
	}
	g, ups := tagGroupsGateway(t, groups, "free", "paid", "teamb", "plain", "extra")
	ask := func(body string) (*Response, error) {
		return g.Complete(context.Background(), Scope{}, chatRequest(t, body))
	}
	msgs := `"messages":[{"role":"user","content":"hi"}]`

	// teamB fits no member of gpt but its first fallback group.
	resp, err := ask(`{"model":"gpt","tags":["teamB"],` + msgs + `}`)
	if err != nil || resp.Provider != "teamb" {
		t.Fatalf("teamB: got %+v, %v; want the backup group's teamb/m", resp, err)
	}
	// teamC fits neither gpt nor backup: the plain fallback answers.
	resp, err = ask(`{"model":"gpt","tags":["teamC"],` + msgs + `}`)
	if err != nil || resp.Provider != "plain" {
		t.Fatalf("teamC: got %+v, %v; want the plain fallback", resp, err)
	}
	if c := tagCalls(ups); c["free"] != 0 || c["paid"] != 0 {
		t.Fatalf("members the tags leave out were called: %v", c)
	}
	// strict's only fallback does not fit teamC: the tag error stands.
	_, err = ask(`{"model":"strict","tags":["teamC"],` + msgs + `}`)
	var te *TagRoutingError
	if !errors.Is(err, ErrTagRouting) || !errors.As(err, &te) || te.Model != "strict" {
		t.Fatalf("strict, teamC: got %v; want the tag error naming strict", err)
	}
	// The request's own fallback_models are tried as well.
	resp, err = ask(`{"model":"strict","tags":["teamC"],"fallback_models":["extra/m"],` + msgs + `}`)
	if err != nil || resp.Provider != "extra" {
		t.Fatalf("strict with fallbacks: got %+v, %v; want extra/m", resp, err)
	}
	// CountTokens counts on the fallback that would answer rather than refusing.
	n, err := g.CountTokens(context.Background(), Scope{}, chatRequest(t, `{"model":"gpt","tags":["teamB"],`+msgs+`}`))
	if err != nil || n <= 0 {
		t.Fatalf("CountTokens: got %d, %v", n, err)
	}
	if _, err := g.CountTokens(context.Background(), Scope{}, chatRequest(t, `{"model":"strict","tags":["teamC"],`+msgs+`}`)); !errors.Is(err, ErrTagRouting) {
		t.Fatalf("CountTokens, strict: got %v; want the tag error", err)
	}
}

// TestTagRoutingUnfitGroupsTryFallbacks: a stateless request naming several groups none of whose
// members its tags select goes on to its fallback_models that fit, as a request naming one
// such group does; a fallback group the tags do not fit is passed over, and the tag error
// (naming every group) stands when no fallback fits.
func TestTagRoutingUnfitGroupsTryFallbacks(t *testing.T) {
	groups := map[string]ModelGroup{
		"gpt":    {Models: []string{"free/m", "paid/m"}, Tags: [][]string{{"free"}, {"paid"}}, TagFiltering: true},
		"strict": {Models: []string{"free/m"}, Tags: [][]string{{"free"}}, TagFiltering: true},
		"backup": {Models: []string{"teamb/m"}, Tags: [][]string{{"teamB"}}, TagFiltering: true},
	}
	g, ups := tagGroupsGateway(t, groups, "free", "paid", "teamb", "extra")
	// No surface parses several models into one stateless request today (the OpenAI body
	// names one); a library request of two groups is built from one of one.
	twoGroups := func(body string) *Request {
		r := chatRequest(t, body)
		r.Models = []string{"gpt", "strict"}
		return r
	}
	ask := func(body string) (*Response, error) {
		return g.Complete(context.Background(), Scope{}, twoGroups(body))
	}
	msgs := `"messages":[{"role":"user","content":"hi"}]`

	resp, err := ask(`{"model":"gpt","tags":["teamB"],"fallback_models":["backup","extra/m"],` + msgs + `}`)
	if err != nil || resp.Provider != "teamb" {
		t.Fatalf("teamB: got %+v, %v; want the backup group's teamb/m", resp, err)
	}
	resp, err = ask(`{"model":"gpt","tags":["teamC"],"fallback_models":["backup","extra/m"],` + msgs + `}`)
	if err != nil || resp.Provider != "extra" {
		t.Fatalf("teamC: got %+v, %v; want extra/m (backup does not fit)", resp, err)
	}
	if c := tagCalls(ups); c["free"] != 0 || c["paid"] != 0 {
		t.Fatalf("members the tags leave out were called: %v", c)
	}
	var te *TagRoutingError
	_, err = ask(`{"model":"gpt","tags":["teamC"],"fallback_models":["backup"],` + msgs + `}`)
	if !errors.Is(err, ErrTagRouting) || !errors.As(err, &te) || te.Model != "gpt,strict" {
		t.Fatalf("no fallback fits: got %v; want the tag error naming gpt,strict", err)
	}
	_, err = ask(`{"model":"gpt","tags":["teamC"],` + msgs + `}`)
	if !errors.Is(err, ErrTagRouting) || !errors.As(err, &te) || te.Model != "gpt,strict" {
		t.Fatalf("no fallbacks: got %v; want the tag error naming gpt,strict", err)
	}
	n, err := g.CountTokens(context.Background(), Scope{}, twoGroups(`{"model":"gpt","tags":["teamB"],"fallback_models":["backup"],`+msgs+`}`))
	if err != nil || n <= 0 {
		t.Fatalf("CountTokens: got %d, %v", n, err)
	}
}
