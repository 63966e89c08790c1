package providers

// SearchSupporter is implemented by providers that can tell whether a model has a native
// web-search option. A Request with Search set for a model that has none fails with
// KindBadRequest before anything is sent upstream.
type SearchSupporter interface {
	SupportsSearch(model string) bool
}

// SupportsSearch reports whether p offers native web search for model; providers that do
// not implement SearchSupporter do not.
func SupportsSearch(p Provider, model string) bool {
	s, ok := p.(SearchSupporter)
	return ok && s.SupportsSearch(model)
}

var (
	_ SearchSupporter = (*OpenAI)(nil)
	_ SearchSupporter = (*Anthropic)(nil)
	_ SearchSupporter = (*Gemini)(nil)
	_ Configurable    = (*OpenAI)(nil)
	_ Configurable    = (*Anthropic)(nil)
	_ Configurable    = (*Gemini)(nil)
	_ Provider        = (*OpenAI)(nil)
	_ Provider        = (*Anthropic)(nil)
	_ Provider        = (*Gemini)(nil)
)
