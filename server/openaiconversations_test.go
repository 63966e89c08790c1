package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// TestOpenAIConversationsOverHTTP: a conversation created with an item, answered twice by
// /v1/responses naming it (its id, then {"id": …}, streamed), reaches the upstream whole
// and gains each request's and answer's items; its items list, page, read, add and delete
// as OpenAI's do; its metadata is replaced; another key and a virtual key of the same
// issuer see none of it; previous_response_id with it is refused; deleted, it is gone.
func TestOpenAIConversationsOverHTTP(t *testing.T) {
	hs, s, up := completionsServer(t)
	base := hs.URL + "/v1/conversations"
	resp, b := do2(t, "POST", base, testKey, `{"items":[{"type":"message","role":"user","content":"My name is Ada."}],"metadata":{"topic":"names"}}`, nil)
	var conv struct {
		ID       string            `json:"id"`
		Object   string            `json:"object"`
		Metadata map[string]string `json:"metadata"`
	}
	if err := json.Unmarshal(b, &conv); err != nil || resp.StatusCode != 200 || !strings.HasPrefix(conv.ID, "conv_") || conv.Object != "conversation" || conv.Metadata["topic"] != "names" {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	resp, b = do2(t, "POST", hs.URL+"/v1/responses", testKey, `{"model":"up/ok","conversation":"`+conv.ID+`","input":"What is my name?"}`, nil)
	o := responseOf(t, b)
	if resp.StatusCode != 200 || o["conversation"].(map[string]any)["id"] != conv.ID {
		t.Fatalf("first answer: %d %s", resp.StatusCode, b)
	}
	if got := up.last(); len(got) != 2 || got[0]["content"] != "My name is Ada." || got[1]["content"] != "What is my name?" {
		t.Fatalf("upstream got %v", got)
	}
	resp, b = do2(t, "POST", hs.URL+"/v1/responses", testKey, `{"model":"up/ok","conversation":{"id":"`+conv.ID+`"},"input":"Thanks.","stream":true,"store":false}`, nil)
	if resp.StatusCode != 200 || len(up.last()) != 4 {
		t.Fatalf("second answer: %d %s; upstream got %v", resp.StatusCode, b, up.last())
	}

	// Five items now, newest first by default; two a page in order asc.
	resp, b = do2(t, "GET", base+"/"+conv.ID+"/items", testKey, "", nil)
	var page responseItemList
	if err := json.Unmarshal(b, &page); err != nil || resp.StatusCode != 200 || len(page.Data) != 5 || page.Data[0].Role != "assistant" || page.HasMore {
		t.Fatalf("items: %d %s", resp.StatusCode, b)
	}
	var texts []string
	for after := ""; ; {
		q := "?order=asc&limit=2"
		if after != "" {
			q += "&after=" + after
		}
		_, b := do2(t, "GET", base+"/"+conv.ID+"/items"+q, testKey, "", nil)
		var p responseItemList
		json.Unmarshal(b, &p)
		for _, it := range p.Data {
			texts = append(texts, it.Content.Parts[0].Text)
		}
		if !p.HasMore {
			break
		}
		after = *p.LastID
	}
	if strings.Join(texts, "|") != "My name is Ada.|What is my name?|Hello from ok|Thanks.|Hello from ok" {
		t.Errorf("items oldest first: %q", texts)
	}

	// Add two, read one, delete it.
	resp, b = do2(t, "POST", base+"/"+conv.ID+"/items", testKey, `{"items":[{"type":"message","role":"user","content":"one"},{"type":"message","role":"user","content":"two"}]}`, nil)
	var added responseItemList
	if err := json.Unmarshal(b, &added); err != nil || resp.StatusCode != 200 || len(added.Data) != 2 || added.Data[0].ID == "" {
		t.Fatalf("add items: %d %s", resp.StatusCode, b)
	}
	one := added.Data[0].ID
	if resp, b := do2(t, "GET", base+"/"+conv.ID+"/items/"+one, testKey, "", nil); resp.StatusCode != 200 || !strings.Contains(string(b), `"text":"one"`) {
		t.Fatalf("get item: %d %s", resp.StatusCode, b)
	}
	if resp, b := do2(t, "DELETE", base+"/"+conv.ID+"/items/"+one, testKey, "", nil); resp.StatusCode != 200 || !strings.Contains(string(b), conv.ID) {
		t.Fatalf("delete item: %d %s", resp.StatusCode, b)
	}
	resp, b = do2(t, "GET", base+"/"+conv.ID+"/items/"+one, testKey, "", nil)
	wantOpenAIError(t, "deleted item", resp, b, 404, "invalid_request_error", "not_found")
	resp, b = do2(t, "POST", base+"/"+conv.ID+"/items", testKey, `{"items":[`+strings.Repeat(`{"role":"user","content":"x"},`, 20)+`{"role":"user","content":"x"}]}`, nil)
	wantOpenAIError(t, "21 items", resp, b, 400, "invalid_request_error", "")

	// Metadata replaced.
	if resp, b := do2(t, "POST", base+"/"+conv.ID, testKey, `{"metadata":{"topic":"greetings"}}`, nil); resp.StatusCode != 200 || !strings.Contains(string(b), `"topic":"greetings"`) {
		t.Fatalf("update: %d %s", resp.StatusCode, b)
	}

	// Another key, and a virtual key of the same issuer: not theirs.
	vk := issue(t, s, `{"name":"app"}`)
	for _, key := range []string{completionsOtherKey, vk.Key} {
		resp, b := do2(t, "GET", base+"/"+conv.ID+"/items", key, "", nil)
		wantOpenAIError(t, "another key's items", resp, b, 404, "invalid_request_error", "not_found")
		resp, b = do2(t, "POST", hs.URL+"/v1/responses", key, `{"model":"up/ok","conversation":"`+conv.ID+`","input":"hi"}`, nil)
		if e := wantOpenAIError(t, "another key's conversation", resp, b, 400, "invalid_request_error", ""); e.Param == nil || *e.Param != "conversation" {
			t.Errorf("param %v", e.Param)
		}
	}
	resp, b = do2(t, "POST", hs.URL+"/v1/responses", testKey, `{"model":"up/ok","conversation":"`+conv.ID+`","previous_response_id":"resp_x","input":"hi"}`, nil)
	wantOpenAIError(t, "conversation with previous_response_id", resp, b, 400, "invalid_request_error", "")

	// Deleted: gone, items too.
	if resp, b := do2(t, "DELETE", base+"/"+conv.ID, testKey, "", nil); resp.StatusCode != 200 || !strings.Contains(string(b), `"object":"conversation.deleted"`) {
		t.Fatalf("delete: %d %s", resp.StatusCode, b)
	}
	resp, b = do2(t, "GET", base+"/"+conv.ID, testKey, "", nil)
	wantOpenAIError(t, "deleted conversation", resp, b, 404, "invalid_request_error", "not_found")
	if entries, _ := s.Store().List(t.Context(), store.OpenAIConversationItems, store.ListOptions{}); len(entries) != 0 {
		t.Errorf("%d items left after the conversation was deleted", len(entries))
	}
}
