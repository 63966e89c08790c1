package server

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// nativeLogprobsBody is a native completions request for model with extra members.
func nativeLogprobsBody(model, extra string) string {
	b := `{"messages":[{"role":"user","content":[{"type":"text","text":"Is it?"}]}],"models":["` + model + `"]`
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

// TestNativeCompletionsLogprobs: /api/v1/completions takes logprobs and top_logprobs (an
// extension) and answers the tokens' log probabilities in OpenAI's choices[].logprobs
// shape, whole and streamed (each text chunk its own tokens, the final event all of them);
// unasked, no logprobs member and nothing asked upstream.
func TestNativeCompletionsLogprobs(t *testing.T) {
	hs, up, _ := logprobsServer(t, false)
	resp, b := post(t, hs.URL+"/api/v1/completions", testKey, nativeLogprobsBody("oa/gpt-4o-mini", `"logprobs":true,"top_logprobs":2`))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if body := up.last(); body["logprobs"] != true || body["top_logprobs"] != 2.0 {
		t.Fatalf("upstream got logprobs %v top_logprobs %v", body["logprobs"], body["top_logprobs"])
	}
	var answer struct {
		Text     string                     `json:"text"`
		Logprobs map[string]json.RawMessage `json:"logprobs"`
	}
	if err := json.Unmarshal(b, &answer); err != nil || answer.Text != "Yes!" {
		t.Fatalf("%s: %v", b, err)
	}
	if string(answer.Logprobs["refusal"]) != "null" {
		t.Fatalf("logprobs.refusal %s, want null (OpenAI's shape)", answer.Logprobs["refusal"])
	}
	var content []providers.TokenLogprob
	if err := json.Unmarshal(answer.Logprobs["content"], &content); err != nil {
		t.Fatalf("logprobs.content %s: %v", answer.Logprobs["content"], err)
	}
	want := []providers.TokenLogprob{
		{Token: "Yes", Logprob: -0.25, Bytes: []int{89, 101, 115}, TopLogprobs: []providers.TopLogprob{{Token: "Yes", Logprob: -0.25, Bytes: []int{89, 101, 115}}, {Token: "No", Logprob: -1.5, Bytes: []int{78, 111}}}},
		{Token: "!", Logprob: -0.75, Bytes: []int{33}, TopLogprobs: []providers.TopLogprob{{Token: "!", Logprob: -0.75, Bytes: []int{33}}, {Token: ".", Logprob: -0.9, Bytes: []int{46}}}},
	}
	if !reflect.DeepEqual(content, want) {
		t.Fatalf("logprobs.content %+v\nwant %+v", content, want)
	}

	// Streamed: each text chunk carries the tokens of its text, the final event all of them.
	resp, b = post(t, hs.URL+"/api/v1/completions", testKey, nativeLogprobsBody("oa/gpt-4o-mini", `"logprobs":true,"top_logprobs":1,"stream":true`))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d %s", resp.StatusCode, b)
	}
	var text strings.Builder
	var tokens []string
	var final map[string]any
	for _, ev := range sseData(t, b) {
		if ev["final"] == true {
			final = ev
			continue
		}
		piece, _ := ev["text"].(string)
		text.WriteString(piece)
		lp, _ := ev["logprobs"].(map[string]any)
		if lp == nil {
			t.Fatalf("a streamed chunk without logprobs: %v", ev)
		}
		var spelled strings.Builder
		for _, c := range lp["content"].([]any) {
			tok := c.(map[string]any)
			spelled.WriteString(tok["token"].(string))
			tokens = append(tokens, tok["token"].(string))
			if top, _ := tok["top_logprobs"].([]any); len(top) != 1 {
				t.Fatalf("token %v: top_logprobs %v, want 1", tok["token"], tok["top_logprobs"])
			}
		}
		if spelled.String() != piece {
			t.Fatalf("a chunk's tokens spell %q, its text is %q", spelled.String(), piece)
		}
	}
	if text.String() != "Yes!" || strings.Join(tokens, "|") != "Yes|!" {
		t.Fatalf("stream: text %q tokens %q", text.String(), tokens)
	}
	finalLp, _ := final["logprobs"].(map[string]any)
	if all, _ := finalLp["content"].([]any); len(all) != 2 {
		t.Fatalf("final event's logprobs %v, want the answer's 2 tokens", final["logprobs"])
	}

	// Not asked: no logprobs member, nothing asked upstream, whole or streamed.
	for _, extra := range []string{"", `"stream":true`} {
		resp, b = post(t, hs.URL+"/api/v1/completions", testKey, nativeLogprobsBody("oa/gpt-4o-mini", extra))
		if resp.StatusCode != http.StatusOK || strings.Contains(string(b), `"logprobs"`) {
			t.Fatalf("not asked (%s): %d %s", extra, resp.StatusCode, b)
		}
		if _, ok := up.last()["logprobs"]; ok {
			t.Fatalf("logprobs sent upstream unasked: %v", up.last())
		}
	}
}

