package server

import (
	"strings"
	"testing"
)

// A Cache-Control max-age above a year (valid HTTP, at most 2^31) is refused with a message
// naming cache.s-maxage, a body field the client never sent, instead of the header.
func TestReview12aCacheControlMaxAgeAboveAYearNamesTheHeader(t *testing.T) {
	base, _, _ := cachingServer(t)
	resp, b := do2(t, "POST", base+"/v1/chat/completions", testKey, `{"model":"up/ok","messages":[{"role":"user","content":"x"}]}`,
		map[string]string{"Cache-Control": "max-age=40000000"})
	if resp.StatusCode == 200 {
		return // accepted (clamped): fine
	}
	if !strings.Contains(string(b), "Cache-Control") {
		t.Fatalf("max-age=40000000: %d %s; want it accepted or a message naming the Cache-Control header", resp.StatusCode, b)
	}
}

// RFC 9111 §1.2.2: a delta-seconds above 2^31 is taken as 2^31, not refused.
func TestReview12aCacheControlHugeMaxAgeIsNotRefused(t *testing.T) {
	base, _, _ := cachingServer(t)
	resp, b := do2(t, "POST", base+"/v1/chat/completions", testKey, `{"model":"up/ok","messages":[{"role":"user","content":"x"}]}`,
		map[string]string{"Cache-Control": "max-age=4294967296"})
	if resp.StatusCode != 200 {
		t.Fatalf("max-age=4294967296: %d %s; RFC 9111 takes it as 2^31", resp.StatusCode, b)
	}
}
