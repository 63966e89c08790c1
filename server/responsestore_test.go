package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// responseOf decodes a /v1/responses answer: whole, or the response of a stream's
// response.completed event.
func responseOf(t *testing.T, b []byte) map[string]any {
	t.Helper()
	if strings.HasPrefix(string(b), "event:") || strings.HasPrefix(string(b), "data:") {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(rest, `"type":"response.completed"`) {
				var ev struct {
					Response map[string]any `json:"response"`
				}
				if err := json.Unmarshal([]byte(rest), &ev); err != nil {
					t.Fatal(err)
				}
				return ev.Response
			}
		}
		t.Fatalf("no response.completed in %s", b)
	}
	var o map[string]any
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return o
}

// TestStoredResponsesOverHTTP: a conversation continued by previous_response_id, whole and
// streamed, reaches the upstream whole; the stored answer reads back as it was given, its
// input items list newest first with pages; another key sees none of it; store: false keeps
// nothing; a deleted answer can be neither read nor continued; background cancel is refused.
func TestStoredResponsesOverHTTP(t *testing.T) {
	hs, _, up := completionsServer(t)
	url := hs.URL + "/v1/responses"
	resp, b := do2(t, "POST", url, testKey, `{"model":"up/ok","instructions":"Be terse.","input":"My name is Ada."}`, nil)
	first := responseOf(t, b)
	if resp.StatusCode != 200 || first["store"] != true || first["previous_response_id"] != nil {
		t.Fatalf("first: %d %s", resp.StatusCode, b)
	}
	id1 := first["id"].(string)
	resp, b = do2(t, "POST", url, testKey, `{"model":"up/ok","previous_response_id":"`+id1+`","input":"What is my name?"}`, nil)
	second := responseOf(t, b)
	if resp.StatusCode != 200 || second["previous_response_id"] != id1 {
		t.Fatalf("second: %d %s", resp.StatusCode, b)
	}
	got := up.last()
	if len(got) != 3 || got[0]["role"] != "user" || got[0]["content"] != "My name is Ada." || got[1]["role"] != "assistant" ||
		got[1]["content"] != "Hello from ok" || got[2]["content"] != "What is my name?" {
		t.Fatalf("the upstream got %v, want the first turn (without its instructions) and the question", got)
	}
	id2 := second["id"].(string)
	resp, b = do2(t, "POST", url, testKey, `{"model":"up/ok","previous_response_id":"`+id2+`","input":"Thanks.","stream":true}`, nil)
	third := responseOf(t, b)
	if resp.StatusCode != 200 || third["store"] != true || len(up.last()) != 5 {
		t.Fatalf("streamed third: %d %s; upstream got %v", resp.StatusCode, b, up.last())
	}
	id3 := third["id"].(string)

	// Read back, as given.
	resp, b = do2(t, "GET", url+"/"+id2, testKey, "", nil)
	if back := responseOf(t, b); resp.StatusCode != 200 || back["id"] != id2 || back["previous_response_id"] != id1 ||
		back["output"].([]any)[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"] != "Hello from ok" {
		t.Fatalf("GET %s: %d %s", id2, resp.StatusCode, b)
	}
	// Input items of the third: five, newest first; two a page.
	resp, b = do2(t, "GET", url+"/"+id3+"/input_items?limit=2", testKey, "", nil)
	var page responseItemList
	if err := json.Unmarshal(b, &page); err != nil || resp.StatusCode != 200 || len(page.Data) != 2 || !page.HasMore ||
		page.Data[0].Role != "user" || page.Data[0].Content.Parts[0].Text != "Thanks." || page.Data[1].Role != "assistant" {
		t.Fatalf("input items: %d %s", resp.StatusCode, b)
	}
	var texts []string
	for after := ""; ; {
		q := "?order=asc&limit=2"
		if after != "" {
			q += "&after=" + after
		}
		_, b := do2(t, "GET", url+"/"+id3+"/input_items"+q, testKey, "", nil)
		var p responseItemList
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		for _, it := range p.Data {
			texts = append(texts, it.Content.Parts[0].Text)
		}
		if !p.HasMore {
			break
		}
		after = *p.LastID
	}
	if strings.Join(texts, "|") != "My name is Ada.|Hello from ok|What is my name?|Hello from ok|Thanks." {
		t.Errorf("input items oldest first: %q", texts)
	}
	resp, b = do2(t, "GET", url+"/"+id3+"/input_items?limit=101", testKey, "", nil)
	wantOpenAIError(t, "limit 101", resp, b, 400, "invalid_request_error", "")

	// Another key: none of it.
	resp, b = do2(t, "GET", url+"/"+id2, completionsOtherKey, "", nil)
	wantOpenAIError(t, "another key's GET", resp, b, 404, "invalid_request_error", "not_found")
	resp, b = do2(t, "POST", url, completionsOtherKey, `{"model":"up/ok","previous_response_id":"`+id2+`","input":"hi"}`, nil)
	if e := wantOpenAIError(t, "another key continuing", resp, b, 400, "invalid_request_error", "previous_response_not_found"); e.Param == nil || *e.Param != "previous_response_id" {
		t.Errorf("param %v", e.Param)
	}

	// store: false keeps nothing.
	resp, b = do2(t, "POST", url, testKey, `{"model":"up/ok","input":"secret","store":false}`, nil)
	unkept := responseOf(t, b)
	if unkept["store"] != false {
		t.Fatalf("store false answered %s", b)
	}
	resp, b = do2(t, "GET", url+"/"+unkept["id"].(string), testKey, "", nil)
	wantOpenAIError(t, "GET of a store false answer", resp, b, 404, "invalid_request_error", "not_found")

	// Cancel: a synchronous answer cannot be.
	resp, b = do2(t, "POST", url+"/"+id3+"/cancel", testKey, "", nil)
	wantOpenAIError(t, "cancel", resp, b, 400, "invalid_request_error", "")

	// Delete the middle answer: it is gone, and the third can no longer be continued.
	resp, b = do2(t, "DELETE", url+"/"+id2, testKey, "", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"deleted":true`) || !strings.Contains(string(b), `"object":"response"`) {
		t.Fatalf("DELETE: %d %s", resp.StatusCode, b)
	}
	resp, b = do2(t, "DELETE", url+"/"+id2, testKey, "", nil)
	wantOpenAIError(t, "second DELETE", resp, b, 404, "invalid_request_error", "not_found")
	resp, b = do2(t, "POST", url, testKey, `{"model":"up/ok","previous_response_id":"`+id3+`","input":"again"}`, nil)
	if e := wantOpenAIError(t, "continuing past a deleted answer", resp, b, 400, "invalid_request_error", "previous_response_not_found"); !strings.Contains(e.Message, id2) {
		t.Errorf("message %q does not name the deleted answer", e.Message)
	}
}

// TestOpenAPIErrorEnvelopes: the OpenAPI document gives each route's failures in the
// envelope the route answers them in — OpenAI's on /v1 (the stored-response routes
// included), Anthropic's on /v1/messages, Switchyard's on /api/v1 — and documents the
// statuses of /v1/responses, /v1/embeddings and /v1/messages.
func TestOpenAPIErrorEnvelopes(t *testing.T) {
	hs, _, _ := completionsServer(t)
	_, b := do2(t, "GET", hs.URL+"/api/v1/openapi.json", "", "", nil)
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Content map[string]struct {
					Schema map[string]any `json:"schema"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	envelope := func(path, method, status string) string {
		r, ok := doc.Paths[path][method].Responses[status]
		if !ok {
			return "(no " + status + ")"
		}
		schema := r.Content["application/json"].Schema
		if ref, ok := schema["$ref"].(string); ok { // one envelope's component
			schema = doc.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
		}
		props, _ := schema["properties"].(map[string]any)
		errProp, _ := props["error"].(map[string]any)
		inner, _ := errProp["properties"].(map[string]any)
		switch {
		case errProp["type"] == "string":
			return "uniform"
		case inner["param"] != nil && inner["code"] != nil:
			return "openai"
		case props["type"] != nil && inner["type"] != nil && inner["message"] != nil:
			return "anthropic"
		}
		return "unknown"
	}
	for _, c := range []struct{ path, method, status, want string }{
		{"/v1/responses", "post", "400", "openai"},
		{"/v1/responses/{response_id}", "get", "404", "openai"},
		{"/v1/responses/{response_id}/input_items", "get", "404", "openai"},
		{"/v1/embeddings", "post", "400", "openai"},
		{"/v1/messages", "post", "400", "anthropic"},
		{"/v1/messages", "post", "529", "anthropic"},
		{"/api/v1/completions", "post", "422", "uniform"},
	} {
		if got := envelope(c.path, c.method, c.status); got != c.want {
			t.Errorf("%s %s %s: %s envelope, want %s", c.method, c.path, c.status, got, c.want)
		}
	}
}

// TestIssuerReachesItsKeysAnswers: the key that issued a virtual key reaches the virtual
// key's stored answers and conversations by id (and may continue them), while the virtual
// key reaches none of its issuer's.
func TestIssuerReachesItsKeysAnswers(t *testing.T) {
	hs, s, _ := completionsServer(t)
	vk := issue(t, s, `{"name":"app"}`)
	_, b := do2(t, "POST", hs.URL+"/v1/responses", vk.Key, `{"model":"up/ok","input":"from the app"}`, nil)
	id := responseOf(t, b)["id"].(string)
	if resp, b := do2(t, "GET", hs.URL+"/v1/responses/"+id, testKey, "", nil); resp.StatusCode != 200 {
		t.Fatalf("the issuer reading its virtual key's answer: %d %s", resp.StatusCode, b)
	}
	if resp, b := do2(t, "POST", hs.URL+"/v1/responses", testKey, `{"model":"up/ok","input":"and on","previous_response_id":"`+id+`"}`, nil); resp.StatusCode != 200 {
		t.Fatalf("the issuer continuing it: %d %s", resp.StatusCode, b)
	}
	_, b = do2(t, "POST", hs.URL+"/v1/conversations", vk.Key, `{}`, nil)
	var conv struct{ ID string }
	json.Unmarshal(b, &conv)
	if resp, b := do2(t, "GET", hs.URL+"/v1/conversations/"+conv.ID, testKey, "", nil); resp.StatusCode != 200 {
		t.Fatalf("the issuer reading its virtual key's conversation: %d %s", resp.StatusCode, b)
	}
	_, b = do2(t, "POST", hs.URL+"/v1/responses", testKey, `{"model":"up/ok","input":"the issuer's"}`, nil)
	mine := responseOf(t, b)["id"].(string)
	resp, b := do2(t, "GET", hs.URL+"/v1/responses/"+mine, vk.Key, "", nil)
	wantOpenAIError(t, "the virtual key reading its issuer's answer", resp, b, 404, "invalid_request_error", "not_found")
}
