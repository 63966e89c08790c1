package server

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/switchyard-ai/switchyard/completions"
)

// applyCacheHeader adds a request's Cache-Control header to its say over the response
// cache (the body's cache object wins where both speak): no-cache, no-store, and max-age=N
// or s-maxage=N (accept a cached answer at most N seconds old; 0 is no-cache). Other
// directives (the body's ttl and namespace have none) are ignored, as HTTP caches ignore
// the ones they do not know.
func applyCacheHeader(r *http.Request, req *completions.Request) error {
	values := r.Header.Values("Cache-Control")
	if len(values) == 0 {
		return nil
	}
	var c completions.CacheControl
	if req.Cache != nil {
		c = *req.Cache
	}
	for _, v := range values {
		for d := range strings.SplitSeq(v, ",") {
			name, arg, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch strings.ToLower(name) {
			case "no-cache":
				c.NoCache = true
			case "no-store":
				c.NoStore = true
			case "max-age", "s-maxage":
				n, err := strconv.ParseUint(strings.Trim(arg, `"`), 10, 64)
				if err != nil && !errors.Is(err, strconv.ErrRange) {
					return Validation(http.StatusBadRequest, "Cache-Control: max-age must be a whole number of seconds, got %q", arg)
				}
				switch {
				case n == 0 && err == nil:
					c.NoCache = true
				case c.MaxAge == 0:
					// Larger than the cache keeps anything is any age (RFC 9111 caps a
					// too-large delta-seconds rather than refusing it).
					c.MaxAge = float64(min(n, completions.MaxCacheSeconds))
				}
			}
		}
	}
	req.Cache = &c
	return nil
}

// setCacheHeaders tells the client how the response cache took part in its answer:
// X-Switchyard-Cache (hit, miss or bypass), X-Switchyard-Cache-Key and, for a hit, Age;
// a semantic hit (found by meaning) also X-Switchyard-Cache-Similarity, its cosine
// similarity to the request the answer was made for.
func setCacheHeaders(w http.ResponseWriter, c *completions.CacheStatus) {
	if c == nil {
		return
	}
	h := w.Header()
	h.Set("X-Switchyard-Cache", c.Result)
	if c.Key != "" {
		h.Set("X-Switchyard-Cache-Key", c.Key)
	}
	if c.Result == completions.CacheHit {
		h.Set("Age", strconv.FormatInt(c.AgeSeconds, 10))
		if c.Semantic {
			h.Set("X-Switchyard-Cache-Similarity", strconv.FormatFloat(c.Similarity, 'f', -1, 64))
		}
	}
}

// cachePurge is the answer of DELETE /api/v1/cache.
type cachePurge struct {
	// Deleted is how many cache entries were deleted: answers, embeddings inputs and the
	// semantic cache's vectors (one per answer found by meaning) alike.
	Deleted int `json:"deleted" jsonschema:"description=How many cache entries were deleted: answers and embeddings inputs and the semantic cache's vectors (one per answer kept by meaning)"`
}

// cacheDeletion is the answer of DELETE /api/v1/cache/{key}.
type cacheDeletion struct {
	Key     string `json:"key"`
	Deleted bool   `json:"deleted"`
}

// cacheRoutes registers the response cache's management: a key purges its own cached
// answers (all, or one namespace's) or one of them by the X-Switchyard-Cache-Key it was
// answered with. Scoped keys (virtual, job) are refused: they share their issuer's answers.
func (s *Server) cacheRoutes(g *completions.Gateway) {
	tags := []string{"Completions"}
	s.Handle(Route{Method: "DELETE", Path: "/api/v1/cache", Summary: "Delete this key's cached answers (serve --cache): all or one namespace's",
		Tags: tags, Response: cachePurge{},
		Query: []QueryParam{{Name: "namespace", Description: "only the answers asked for with this cache namespace (empty: those asked without one)"}}},
		func(w http.ResponseWriter, r *http.Request) error {
			var ns *string
			if q := r.URL.Query(); q.Has("namespace") {
				v := q.Get("namespace")
				ns = &v
			}
			n, err := g.PurgeCache(r.Context(), owner(r), ns)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, cachePurge{Deleted: n})
			return nil
		})
	s.Handle(Route{Method: "DELETE", Path: "/api/v1/cache/{key}", Summary: "Delete one cached answer of this key by the X-Switchyard-Cache-Key it was answered with",
		Tags: tags, Response: cacheDeletion{}, Errors: map[int]string{404: "this key has no cached answer under that key"}},
		func(w http.ResponseWriter, r *http.Request) error {
			key := r.PathValue("key")
			if err := g.DeleteCached(r.Context(), owner(r), key); err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, cacheDeletion{Key: key, Deleted: true})
			return nil
		})
}
