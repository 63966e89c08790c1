package server

import (
	"strings"
	"testing"
)

func review12dTagCounts(t *testing.T, url string) map[string]float64 {
	t.Helper()
	code, m := getJSON(t, url+"/api/v1/usage/series?by=tag&window=1h", testKey)
	if code != 200 {
		t.Fatalf("series: %d %v", code, m)
	}
	counts := map[string]float64{}
	for _, s := range m["models"].([]any) {
		sm := s.(map[string]any)
		counts[sm["tag"].(string)] = sm["total"].(map[string]any)["requests"].(float64)
	}
	return counts
}

// Repeated tags (in the native body, in metadata.tags' comma-separated string, or the
// body's and a header's) reach the usage log as given: one request counts twice under
// its tag, and its spend twice in ?by=tag.
func TestReview12dRepeatedTagsCountOnce(t *testing.T) {
	hs := usageServer(t)
	for _, c := range []struct{ path, body string }{
		{"/api/v1/completions", `{"models":["up/ok"],"tags":["team:a","team:a"],"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}]}`},
		{"/v1/chat/completions", `{"model":"up/ok","metadata":{"tags":"team:b, team:b"},"messages":[{"role":"user","content":"b"}]}`},
	} {
		if resp, b := do2(t, "POST", hs.URL+c.path, testKey, c.body, nil); resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", c.path, resp.StatusCode, b)
		}
	}
	if got := review12dTagCounts(t, hs.URL); got["team:a"] != 1 || got["team:b"] != 1 {
		t.Fatalf("per-tag requests %v, want team:a 1 and team:b 1 (one request each)", got)
	}
	code, m := getJSON(t, hs.URL+"/api/v1/usage/requests?request_tag=team:a", testKey)
	if data := m["data"].([]any); code != 200 || len(data) != 1 || len(data[0].(map[string]any)["tags"].([]any)) != 1 {
		t.Fatalf("the request's tags %v, want [team:a]", m)
	}
}

// OpenAI's metadata is up to 16 string pairs, values up to 512 characters; "tags" is a
// legitimate key there. A request a real OpenAI endpoint takes must not be refused because
// its metadata's "tags" value is free text rather than LiteLLM tag syntax.
func TestReview12dOpenAIMetadataTagsFreeTextIsNotRefused(t *testing.T) {
	hs := usageServer(t)
	for _, md := range []string{
		`{"tags":"customer support"}`,
		`{"tags":"` + strings.Repeat("x", 100) + `"}`,
		`{"tags":"a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q"}`,
	} {
		body := `{"model":"up/ok","metadata":` + md + `,"messages":[{"role":"user","content":"hi"}]}`
		if resp, b := do2(t, "POST", hs.URL+"/v1/chat/completions", testKey, body, nil); resp.StatusCode != 200 {
			t.Errorf("OpenAI-valid metadata %s: %d %s", md, resp.StatusCode, b)
		}
		body = `{"model":"up/ok","metadata":` + md + `,"input":"hi"}`
		if resp, b := do2(t, "POST", hs.URL+"/v1/responses", testKey, body, nil); resp.StatusCode != 200 {
			t.Errorf("Responses, OpenAI-valid metadata %s: %d %s", md, resp.StatusCode, b)
		}
	}
}