// TestNativeCompletionsLogprobsRefused: a native request asking for log probabilities of
// models that give none is the native API's validation error (422) naming logprobs and
// calls no model; bad top_logprobs is one naming top_logprobs; a list whose other model
// gives them is answered by that one.
func TestNativeCompletionsLogprobsRefused(t *testing.T) {
	hs, up, anthropicCalls := logprobsServer(t, false)
	for _, tc := range []struct{ model, extra, field string }{
		{"an/claude-sonnet-4-20250514", `"logprobs":true`, "logprobs"},
		{"openai/o3-mini", `"logprobs":true`, "logprobs"},
		{"oa/gpt-4o-mini", `"logprobs":true,"top_logprobs":21`, "top_logprobs"},
		{"oa/gpt-4o-mini", `"top_logprobs":2`, "top_logprobs"},
		{"oa/gpt-4o-mini", `"logprobs":"yes"`, "logprobs"},
	} {
		resp, b := post(t, hs.URL+"/api/v1/completions", testKey, nativeLogprobsBody(tc.model, tc.extra))
		var e struct{ Error, Message string }
		if resp.StatusCode != http.StatusUnprocessableEntity || json.Unmarshal(b, &e) != nil || e.Error != "Validation Error" || !strings.Contains(e.Message, tc.field) {
			t.Errorf("%s %s: %d %s, want a 422 Validation Error naming %s", tc.model, tc.extra, resp.StatusCode, b, tc.field)
		}
	}
	if up.calls() != 0 || anthropicCalls.Load() != 0 {
		t.Fatalf("refused requests called models: openai-format %d, anthropic %d", up.calls(), anthropicCalls.Load())
	}
	resp, b := post(t, hs.URL+"/api/v1/completions", testKey,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"Is it?"}]}],"models":["an/claude-sonnet-4-20250514"],"fallback_models":["oa/gpt-4o-mini"],"logprobs":true}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"token":"Yes"`) || anthropicCalls.Load() != 0 {
		t.Fatalf("a fallback that gives them: %d %s (anthropic called %d times)", resp.StatusCode, b, anthropicCalls.Load())
	}
}

// TestOpenAPIDocumentsNativeLogprobs: the OpenAPI document lists the native request's
// logprobs and top_logprobs (0 to 20) and the answer's logprobs.
func TestOpenAPIDocumentsNativeLogprobs(t *testing.T) {
	hs, _, _ := logprobsServer(t, false)
	resp, err := http.Get(hs.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	post := at(doc, "paths", "/api/v1/completions", "post")
	body := at(post, "requestBody", "content", "application/json", "schema", "properties")
	if typ := at(body, "logprobs", "type"); typ != "boolean" {
		t.Errorf("request logprobs type %v, want boolean", typ)
	}
	if lo, hi := at(body, "top_logprobs", "minimum"), at(body, "top_logprobs", "maximum"); lo != 0.0 || hi != 20.0 {
		t.Errorf("request top_logprobs bounds %v-%v, want 0-20", lo, hi)
	}
	answer := at(post, "responses", "200", "content", "application/json", "schema", "properties")
	if at(answer, "logprobs") == nil {
		t.Errorf("the answer's logprobs is not documented: %v", answer)
	}
}
