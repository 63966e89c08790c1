package providers

import (
	"net/url"
	"strings"
)

// operationURL is the address of the operation path ("/chat/completions") under base, an
// api_base: path joined to base's path, base's query and fragment kept after it
// (https://x.azurewebsites.net/api/chat?code=abc gives
// https://x.azurewebsites.net/api/chat/chat/completions?code=abc, as an Azure Functions
// endpoint's key in ?code= needs), a '/' ending base's path dropped. path is escaped as
// it goes on the wire ("/models/a%2Fb:generateContent") and may carry its own query
// ("…:streamGenerateContent?alt=sse"), which goes before base's, neither re-escaped. A
// base without query or fragment, or one that does not parse, is base followed by path,
// as before.
func operationURL(base, path string) string {
	if !strings.ContainsAny(base, "?#") {
		return base + path
	}
	u, err := url.Parse(base)
	if err != nil {
		return base + path
	}
	opPath, opQuery, _ := strings.Cut(path, "?")
	// A '/' ending the base's path goes, as NewOpenAI drops one ending a base without a
	// query: https://x/api/?code=abc gives https://x/api/chat/completions?code=abc.
	escaped := strings.TrimRight(u.EscapedPath(), "/") + opPath
	unescaped, err := url.PathUnescape(escaped)
	if err != nil {
		return base + path
	}
	u.Path, u.RawPath = unescaped, escaped
	switch {
	case opQuery == "":
	case u.RawQuery == "":
		u.RawQuery = opQuery
	default:
		u.RawQuery = opQuery + "&" + u.RawQuery
	}
	return u.String()
}

// withBasePath is base with its path (what comes before a query or fragment) changed by
// edit, the query and fragment kept: NewGemini's and NewAnthropic's version endings are
// read from the path, not from the end of a base that carries a ?key=.
func withBasePath(base string, edit func(path string) string) string {
	i := strings.IndexAny(base, "?#")
	if i < 0 {
		return edit(base)
	}
	return edit(base[:i]) + base[i:]
}
