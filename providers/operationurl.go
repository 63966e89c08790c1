package providers

import (
	"net/url"
	"strings"
)

// operationURL is the address of the operation path ("/chat/completions") under base, an
// api_base: path joined to base's path, base's query and fragment kept after it
// (https://x.azurewebsites.net/api/chat?code=abc gives
// https://x.azurewebsites.net/api/chat/chat/completions?code=abc, as an Azure Functions
// endpoint's key in ?code= needs), a '/' ending base's path dropped. A base without query or fragment, or one that does
// not parse, is base followed by path, as before.
func operationURL(base, path string) string {
	if !strings.ContainsAny(base, "?#") {
		return base + path
	}
	u, err := url.Parse(base)
	if err != nil {
		return base + path
	}
	// A '/' ending the base's path goes, as NewOpenAI drops one ending a base without a
	// query: https://x/api/?code=abc gives https://x/api/chat/completions?code=abc.
	u.Path = strings.TrimRight(u.Path, "/") + path
	if u.RawPath != "" {
		u.RawPath = strings.TrimRight(u.RawPath, "/") + path
	}
	return u.String()
}
