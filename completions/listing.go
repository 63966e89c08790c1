package completions

import (
	"slices"
	"strings"

	"github.com/switchyard-ai/switchyard/providers"
)

// ListedModels is what the gateway lists (GET /v1/models and its kin): its model groups,
// then either every chat, embedding and rerank model the catalogue lists of a configured
// provider the configuration names (providers.IsNamed: not ollama's when nothing says it
// runs here), or with Options.ListConfigured the models Options.Listed names ("provider/*"
// expanded to the provider's catalogued models). Each name once, groups first.
func (g *Gateway) ListedModels() []string {
	out := slices.Clone(g.ModelGroups())
	seen := make(map[string]bool, len(out))
	for _, m := range out {
		seen[m] = true
	}
	add := func(ms []string) {
		for _, m := range ms {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	if !g.opts.ListConfigured {
		add(g.named(g.Models()))
		add(g.named(g.EmbeddingModels()))
		add(g.named(g.RerankModels()))
		return out
	}
	add(g.configuredListed())
	return out
}

// configuredListed expands Options.Listed (or the last SetRoutes'): a "provider/*" to the chat, embedding and
// rerank models the gateway lists of that provider (none when it is not configured).
func (g *Gateway) configuredListed() []string {
	var out []string
	var all []string
	for _, m := range g.routes().listed {
		prov, ok := strings.CutSuffix(m, "/*")
		if !ok {
			out = append(out, m)
			continue
		}
		if all == nil {
			all = slices.Concat(g.Models(), g.EmbeddingModels(), g.RerankModels())
		}
		for _, c := range all {
			if p, _, err := providers.ParseModel(c); err == nil && p == prov {
				out = append(out, c)
			}
		}
	}
	return out
}

// named drops from models ("provider/model") those of a provider the configuration does
// not name (providers.IsNamed: ollama's catalogued models when nothing says it runs here),
// which the native listings leave out; they are still served.
func (g *Gateway) named(models []string) []string {
	out := models[:0:0]
	for _, m := range models {
		prov, _, err := providers.ParseModel(m)
		if err == nil {
			if p, err := g.opts.Providers.Lookup(prov); err == nil && p != nil && !providers.IsNamed(p) {
				continue
			}
		}
		out = append(out, m)
	}
	return out
}
