package routing

import "github.com/switchyard-ai/switchyard/providers"

// ProvidersCatalog adapts the providers price catalogue (LiteLLM's, embedded) to Catalog.
// Price is USD per 1M tokens, the mean of the input and output rates, when the catalogue
// has both. Tool support is reported only when the catalogue says the model supports
// function calling; LiteLLM's missing flag is read as "unknown", so the built-in table may
// still decide.
func ProvidersCatalog(c *providers.Catalog) Catalog {
	return LiveProvidersCatalog(func() *providers.Catalog { return c })
}

// LiveProvidersCatalog is ProvidersCatalog over the catalogue current returns at each
// lookup, for a catalogue that changes at run time (the gateway's, which its dynamic
// deployments swap: completions.Gateway.Prices). current must be safe to call concurrently;
// a nil catalogue knows no model.
func LiveProvidersCatalog(current func() *providers.Catalog) Catalog {
	return CatalogFunc(func(name string) (ModelInfo, bool) {
		c := current()
		if c == nil {
			return ModelInfo{}, false
		}
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
