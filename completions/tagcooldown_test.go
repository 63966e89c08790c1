package completions

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestTagRoutingCoolingMember: the tags select the members before the circuit breakers
// skip the cooling ones, and a request whose only fitting member is cooling down calls it
// (the breakers never skip the last callable model) rather than answering the tags 401 as
// LiteLLM does (its router drops cooling deployments before the tag filter: a transient
// outage then reads as an authorization error, BerriAI/litellm#15016) or going to a member
// the tags leave out. Among several fitting members the cooling one is skipped.
func TestTagRoutingCoolingMember(t *testing.T) {
	ups := map[string]*tagUpstream{}
	var ps []providers.Provider
	for _, n := range []string{"free", "free2", "paid"} {
		ups[n] = newTagUpstream(t, n)
		ps = append(ps, providers.NewOpenAI(providers.Config{Name: n, BaseURL: ups[n].srv.URL, KeyOptional: true}))
	}
	g, err := New(Options{Providers: providers.NewRegistry(ps...), DefaultMaxRetries: -1,
		Breaker: BreakerOptions{Failures: 1, Cooldown: time.Hour},
		ModelGroups: map[string]ModelGroup{
			"gpt":  {Models: []string{"free/m", "paid/m"}, Tags: [][]string{{"free"}, {"paid"}}, TagFiltering: true},
			"gpt2": {Models: []string{"free/m", "free2/m", "paid/m"}, Tags: [][]string{{"free"}, {"free"}, {"paid"}}, TagFiltering: true},
		}})
	if err != nil {
		t.Fatal(err)
	}
	ask := func(body string) (*Response, error) {
		return g.Complete(context.Background(), Scope{}, chatRequest(t, body))
	}
	ups["free"].failing.Store(true)
	if _, err := ask(`{"model":"gpt","tags":["free"],"messages":[{"role":"user","content":"hi"}]}`); err == nil {
		t.Fatal("the failing member answered")
	}
	if s := g.BreakerStates()["free/m"]; s != BreakerOpen {
		t.Fatalf("free/m's breaker: %q, want open", s)
	}
	before := ups["free"].calls.Load()
	resp, err := ask(`{"model":"gpt2","tags":["free"],"messages":[{"role":"user","content":"hi"}]}`)
	if err != nil || resp.Provider != "free2" || ups["free"].calls.Load() != before || ups["paid"].calls.Load() != 0 {
		t.Fatalf("two fitting members, one cooling: got %+v, %v, calls %v; want free2/m", resp, err, tagCalls(ups))
	}
	ups["free"].failing.Store(false)
	resp, err = ask(`{"model":"gpt","tags":["free"],"messages":[{"role":"user","content":"hi"}]}`)
	if errors.Is(err, ErrTagRouting) || err != nil || resp.Provider != "free" {
		t.Fatalf("the only fitting member cooling: got %+v, %v; want free/m called", resp, err)
	}
	if ups["paid"].calls.Load() != 0 {
		t.Fatalf("the member the tags leave out was called: %v", tagCalls(ups))
	}
}
