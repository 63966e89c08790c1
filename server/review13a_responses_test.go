package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/optimizer"
	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview13aScopedKeysReachOwnersStoredResponses: the stored-response routes are
// ScopedKeys routes isolated by Principal.Owner only, so a sandboxed job key and a virtual
// key — which may not read or delete the issuing key's conversations (403 on
// /api/v1/conversations) — read, list and delete the issuing key's stored answers, and a
// virtual key those of its sibling keys.
func TestReview13aScopedKeysReachOwnersStoredResponses(t *testing.T) {
	hs, s, _ := completionsServer(t)
	url := hs.URL + "/v1/responses"
	vkA := issue(t, s, `{"name":"app A"}`)
	vkB := issue(t, s, `{"name":"app B"}`)
	job, err := jobKeyMinter{auth: s.Auth()}.MintKey(context.Background(), optimizer.KeyGrant{
		Owner: ownerOf(sha256.Sum256([]byte(testKey))), JobID: "opt_1", Model: "up/ok", MaxCalls: 5, MaxTokens: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer job.Revoke()
	// The conversation routes refuse these keys.
	if resp, _ := do2(t, "GET", hs.URL+"/api/v1/conversations", job.Key, "", nil); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("job key on /api/v1/conversations: %d", resp.StatusCode)
	}
	if resp, _ := do2(t, "GET", hs.URL+"/api/v1/conversations", vkA.Key, "", nil); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("virtual key on /api/v1/conversations: %d", resp.StatusCode)
	}

	_, b := do2(t, "POST", url, testKey, `{"model":"up/ok","input":"the owner's private question"}`, nil)
	ownerID := responseOf(t, b)["id"].(string)
	_, b = do2(t, "POST", url, vkB.Key, `{"model":"up/ok","input":"app B's private question"}`, nil)
	siblingID := responseOf(t, b)["id"].(string)

	for _, c := range []struct{ who, key, id string }{
		{"job key, the owner's answer", job.Key, ownerID},
		{"virtual key A, the owner's answer", vkA.Key, ownerID},
		{"virtual key A, sibling B's answer", vkA.Key, siblingID},
	} {
		if resp, b := do2(t, "GET", url+"/"+c.id+"/input_items", c.key, "", nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: GET input_items %d %s", c.who, resp.StatusCode, b)
		}
	}
	if resp, b := do2(t, "DELETE", url+"/"+siblingID, vkA.Key, "", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("virtual key A deleting sibling B's answer: %d %s", resp.StatusCode, b)
	}
}

// callIDUpstream answers every chat request with a call of get_weather whose id is always
// "functions.get_weather:0" (Kimi K2's style, on vLLM, Moonshot, Groq…), or with text once
// the last message is a tool result.
func callIDUpstream(t *testing.T) string {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		w.Header().Set("Content-Type", "application/json")
		if n := len(body.Messages); n > 0 && body.Messages[n-1].Role == "tool" {
			io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Done."},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`)
			return
		}
		io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"functions.get_weather:0","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`)
	}))
	t.Cleanup(up.Close)
	return up.URL
}

// TestReview13aInputItemsPagesLoopOnReusedIDs: in a tool loop continued by
// previous_response_id on an upstream that reuses call ids, the chain's items share ids
// ("fc_functions.get_weather:0" once per turn). input_items pages by the first item with
// the after id, so following last_id pages (as the SDKs' auto-pagination does) never ends.
func TestReview13aInputItemsPagesLoopOnReusedIDs(t *testing.T) {
	upURL := callIDUpstream(t)
	hs, _, _ := completionsServerWith(t, func(o *completions.Options) {
		o.Providers = providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "kimi", BaseURL: upURL + "/v1", APIKey: "sk"}))
	})
	url := hs.URL + "/v1/responses"
	tools := `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}}]`
	prev := ""
	for turn := 0; turn < 3; turn++ {
		body := `{"model":"kimi/k2",` + tools + `,"input":"Weather in Paris?"}`
		if prev != "" {
			body = `{"model":"kimi/k2",` + tools + `,"previous_response_id":"` + prev + `","input":[{"type":"function_call_output","call_id":"functions.get_weather:0","output":"sunny"}]}`
		}
		resp, b := do2(t, "POST", url, testKey, body, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("turn %d: %d %s", turn, resp.StatusCode, b)
		}
		prev = responseOf(t, b)["id"].(string)
		if turn == 0 { // the next turn answers the call, then asks again
			resp, b = do2(t, "POST", url, testKey, `{"model":"kimi/k2",`+tools+`,"previous_response_id":"`+prev+`","input":[{"type":"function_call_output","call_id":"functions.get_weather:0","output":"sunny"},{"role":"user","content":"And again?"}]}`, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("turn %d: %d %s", turn, resp.StatusCode, b)
			}
			prev = responseOf(t, b)["id"].(string)
			resp, b = do2(t, "POST", url, testKey, `{"model":"kimi/k2",`+tools+`,"previous_response_id":"`+prev+`","input":"Weather in Paris, once more?"}`, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("turn %d: %d %s", turn, resp.StatusCode, b)
			}
			prev = responseOf(t, b)["id"].(string)
		}
	}
	_, b := do2(t, "GET", url+"/"+prev+"/input_items?order=asc&limit=100", testKey, "", nil)
	var all responseItemList
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	for _, it := range all.Data {
		ids[it.ID]++
	}
	total := len(all.Data)
	seen, pages := 0, 0
	for after := ""; ; pages++ {
		if pages > total { // more pages than items: the listing went round
			t.Fatalf("input_items pagination (limit 1) does not end: %d pages for %d items; ids %v", pages, total, ids)
		}
		q := "?order=asc&limit=1"
		if after != "" {
			q += "&after=" + after
		}
		resp, b := do2(t, "GET", url+"/"+prev+"/input_items"+q, testKey, "", nil)
		var p responseItemList
		if err := json.Unmarshal(b, &p); err != nil || resp.StatusCode != 200 {
			t.Fatalf("page %d: %d %s", pages, resp.StatusCode, b)
		}
		seen += len(p.Data)
		if !p.HasMore {
			break
		}
		after = *p.LastID
	}
	if seen != total {
		t.Errorf("paged %d items, want %d", seen, total)
	}
}

