package server

import (
	"strings"
	"testing"
)

// TestReview27aPassThroughEncodedKeyParam: the caller's key sent as ?k%65y= (which the
// server reads as key=) is not forwarded to Google.
func TestReview27aPassThroughEncodedKeyParam(t *testing.T) {
	hs, s, up := passThroughServer(t)
	vk := issue(t, s, `{"name":"narrow","models":["gemini/gemini-2.0-flash"]}`)
	resp, b := sendPassThrough(t, "POST", hs.URL+"/gemini/v1beta/models/gemini-2.0-flash:generateContent?alt=json&k%65y="+vk.Key, `{}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if q := up.last().query; strings.Contains(q, vk.Key) || q != "alt=json" {
		t.Errorf("upstream query %q carries the caller's key or lost alt", q)
	}
}
