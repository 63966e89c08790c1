package completions

import (
	"context"
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestFallbackEntryStripsKnownProvidersOnly: an entry of a scope's fallbacks (or a
// request's context_window_fallbacks) is found without the model's prefix only when the
// prefix is a provider the gateway knows (a preset's name or its registry's), as LiteLLM's
// _check_stripped_model_group strips only the prefixes in litellm.provider_list: a
// LiteLLM config's model_name team/fast (Options.DeploymentNames) takes the "*" entry,
// not the entry of fast, while a/m (a the registry's provider) still takes the entry of m.
func TestFallbackEntryStripsKnownProvidersOnly(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.DeploymentNames = map[string][]NamedDeployment{"team/fast": {{ModelName: "team/fast", Member: "a/m1"}}}
	})
	h.a.on("m1", step{err: upstreamErr(providers.KindOverloaded, 503, 0)})
	h.a.on("m", step{err: upstreamErr(providers.KindOverloaded, 503, 0)})
	fbs := map[string][]string{"fast": {"b/bare"}, "m": {"b/bare"}, "*": {"b/star"}}
	for _, c := range []struct {
		model string
		want  []string
	}{
		{"team/fast", []string{"a/m1", "b/star"}},
		{"a/m", []string{"a/m", "b/bare"}},
	} {
		resp, err := h.g.Complete(context.Background(), Scope{Fallbacks: fbs}, groupReq(c.model))
		if got := attemptModels(resp, err); err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v %v; want %v", c.model, got, err, c.want)
		}
	}
	// A request's own context_window_fallbacks are looked up alike: no entry for
	// team/fast but fast's, so the prompt too long's error stands.
	h.a.on("m1", step{err: upstreamErr(providers.KindContextLength, 400, 0)})
	r := groupReq("team/fast")
	r.ContextWindowFallbacks = map[string][]string{"fast": {"b/bare"}}
	if resp, err := h.g.Complete(context.Background(), Scope{}, r); err == nil || !slices.Equal(attemptModels(resp, err), []string{"a/m1"}) {
		t.Errorf("context_window_fallbacks of fast for team/fast: %v %v; want the prompt too long to stand", attemptModels(resp, err), err)
	}
	for name, want := range map[string]bool{"openai": true, "vertex_ai": true, "a": true, "team": false, "": false} {
		if got := h.g.knownProvider(name); got != want {
			t.Errorf("knownProvider(%q) = %v, want %v", name, got, want)
		}
	}
}