// TestReview13aInputItemsAfterMiddleDelete: once a middle answer is deleted, GET input_items
// of a later (still stored, still readable) answer is a 400 previous_response_not_found
// naming a previous_response_id parameter this GET does not have.
func TestReview13aInputItemsAfterMiddleDelete(t *testing.T) {
	hs, _, _ := completionsServer(t)
	url := hs.URL + "/v1/responses"
	_, b := do2(t, "POST", url, testKey, `{"model":"up/ok","input":"1"}`, nil)
	id1 := responseOf(t, b)["id"].(string)
	_, b = do2(t, "POST", url, testKey, `{"model":"up/ok","input":"2","previous_response_id":"`+id1+`"}`, nil)
	id2 := responseOf(t, b)["id"].(string)
	_, b = do2(t, "POST", url, testKey, `{"model":"up/ok","input":"3","previous_response_id":"`+id2+`"}`, nil)
	id3 := responseOf(t, b)["id"].(string)
	if resp, b := do2(t, "DELETE", url+"/"+id2, testKey, "", nil); resp.StatusCode != 200 {
		t.Fatalf("DELETE: %d %s", resp.StatusCode, b)
	}
	if resp, b := do2(t, "GET", url+"/"+id3, testKey, "", nil); resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", id3, resp.StatusCode, b)
	}
	resp, b := do2(t, "GET", url+"/"+id3+"/input_items", testKey, "", nil)
	if resp.StatusCode == http.StatusBadRequest || strings.Contains(string(b), "previous_response_not_found") {
		t.Errorf("GET input_items of a stored answer after a middle delete: %d %s", resp.StatusCode, b)
	}
}

// TestReview13aFailedStreamSaysStored: a stream that fails ends with response.failed whose
// response says "store": true, but nothing is stored (GET is a 404).
func TestReview13aFailedStreamSaysStored(t *testing.T) {
	hs, _, _ := completionsServer(t)
	url := hs.URL + "/v1/responses"
	_, b := do2(t, "POST", url, testKey, `{"model":"up/cut","input":"x","stream":true}`, nil)
	var failed map[string]any
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(rest, `"type":"response.failed"`) {
			var ev struct {
				Response map[string]any `json:"response"`
			}
			json.Unmarshal([]byte(rest), &ev)
			failed = ev.Response
		}
	}
	if failed == nil {
		t.Fatalf("no response.failed in %s", b)
	}
	resp, _ := do2(t, "GET", url+"/"+failed["id"].(string), testKey, "", nil)
	if stored := resp.StatusCode == 200; failed["store"] != stored {
		t.Errorf("response.failed says store %v; GET of it is %d", failed["store"], resp.StatusCode)
	}
}

// TestReview13aHistoryBypassesBodyLimit: the request body limit is what bounds the memory
// one request makes the gateway hold and send upstream. With previous_response_id a tiny
// request loads the whole chain (up to 4,096 stored answers, each up to the body limit):
// here five turns each under a 64 KiB limit, then a 40-byte request makes the gateway send
// about 200 KiB upstream. Nothing bounds the history's size.
func TestReview13aHistoryBypassesBodyLimit(t *testing.T) {
	up := &fakeOpenAIUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: ups.URL + "/v1", APIKey: "sk-up"})),
		Prices: providers.DefaultCatalog(), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	const limit = 64 << 10
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}, MaxBodyBytes: limit}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	url := hs.URL + "/v1/responses"
	big := strings.Repeat("a", 40<<10)
	// (Mended after review: a conversation may outgrow one request — eight bodies' worth,
	// historyBodies — but not without end: beyond, a 400 naming previous_response_id, and
	// never more than the bound sent upstream.)
	prev, refused := "", false
	for i := 0; i < 20 && !refused; i++ {
		body := `{"model":"up/ok","input":"` + big + `"`
		if prev != "" {
			body += `,"previous_response_id":"` + prev + `"`
		}
		resp, b := do2(t, "POST", url, testKey, body+"}", nil)
		switch {
		case resp.StatusCode == 400 && prev != "":
			if e := wantOpenAIError(t, "over the bound", resp, b, 400, "invalid_request_error", ""); e.Param == nil || *e.Param != "previous_response_id" {
				t.Errorf("param %v", e.Param)
			}
			refused = true
			continue
		case resp.StatusCode != 200:
			t.Fatalf("turn %d: %d %s", i, resp.StatusCode, b)
		}
		sent := 0
		for _, m := range up.last() {
			sent += len(m["content"])
		}
		if sent > (historyBodies+1)*limit { // the conversation's bound, and the request's own body
			t.Errorf("turn %d sent %d bytes upstream, over %d", i, sent, (historyBodies+1)*limit)
		}
		prev = responseOf(t, b)["id"].(string)
	}
	if !refused {
		t.Errorf("20 turns of 40 KiB under a %d-byte body bound were never refused", limit)
	}
	b := ""
	_ = b
}
