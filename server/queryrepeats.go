package server

import (
	"net/http"
	"slices"
	"strings"
)

// A query parameter given more than once (?model=&model=x) is one of two things. A
// parameter that is a list (QueryParam.Repeated: status, server_ids) keeps every value.
// Any other is a scalar, and the handlers read one value (url.Values.Get, the first), so a
// repeat would silently drop the others: scalarQuery settles it before the handler runs.
// On the LiteLLM- and OpenAI-compatible routes the last value is taken, as LiteLLM's
// FastAPI (Starlette's QueryParams) takes the last value of a repeated scalar; on the
// native API (/api/...), which has no such precedent, the request is refused with a 422
// naming the parameter (as its other malformed query parameters), rather than guessing
// which value was meant.

// nativePrefix is the path prefix of the native API's routes.
const nativePrefix = "/api/"

// scalarQuery returns r with each scalar query parameter of rt (every one not declared
// Repeated in rt.Query) given more than once reduced to its last value, or on a native
// route a 422 naming the first such parameter (with r). It returns r itself when no parameter is
// repeated, and for rt.AnyMethod routes (the provider passthroughs forward the query
// as it came).
func scalarQuery(rt Route, r *http.Request) (*http.Request, error) {
	if r.URL.RawQuery == "" || rt.AnyMethod {
		return r, nil
	}
	q := r.URL.Query()
	var repeated []string
	for name, vs := range q {
		if len(vs) > 1 && !slices.ContainsFunc(rt.Query, func(p QueryParam) bool { return p.Repeated && p.Name == name }) {
			repeated = append(repeated, name)
		}
	}
	if len(repeated) == 0 {
		return r, nil
	}
	slices.Sort(repeated)
	if strings.HasPrefix(rt.Path, nativePrefix) {
		e := Validation(http.StatusUnprocessableEntity, "query parameter %s is given more than once (give it once)", repeated[0])
		e.Param = repeated[0]
		return r, e
	}
	for _, name := range repeated {
		q[name] = q[name][len(q[name])-1:]
	}
	u := *r.URL
	u.RawQuery = q.Encode()
	r = r.WithContext(r.Context())
	r.URL = &u
	return r, nil
}
