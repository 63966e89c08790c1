package routing_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
)

// With tools, a candidate known to support them whose context window is too small for the
// conversation must not shut out one that fits and is not known to lack tool support: the
// tools rule keeps the candidates not known to lack support when none that can serve the
// request is known to have it. The filters ran tools first, so only the too-small one was
// left for the context filter, and the request was refused with a 400 saying every
// candidate's context_length was too small — acme/big's was not.
func TestReview20cContextLengthBeforeToolsRule(t *testing.T) {
	sel, _ := newSelector(t, routing.Options{})
	long := strings.Repeat("word ", 4000) // about 5,000 tokens
	small, big := 4096, 128000
	req := &routing.Request{Messages: userMsg(long), Tools: []routing.Tool{{Name: "lookup"}}, LLMProviders: []routing.Candidate{
		{Name: "acme/small", ContextLength: &small, Attributes: map[string]any{"supports_tools": true}},
		{Name: "acme/big", ContextLength: &big}}}
	resp, err := sel.Select(context.Background(), "o", req)
	if err != nil {
		t.Fatalf("refused: %v; want acme/big (fits, not known to lack tools)", err)
	}
	if got := strings.Join(labels(resp.Providers), ","); got != "acme/big" {
		t.Fatalf("ranked %s, want acme/big alone", got)
	}
	// unchanged: one that fits and supports tools wins over one not known to
	req.LLMProviders = append(req.LLMProviders, routing.Candidate{Name: "acme/fits-tools", ContextLength: &big,
		Attributes: map[string]any{"supports_tools": true}})
	if resp = mustSelect(t, sel, "o", req); strings.Join(labels(resp.Providers), ",") != "acme/fits-tools" {
		t.Fatalf("ranked %v, want acme/fits-tools alone", labels(resp.Providers))
	}
}
