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
