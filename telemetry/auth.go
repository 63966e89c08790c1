package telemetry

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// bearerMatches reports whether r carries Authorization: Bearer token, compared in
// constant time.
func bearerMatches(r *http.Request, token string) bool {
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}
