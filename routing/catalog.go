package routing

// ModelInfo is what a price catalogue knows about one model.
type ModelInfo struct {
	// Price is in USD per 1M tokens, the mean of the input and output prices; nil if unknown.
	Price *float64
	// SupportsTools reports function-calling support; nil if unknown.
	SupportsTools *bool
}

// Catalog looks models up by "provider/model" name. The providers package's price
// catalogue is adapted to it by the caller (see the server wiring); tests use a
// [CatalogMap].
type Catalog interface {
	// ModelInfo returns what is known about name, and false when the model is not listed.
	ModelInfo(name string) (ModelInfo, bool)
}

// CatalogFunc adapts a function to Catalog.
type CatalogFunc func(name string) (ModelInfo, bool)

// ModelInfo calls f.
func (f CatalogFunc) ModelInfo(name string) (ModelInfo, bool) { return f(name) }

// CatalogMap is a fixed Catalog keyed by exact "provider/model" name.
type CatalogMap map[string]ModelInfo

// ModelInfo returns m[name].
func (m CatalogMap) ModelInfo(name string) (ModelInfo, bool) {
	i, ok := m[name]
	return i, ok
}

// toolAttributeKeys are the candidate attributes that declare tool-calling support.
var toolAttributeKeys = []string{"supports_tools", "function_calling", "supports_function_calling"}

// supportsTools decides tool-calling support: a declared attribute wins, then the
// catalogue, then the built-in table; known is false when none of them says.
func supportsTools(c Candidate, cat Catalog) (supported, known bool) {
	for _, k := range toolAttributeKeys {
		if v, ok := c.Attributes[k].(bool); ok {
			return v, true
		}
	}
	if cat != nil {
		if info, ok := cat.ModelInfo(c.Name); ok && info.SupportsTools != nil {
			return *info.SupportsTools, true
		}
	}
	if b, ok := LookupBenchmark(c.Name); ok {
		return b.Tools, true
	}
	return false, false
}

// priceOf returns the candidate's price from the request, else the catalogue.
func priceOf(c Candidate, cat Catalog) (float64, bool) {
	if c.Price != nil {
		return *c.Price, true
	}
	if cat != nil {
		if info, ok := cat.ModelInfo(c.Name); ok && info.Price != nil {
			return *info.Price, true
		}
	}
	return 0, false
}

// CatalogPrice returns a price lookup over cat (USD per 1M tokens, as ModelInfo.Price), for
// trainer.WithPrices.
func CatalogPrice(cat Catalog) func(model string) (float64, bool) {
	return func(model string) (float64, bool) {
		return priceOf(Candidate{Name: model}, cat)
	}
}
