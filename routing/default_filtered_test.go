package routing_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
)

// The request's default answers when the selection cannot finish, but not when the
// tools or context_length filters removed it: it cannot take the request. The best
// remaining candidate by the prior answers instead (score_source default_replaced), so
// the caller is never sent to a model that cannot take the call.
func TestDefaultRemovedByFiltersIsNotAnswered(t *testing.T) {
	sel, _ := newSelector(t, routing.Options{})
	tiny := 1e-9
	small, big := 10, 128000
	long := strings.Repeat("word ", 200) // about 250 tokens
	cases := []struct {
		name  string
		req   *routing.Request
		want  string
		unfit string
	}{
		{"context_length", &routing.Request{Messages: userMsg(long), LLMProviders: []routing.Candidate{
			{Name: "acme/small", ContextLength: &small},
			{Name: "acme/big", ContextLength: &big, Attributes: map[string]any{"quality": 0.6}},
			{Name: "acme/bigger", ContextLength: &big, Attributes: map[string]any{"quality": 0.9}}}}, "acme/bigger", "acme/small"},
		{"tools", &routing.Request{Messages: userMsg("hi"), Tools: []routing.Tool{{Name: "lookup"}}, LLMProviders: []routing.Candidate{
			{Name: "acme/notools", Attributes: map[string]any{"supports_tools": false}},
			{Name: "acme/weak", Attributes: map[string]any{"supports_tools": true, "quality": 0.3}},
			{Name: "acme/strong", Attributes: map[string]any{"supports_tools": true, "quality": 0.8}}}}, "acme/strong", "acme/notools"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Timeout = &tiny
			tc.req.Default = &routing.DefaultChoice{Candidate: &routing.Candidate{Name: tc.unfit}}
			resp := mustSelect(t, sel, "o", tc.req)
			if resp.LLMLabel != tc.want || len(resp.Providers) != 1 || resp.Providers[0].ScoreSource != routing.SourceDefaultReplaced {
				t.Fatalf("answered %s %+v; want %s alone with score_source %s (the default %s cannot take the request)",
					resp.LLMLabel, resp.Providers, tc.want, routing.SourceDefaultReplaced, tc.unfit)
			}
			// a default that can take the request still answers as before
			tc.req.Default = &routing.DefaultChoice{Index: new(int)}
			*tc.req.Default.Index = 1
			resp = mustSelect(t, sel, "o", tc.req)
			if resp.Providers[0].ScoreSource != routing.SourceDefault || resp.LLMLabel != tc.req.LLMProviders[1].Name {
				t.Fatalf("a fitting default: %+v", resp.Providers)
			}
			// without a timeout the selection finishes and the unfit default is irrelevant
			tc.req.Timeout = nil
			tc.req.Default = &routing.DefaultChoice{Candidate: &routing.Candidate{Name: tc.unfit}}
			if _, err := sel.Select(context.Background(), "o", tc.req); err != nil {
				t.Fatalf("a ranked selection refused for its unfit default: %v", err)
			}
		})
	}
}
