package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// review30rTags is n tags named prefix0, prefix1, … as a JSON list.
func review30rTags(prefix string, n int) string {
	tags := make([]string, n)
	for i := range tags {
		tags[i] = fmt.Sprintf("%q", fmt.Sprintf("%s%d", prefix, i))
	}
	return "[" + strings.Join(tags, ",") + "]"
}

// TestReview30rTeamAndKeyTagsOverTheLimit: a key's tags and its team's together are
// every request of the key's tags, of which a request may carry at most 16: a key or a
// team whose tags would make more is refused when it is made or changed (naming
// metadata.tags), rather than every request of the key then being refused (a 400 naming
// X-Switchyard-Tags, a header the request never sent).
func TestReview30rTeamAndKeyTagsOverTheLimit(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	litellmTeamNew(t, s, `{"team_id":"big","metadata":{"tags":`+review30rTags("team", 9)+`}}`)

	// A key of 8 tags in a team of 9: 17 together.
	r := do(t, s, "POST", "/key/generate", testKey, `{"team_id":"big","tags":`+review30rTags("key", 8)+`}`)
	if r.status == http.StatusOK {
		k := litellmGenerate(t, s, `{"team_id":"big","tags":`+review30rTags("key", 8)+`}`)
		st, b := tagChat(t, hs.URL, k.Key, "", "")
		t.Fatalf("a key of 8 tags in a team of 9 was made; its request without tags: %d %s", st, b)
	}
	if r.status >= 500 || !strings.Contains(r.raw, "metadata.tags") {
		t.Fatalf("a key of 8 tags in a team of 9: %d %s; want a 4xx naming metadata.tags", r.status, r.raw)
	}
	// Natively too, and moved into the team.
	r = do(t, s, "POST", "/api/v1/keys", testKey, `{"name":"n","team_id":"big","tags":`+review30rTags("key", 8)+`}`)
	if r.status < 400 || r.status >= 500 {
		t.Fatalf("native key of 8 tags in a team of 9: %d %s", r.status, r.raw)
	}
	k := litellmGenerate(t, s, `{"tags":`+review30rTags("key", 8)+`}`)
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+k.Key+`","team_id":"big"}`); r.status < 400 || r.status >= 500 {
		t.Fatalf("a key of 8 tags moved into a team of 9: %d %s", r.status, r.raw)
	}

	// A team whose new tags would make a key of it go over.
	litellmTeamNew(t, s, `{"team_id":"small","metadata":{"tags":["t"]}}`)
	k = litellmGenerate(t, s, `{"team_id":"small","tags":`+review30rTags("key", 8)+`}`)
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"small","metadata":{"tags":`+review30rTags("team", 9)+`}}`); r.status < 400 || r.status >= 500 || !strings.Contains(r.raw, "metadata.tags") {
		t.Fatalf("/team/update to 9 tags with a key of 8: %d %s; want a 4xx naming metadata.tags", r.status, r.raw)
	}
	if st, b := tagChat(t, hs.URL, k.Key, "", ""); st != http.StatusOK {
		t.Fatalf("the key's request after the refused /team/update: %d %s", st, b)
	}
	// Within the limit it is taken.
	if r := do(t, s, "POST", "/team/update", testKey, `{"team_id":"small","metadata":{"tags":`+review30rTags("team", 8)+`}}`); r.status != http.StatusOK {
		t.Fatalf("/team/update to 8 tags with a key of 8: %d %s", r.status, r.raw)
	}
	if st, b := tagChat(t, hs.URL, k.Key, "", ""); st != http.StatusOK {
		t.Fatalf("the key's request with 16 tags: %d %s", st, b)
	}
}
