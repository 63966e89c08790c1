package server

import (
	"fmt"
	"strings"
	"testing"
)

// TestRequestTagsForCostAttribution: tags from every surface's way of giving them — the
// native body's tags, OpenAI/LiteLLM metadata.tags (an array or a comma-separated
// string), the X-Switchyard-Tags and x-litellm-tags headers, embeddings' tags — reach the
// usage log's requests and its per-tag series; bad tags are refused naming the field.
func TestRequestTagsForCostAttribution(t *testing.T) {
	hs := usageServer(t)
	send := func(path, body string, header map[string]string) {
		t.Helper()
		resp, b := do2(t, "POST", hs.URL+path, testKey, body, header)
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", path, body, resp.StatusCode, b)
		}
	}
	send("/api/v1/completions", `{"models":["up/ok"],"tags":["feature:summary"],"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}]}`, nil)
	send("/v1/chat/completions", `{"model":"up/ok","metadata":{"tags":["feature:summary","team:search"]},"messages":[{"role":"user","content":"b"}]}`, nil)
	send("/v1/chat/completions", `{"model":"up/ok","metadata":{"tags":"team:search","purpose":"ignored"},"messages":[{"role":"user","content":"c"}]}`,
		map[string]string{"X-Switchyard-Tags": "env:prod, team:search"})
	send("/v1/messages", `{"model":"up/ok","max_tokens":50,"metadata":{"user_id":"u1","tags":["feature:summary"]},"messages":[{"role":"user","content":"d"}]}`, nil)
	send("/v1/responses", `{"model":"up/ok","input":"e"}`, map[string]string{"x-litellm-tags": "feature:draft"})

	code, m := getJSON(t, hs.URL+"/api/v1/usage/requests?request_tag=team:search", testKey)
	data, _ := m["data"].([]any)
	if code != 200 || len(data) != 2 {
		t.Fatalf("requests tagged team:search: %d %v", code, m)
	}
	if tags := data[0].(map[string]any)["tags"]; len(tags.([]any)) != 2 || tags.([]any)[0] != "team:search" || tags.([]any)[1] != "env:prod" {
		t.Fatalf("the newest one's tags %v, want [team:search env:prod] (body first, then the header's, once each)", tags)
	}
	code, m = getJSON(t, hs.URL+"/api/v1/usage/series?by=tag&window=1h", testKey)
	counts := map[string]float64{}
	for _, s := range m["models"].([]any) {
		sm := s.(map[string]any)
		counts[sm["tag"].(string)] = sm["total"].(map[string]any)["requests"].(float64)
		if sm["total"].(map[string]any)["prompt_tokens"].(float64) <= 0 {
			t.Errorf("tag %v has no tokens", sm["tag"])
		}
	}
	if code != 200 || counts["feature:summary"] != 3 || counts["team:search"] != 2 || counts["env:prod"] != 1 || counts["feature:draft"] != 1 || len(counts) != 4 {
		t.Fatalf("per-tag totals %v", counts)
	}
	if code, _ := getJSON(t, hs.URL+"/api/v1/usage/series?by=colour", testKey); code != 422 {
		t.Fatalf("by=colour: %d", code)
	}

	for body, field := range map[string]string{
		`{"model":"up/ok","metadata":{"tags":[1]},"messages":[{"role":"user","content":"x"}]}`:                                                           "metadata.tags",
		`{"model":"up/ok","metadata":{"tags":["has space"]},"messages":[{"role":"user","content":"x"}]}`:                                                 "metadata.tags",
		`{"model":"up/ok","metadata":"label","messages":[{"role":"user","content":"x"}]}`:                                                                "metadata",
		`{"model":"up/ok","metadata":{"tags":["` + strings.Repeat("t,", 0) + strings.Repeat("x", 65) + `"]},"messages":[{"role":"user","content":"x"}]}`: "metadata.tags",
	} {
		resp, b := do2(t, "POST", hs.URL+"/v1/chat/completions", testKey, body, nil)
		if resp.StatusCode != 400 || !strings.Contains(string(b), `"param":"`+field+`"`) {
			t.Errorf("%s: %d %s, want 400 naming %s", body, resp.StatusCode, b, field)
		}
	}
	var many []string
	for i := range 17 {
		many = append(many, fmt.Sprint("t", i))
	}
	if resp, b := do2(t, "POST", hs.URL+"/v1/chat/completions", testKey, `{"model":"up/ok","messages":[{"role":"user","content":"x"}]}`,
		map[string]string{"X-Switchyard-Tags": strings.Join(many, ",")}); resp.StatusCode != 400 || !strings.Contains(string(b), "at most 16 tags") {
		t.Errorf("17 tags in the header: %d %s", resp.StatusCode, b)
	}
	if resp, b := do2(t, "POST", hs.URL+"/api/v1/completions", testKey, `{"models":["up/ok"],"tags":["a b"],"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}]}`, nil); resp.StatusCode != 422 || !strings.Contains(string(b), "tags") {
		t.Errorf("native bad tag: %d %s", resp.StatusCode, b)
	}
}

// TestLiteLLMBodyTags: LiteLLM's request-body "tags" on chat completions (an array, or one
// comma-separated string as its tag-routing docs send through the OpenAI SDK's extra_body)
// become the request's tags beside metadata.tags; bad ones are refused naming tags.
func TestLiteLLMBodyTags(t *testing.T) {
	hs := usageServer(t)
	for _, body := range []string{
		`{"model":"up/ok","tags":["feature:rag","env:dev"],"metadata":{"tags":["team:a"]},"messages":[{"role":"user","content":"a"}]}`,
		`{"model":"up/ok","tags":"feature:rag, env:dev","messages":[{"role":"user","content":"b"}]}`,
	} {
		resp, b := do2(t, "POST", hs.URL+"/v1/chat/completions", testKey, body, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, b)
		}
	}
	code, m := getJSON(t, hs.URL+"/api/v1/usage/requests?request_tag=feature:rag", testKey)
	data, _ := m["data"].([]any)
	if code != 200 || len(data) != 2 {
		t.Fatalf("requests tagged feature:rag: %d %v", code, m)
	}
	if tags := fmt.Sprint(data[1].(map[string]any)["tags"]); tags != "[team:a feature:rag env:dev]" {
		t.Errorf("the first request's tags %s, want metadata's then the body's", tags)
	}
	if tags := fmt.Sprint(data[0].(map[string]any)["tags"]); tags != "[feature:rag env:dev]" {
		t.Errorf("the comma-separated string's tags %s", tags)
	}
	var many []string
	for i := range 17 {
		many = append(many, fmt.Sprintf("%q", fmt.Sprint("t", i)))
	}
	for _, body := range []string{
		`{"model":"up/ok","tags":3,"messages":[{"role":"user","content":"x"}]}`,
		`{"model":"up/ok","tags":["has space"],"messages":[{"role":"user","content":"x"}]}`,
		`{"model":"up/ok","tags":"ok,no way","messages":[{"role":"user","content":"x"}]}`,
		`{"model":"up/ok","tags":[` + strings.Join(many, ",") + `],"messages":[{"role":"user","content":"x"}]}`,
	} {
		resp, b := do2(t, "POST", hs.URL+"/v1/chat/completions", testKey, body, nil)
		if resp.StatusCode != 400 || !strings.Contains(string(b), `"param":"tags"`) {
			t.Errorf("%s: %d %s, want 400 naming tags", body, resp.StatusCode, b)
		}
	}
}
