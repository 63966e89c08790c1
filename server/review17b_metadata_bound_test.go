package server

import (
	"net/http"
	"strings"
	"testing"
)

// WRONG: the 16 KiB metadata bound measures json.Marshal's output, which HTML-escapes <, >
// and & as \u003c (6 bytes each). A 4 KB metadata value of "<" and "&" characters (e.g. an
// HTML snippet or a URL query) is refused as "at most 16384 bytes of JSON, got 24…" although
// the JSON sent is a quarter of the bound. Fix: measure with an encoder with
// SetEscapeHTML(false) (or the raw bytes received).
func TestReview17bMetadataBoundCountsHTMLEscapes(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	body := `{"metadata":{"note":"` + strings.Repeat("<&", 2000) + `"}}`
	if r := do(t, s, "POST", "/key/generate", testKey, body); r.status != http.StatusOK {
		t.Fatalf("%d-byte body refused: %d %.300s", len(body), r.status, r.raw)
	}
}
