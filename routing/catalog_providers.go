package routing

import "github.com/switchyard-ai/switchyard/providers"

// ProvidersCatalog adapts the providers price catalogue (LiteLLM's, embedded) to Catalog.
// Price is USD per 1M tokens, the mean of the input and output rates, when the catalogue
// has both. Tool support is reported only when the catalogue says the model supports
// function calling; LiteLLM's missing flag is read as "unknown", so the built-in table may
// still decide.
func ProvidersCatalog(c *providers.Catalog) Catalog {
	return CatalogFunc(func(name string) (ModelInfo, bool) {
		p, ok := c.Lookup(name)
		if !ok {
			return ModelInfo{}, false
		}
		var info ModelInfo
		if p.Known {
			v := (p.InputPerToken + p.OutputPerToken) / 2 * 1e6
			info.Price = &v
		}
		if p.SupportsFunctionCalling {
			t := true
			info.SupportsTools = &t
		}
		return info, true
	})
}
