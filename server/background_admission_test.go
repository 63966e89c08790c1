package server

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
)

// TestBackgroundRefusedAsSynchronous: a background request that a synchronous one would be
// refused for before any upstream call (a spent max_requests, a model the key may not call,
// an unknown provider) is refused at create time with the synchronous request's status and
// error; no response id is handed out.
func TestBackgroundRefusedAsSynchronous(t *testing.T) {
	hs, s := r11bServer(t, nil, &fakeOpenAIUpstream{}, []string{testKey})
	spent := issue(t, s, `{"max_requests":1}`)
	if resp, b := post(t, hs.URL+"/v1/responses", spent.Key, `{"model":"openai/ok","input":"hi"}`); resp.StatusCode != 200 {
		t.Fatalf("first request: %d %s", resp.StatusCode, b)
	}
	narrow := issue(t, s, `{"models":["openai/other"]}`)
	for name, c := range map[string]struct{ key, model string }{
		"max_requests used up": {spent.Key, "openai/ok"},
		"model not allowed":    {narrow.Key, "openai/ok"},
		"unknown provider":     {testKey, "nosuch/m"},
	} {
		sync, sb := post(t, hs.URL+"/v1/responses", c.key, `{"model":"`+c.model+`","input":"x"}`)
		bg, bb := post(t, hs.URL+"/v1/responses", c.key, `{"model":"`+c.model+`","input":"x","background":true}`)
		var se, be struct {
			Error map[string]any `json:"error"`
		}
		json.Unmarshal(sb, &se)
		json.Unmarshal(bb, &be)
		if sync.StatusCode < 400 || bg.StatusCode != sync.StatusCode || be.Error["message"] != se.Error["message"] || be.Error["param"] != se.Error["param"] {
			t.Errorf("%s: synchronous %d %s, background %d %s", name, sync.StatusCode, sb, bg.StatusCode, bb)
		}
	}
}

// TestBackgroundFailedNotContinued: previous_response_id naming a background response that
// ended cancelled (as one that failed) is a 400 naming previous_response_id.
func TestBackgroundFailedNotContinued(t *testing.T) {
	up := &slowUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	hs := backgroundReplica(t, newTestStore(t), ups)
	_, b := do2(t, "POST", hs.URL+"/v1/responses", testKey, `{"model":"up/hang","input":"Think.","background":true}`, nil)
	id := responseOf(t, b)["id"].(string)
	if resp, b := do2(t, "POST", hs.URL+"/v1/responses/"+id+"/cancel", testKey, "", nil); resp.StatusCode != 200 || responseOf(t, b)["status"] != "cancelled" {
		t.Fatalf("cancel: %d %s", resp.StatusCode, b)
	}
	resp, b := do2(t, "POST", hs.URL+"/v1/responses", testKey, `{"model":"up/slow","input":"Again.","previous_response_id":"`+id+`"}`, nil)
	var e struct {
		Error map[string]any `json:"error"`
	}
	json.Unmarshal(b, &e)
	if resp.StatusCode != 400 || e.Error["param"] != "previous_response_id" {
		t.Fatalf("continuing a cancelled response: %d %s", resp.StatusCode, b)
	}
}
