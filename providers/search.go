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

// sourceSet is the pages an answer has cited so far, by URL.
type sourceSet map[string]bool

// add appends the page at url to out unless it is empty or already cited (a nil set keeps
// none).
func (seen sourceSet) add(out []Source, url, title string) []Source {
	if url == "" || seen[url] {
		return out
	}
	if seen != nil {
		seen[url] = true
	}
	return append(out, Source{URL: url, Title: title})
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
